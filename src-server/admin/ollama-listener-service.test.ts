import assert from "node:assert/strict";
import net from "node:net";
import { describe, it } from "node:test";
import { freePort } from "../../test/helpers/llama-server.js";
import type { Principal } from "../domain/scopes.js";
import { ApiKeyStore } from "../store/api-key-store.js";
import { OllamaListenerStore } from "../store/ollama-listener-store.js";
import { openSqlDatabase } from "../store/sql-database.js";
import { WorkspaceStore } from "../store/workspace-store.js";
import { OllamaListenerService, type BoundListener } from "./ollama-listener-service.js";

const admin: Principal = { kind: "api_key", workspaceId: "ws_a", keyId: "key_admin", keyName: "admin", scopes: new Set(["inference", "rag.read", "keys.manage", "workspaces.manage"]) };

/** A real TCP listener on 127.0.0.1, standing in for the listener's HTTP app. */
async function bindTcp(port: number): Promise<BoundListener> {
  const server = net.createServer((socket) => socket.destroy());
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen({ port, host: "127.0.0.1", exclusive: true }, () => resolve());
  });
  return { close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

const accepting = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = net.connect({ host: "127.0.0.1", port });
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });

async function setup(options: { unavailable?: string } = {}) {
  const clock = { now: 1_800_000_000 };
  const db = await openSqlDatabase({ kind: "sqlite", dataDir: ":memory:" });
  await new WorkspaceStore(db).insert({ id: "ws_a", name: "A", createdAt: 1 });
  const keys = new ApiKeyStore(db);
  const insert = (id: string, extra: { expiresAt?: number | null } = {}) =>
    keys.insert({ id, workspaceId: "ws_a", name: id, prefix: `psk-${id}`, secretSha256: `sha-${id}`, scopes: ["inference"], createdAt: 1, expiresAt: extra.expiresAt ?? null, revokedAt: null, lastUsedAt: null });
  await insert("key_1");
  await insert("key_2");
  const warnings: string[] = [];
  const make = () => new OllamaListenerService({ settings: new OllamaListenerStore(db), keys, workspaces: new WorkspaceStore(db), bind: bindTcp, unavailable: options.unavailable ?? null, onWarning: (m) => warnings.push(m), now: () => clock.now });
  return { db, keys, insert, make, warnings, clock };
}

describe("OllamaListenerService", () => {
  it("runs opens one at a time: of two asked together, the later wins and the earlier port is let go", async () => {
    const { db, make } = await setup();
    const service = make();
    const [a, b] = [await freePort(), await freePort()];
    const [first, second] = await Promise.all([service.open(admin, { keyId: "key_1", port: a }), service.open(admin, { keyId: "key_2", port: b })]);
    assert.equal(first.state.setting?.port, a);
    assert.deepEqual([second.previous?.port, second.state.setting?.port, second.state.key?.id], [a, b, "key_2"]);
    assert.deepEqual([await accepting(a), await accepting(b)], [false, true]);
    assert.equal((await service.principal()).keyId, "key_2");
    await service.stop();
    assert.equal(await accepting(b), false);
    await db.close();
  });

  it("keeps its setting through a stop, refuses to open once stopped, and opens again in the next process", async () => {
    const { db, make } = await setup();
    const port = await freePort();
    const first = make();
    await first.open(admin, { keyId: "key_1", port });
    await first.stop();
    await first.stop();
    await assert.rejects(first.open(admin, { keyId: "key_1", port }), { code: "server_shutting_down" });
    assert.equal(await accepting(port), false);
    const next = make();
    assert.equal((await next.state(admin)).listening, false, "nothing opens before restore");
    await next.restore();
    const state = await next.state(admin);
    assert.deepEqual([state.status, state.listening, state.setting?.port], ["open", true, port]);
    await next.stop();
    await db.close();
  });

  it("resolves the bound key on every request: an expired key is refused, a used one touched", async () => {
    const { db, keys, insert, make, clock } = await setup();
    const service = make();
    await assert.rejects(service.principal(), { code: "listener_closed" });
    await insert("key_soon", { expiresAt: clock.now + 60 });
    const port = await freePort();
    await service.open(admin, { keyId: "key_soon", port });
    const principal = await service.principal();
    assert.deepEqual([principal.kind, principal.keyId, principal.workspaceId, [...principal.scopes]], ["api_key", "key_soon", "ws_a", ["inference"]]);
    assert.equal((await keys.get("key_soon"))!.lastUsedAt, clock.now, "last_used_at moves as for a key in a header");
    clock.now += 60;
    await assert.rejects(service.principal(), { code: "expired_api_key" });
    const state = await service.state(admin);
    assert.deepEqual([state.status, state.problem?.code], ["broken", "expired_api_key"]);
    await assert.rejects(service.open(admin, { keyId: "key_soon", port }), { code: "expired_api_key" });
    await service.close(admin);
    await db.close();
  });

  it("is unavailable where replicas share a database: it opens nothing, even a setting left from before", async () => {
    const { db, make, warnings } = await setup({ unavailable: "replicas sharing a database have no Ollama listener" });
    const port = await freePort();
    await new OllamaListenerStore(db).put({ keyId: "key_1", port, openedBy: "cli", openedAt: 1 });
    const service = make();
    await service.restore();
    assert.equal(await accepting(port), false);
    assert.match(warnings.join("\n"), /stays closed/);
    const state = await service.state(admin);
    assert.deepEqual([state.status, state.problem?.code], ["unavailable", "not_available"]);
    await assert.rejects(service.open(admin, { keyId: "key_1", port }), { code: "not_available" });
    await db.close();
  });

  it("needs workspaces.manage for everything an administrator does", async () => {
    const { db, make } = await setup();
    const service = make();
    const user: Principal = { ...admin, scopes: new Set(["inference", "keys.manage"]) };
    await assert.rejects(service.state(user), { code: "insufficient_scope" });
    await assert.rejects(service.open(user, { keyId: "key_1" }), { code: "insufficient_scope" });
    await assert.rejects(service.close(user), { code: "insufficient_scope" });
    await db.close();
  });
});
