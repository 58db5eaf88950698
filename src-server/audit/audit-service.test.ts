import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, describe, it } from "node:test";
import type { Principal } from "../domain/scopes.js";
import { AuditSigner, ChainVerifier, entryHash } from "../security/audit-chain.js";
import { AuditStore, type AuditDraft, type ChainHead } from "../store/audit-store.js";
import { openSqlDatabase, type SqlDatabase } from "../store/sql-database.js";
import { AuditService, type AuditEvent } from "./audit-service.js";

const admin: Principal = { workspaceId: "ws_a", keyId: "key_a", keyName: "a", scopes: new Set(["audit.read", "workspaces.manage"]) };
const event = (n: number, workspaceId: string | null = "ws_a"): AuditEvent => ({ type: "chat.completion", workspaceId, actor: "api_key:key_a", outcome: "success", requestId: `req_${n}`, data: { n, prompt_sha256: "0".repeat(64) } });

describe("AuditService", () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), "pustaka-audit-unit-"));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const open = async (db?: SqlDatabase) => {
    const store = db ?? (await openSqlDatabase({ kind: "sqlite", dataDir: dir }));
    return { db: store, audit: await AuditService.open(new AuditStore(store), AuditSigner.open(path.join(dir, "keys", "audit.pem")), { headsFile: path.join(dir, "heads.json"), flushMs: 5 }) };
  };

  it("batches queued entries into one write, in order, each chained to the one before", async () => {
    const { db, audit } = await open();
    for (let n = 1; n <= 300; n++) audit.record(event(n));
    assert.equal(audit.written, 0, "nothing is written on the caller's path");
    await new Promise((resolve) => setTimeout(resolve, 30));
    assert.equal(audit.written, 300);
    const page = await audit.list(admin, { limit: 1000, order: "asc" });
    assert.deepEqual(
      page.data.map((e) => e.data.n),
      Array.from({ length: 300 }, (_, i) => i + 1),
    );
    const verifier = new ChainVerifier("ws_a");
    for (const entry of page.data) verifier.add(entry);
    assert.deepEqual(verifier.problems, []);
    assert.equal(page.data[0]!.hash, entryHash(page.data[0]!));
    await audit.close();
    await db.close();
  });

  it("interleaves safely with a second writer on the same database (the CLI beside the server)", async () => {
    const a = await open();
    const b = await open();
    a.audit.record(event(1000));
    await b.audit.recordNow(event(2000));
    await a.audit.recordNow(event(3000, null));
    const result = await a.audit.verify(admin);
    assert.equal(result.valid, true, JSON.stringify(result.problems));
    assert.deepEqual(result.chains.map((c) => c.chain).sort(), ["instance", "ws_a"]);
    assert.equal(result.chains.find((c) => c.chain === "ws_a")!.head_seq, 302);
    await a.audit.close();
    await b.audit.close();
    await a.db.close();
    await b.db.close();
  });

  it("flushes on close, and refuses to read without audit.read or another workspace's chain", async () => {
    const { db, audit } = await open();
    audit.record(event(4000));
    await audit.close();
    const again = await open(db);
    const last = (await again.audit.list(admin, { limit: 1, order: "desc" })).data[0]!;
    assert.equal(last.data.n, 4000);
    await assert.rejects(again.audit.list({ ...admin, scopes: new Set(["inference"]) }, { limit: 1, order: "desc" }), /audit\.read/);
    await assert.rejects(again.audit.list({ ...admin, scopes: new Set(["audit.read"]) }, { chain: "ws_b", limit: 1, order: "desc" }), /no audit chain 'ws_b'/);
    // A forged heads file (claims a longer chain, signature broken) is itself reported.
    const heads = JSON.parse(readFileSync(path.join(dir, "heads.json"), "utf8"));
    heads.heads[0].seq += 10;
    writeFileSync(path.join(dir, "heads.json"), JSON.stringify(heads));
    const result = await again.audit.verify(admin);
    assert.equal(result.valid, false);
    assert.equal(result.problems[0]!.reason, "bad_signature");
    await db.close();
  });

  it("writes one transaction at a time, in the order entries were recorded, however many writes are asked for meanwhile", async () => {
    const store = await openSqlDatabase({ kind: "sqlite", dataDir: ":memory:" });
    const batches: number[] = [];
    let inFlight = 0;
    let maxInFlight = 0;
    class SlowStore extends AuditStore {
      override async append(drafts: readonly AuditDraft[], ...rest: [(draft: AuditDraft, seq: number, prevHash: string) => string, string]): Promise<ChainHead[]> {
        batches.push(drafts.length);
        maxInFlight = Math.max(maxInFlight, ++inFlight);
        try {
          await new Promise((resolve) => setTimeout(resolve, 10));
          return await super.append(drafts, ...rest);
        } finally {
          inFlight -= 1;
        }
      }
    }
    const audit = await AuditService.open(new SlowStore(store), AuditSigner.open(path.join(dir, "keys", "audit.pem")), { headsFile: path.join(dir, "heads-order.json"), flushMs: 1000, maxBatch: 16 });
    const writes: Promise<void>[] = [];
    for (let n = 1; n <= 60; n++) {
      if (n % 20 !== 0) {
        audit.record(event(n));
        continue;
      }
      writes.push(audit.recordNow(event(n)));
      // Let the write start before more is recorded.
      await new Promise((resolve) => setImmediate(resolve));
    }
    await Promise.all(writes);
    assert.equal(audit.written, 60, "every entry recorded before the last recordNow is written when it resolves");
    assert.equal(maxInFlight, 1, "never two writes at once");
    assert.deepEqual(batches, [16, 4, 16, 16, 8], "at most maxBatch per transaction; the writes asked for while one was under way are one write");
    const page = await audit.list(admin, { limit: 100, order: "asc" });
    assert.deepEqual(
      page.data.map((e) => e.data.n),
      Array.from({ length: 60 }, (_, i) => i + 1),
    );
    await audit.close();
    await store.close();
  });

  it("keeps a batch whose write failed queued, first, and writes it with the next one", async () => {
    const store = await openSqlDatabase({ kind: "sqlite", dataDir: ":memory:" });
    let failures = 1;
    class FlakyStore extends AuditStore {
      override append(drafts: readonly AuditDraft[], ...rest: [(draft: AuditDraft, seq: number, prevHash: string) => string, string]): Promise<ChainHead[]> {
        if (failures-- > 0) return Promise.reject(new Error("database unavailable"));
        return super.append(drafts, ...rest);
      }
    }
    const errors: unknown[] = [];
    const audit = await AuditService.open(new FlakyStore(store), AuditSigner.open(path.join(dir, "keys", "audit.pem")), { headsFile: path.join(dir, "heads-flaky.json"), flushMs: 1000, onError: (e) => errors.push(e) });
    audit.record(event(1));
    await assert.rejects(audit.recordNow(event(2)), /database unavailable/);
    assert.equal(audit.written, 0);
    audit.record(event(3));
    await audit.recordNow(event(4));
    assert.deepEqual(
      (await audit.list(admin, { limit: 10, order: "asc" })).data.map((e) => e.data.n),
      [1, 2, 3, 4],
    );
    await audit.close();
    // After close an entry is written at once, without a timer.
    audit.record(event(5));
    await audit.flush();
    assert.equal(audit.written, 5);
    assert.deepEqual(errors, []);
    await store.close();
  });

  it("coalesces repeated events into one counted entry, written on close at the latest, in a chain that verifies", async () => {
    const { db, audit } = await open();
    const before = audit.stats().entries;
    const failed = (n: number): AuditEvent => ({ type: "auth.failed", workspaceId: null, actor: "anonymous", outcome: "failure", requestId: `req_f${n}`, data: { reason: "invalid_api_key", remote: "192.0.2.7" } });
    for (let n = 0; n < 500; n++) audit.recordCoalesced("auth.failed|192.0.2.7|invalid_api_key", failed(n));
    await audit.flush();
    assert.equal(audit.stats().entries - before, 1, "only the first is written before the window closes");
    await audit.close();
    const again = await open(db);
    const entries = (await again.audit.list(admin, { chain: "instance", type: "auth.failed", limit: 100, order: "asc" })).data.filter((e) => e.data.remote === "192.0.2.7");
    assert.equal(entries.length, 2);
    assert.equal(entries[1]!.data.count, 499);
    assert.equal(entries[1]!.request_id, "req_f499");
    const result = await again.audit.verify(admin);
    assert.equal(result.valid, true, JSON.stringify(result.problems));
    await again.audit.close();
    await db.close();
  });
});
