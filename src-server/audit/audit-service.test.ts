import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, describe, it } from "node:test";
import type { Principal } from "../domain/scopes.js";
import { AuditSigner, ChainVerifier, entryHash } from "../security/audit-chain.js";
import { AuditStore } from "../store/audit-store.js";
import { openDatabase } from "../store/database.js";
import { AuditService, type AuditEvent } from "./audit-service.js";

const admin: Principal = { workspaceId: "ws_a", keyId: "key_a", keyName: "a", scopes: new Set(["audit.read", "workspaces.manage"]) };
const event = (n: number, workspaceId: string | null = "ws_a"): AuditEvent => ({ type: "chat.completion", workspaceId, actor: "api_key:key_a", outcome: "success", requestId: `req_${n}`, data: { n, prompt_sha256: "0".repeat(64) } });

describe("AuditService", () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), "pustaka-audit-unit-"));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const open = (db = openDatabase(dir)) => ({ db, audit: new AuditService(new AuditStore(db), AuditSigner.open(path.join(dir, "keys", "audit.pem")), { headsFile: path.join(dir, "heads.json"), flushMs: 5 }) });

  it("batches queued entries into one write, in order, each chained to the one before", async () => {
    const { db, audit } = open();
    for (let n = 1; n <= 300; n++) audit.record(event(n));
    assert.equal(audit.written, 0, "nothing is written on the caller's path");
    await new Promise((resolve) => setTimeout(resolve, 30));
    assert.equal(audit.written, 300);
    const page = audit.list(admin, { limit: 1000, order: "asc" });
    assert.deepEqual(
      page.data.map((e) => e.data.n),
      Array.from({ length: 300 }, (_, i) => i + 1),
    );
    const verifier = new ChainVerifier("ws_a");
    for (const entry of page.data) verifier.add(entry);
    assert.deepEqual(verifier.problems, []);
    assert.equal(page.data[0]!.hash, entryHash(page.data[0]!));
    audit.close();
    db.close();
  });

  it("interleaves safely with a second writer on the same database (the CLI beside the server)", async () => {
    const a = open();
    const b = open();
    a.audit.record(event(1000));
    b.audit.recordNow(event(2000));
    a.audit.recordNow(event(3000, null));
    const result = await a.audit.verify(admin);
    assert.equal(result.valid, true, JSON.stringify(result.problems));
    assert.deepEqual(result.chains.map((c) => c.chain).sort(), ["instance", "ws_a"]);
    assert.equal(result.chains.find((c) => c.chain === "ws_a")!.head_seq, 302);
    a.audit.close();
    b.audit.close();
    a.db.close();
    b.db.close();
  });

  it("flushes on close, and refuses to read without audit.read or another workspace's chain", async () => {
    const { db, audit } = open();
    audit.record(event(4000));
    audit.close();
    const again = open(db);
    const last = again.audit.list(admin, { limit: 1, order: "desc" }).data[0]!;
    assert.equal(last.data.n, 4000);
    assert.throws(() => again.audit.list({ ...admin, scopes: new Set(["inference"]) }, { limit: 1, order: "desc" }), /audit\.read/);
    assert.throws(() => again.audit.list({ ...admin, scopes: new Set(["audit.read"]) }, { chain: "ws_b", limit: 1, order: "desc" }), /no audit chain 'ws_b'/);
    // A forged heads file (claims a longer chain, signature broken) is itself reported.
    const heads = JSON.parse(readFileSync(path.join(dir, "heads.json"), "utf8"));
    heads.heads[0].seq += 10;
    writeFileSync(path.join(dir, "heads.json"), JSON.stringify(heads));
    const result = await again.audit.verify(admin);
    assert.equal(result.valid, false);
    assert.equal(result.problems[0]!.reason, "bad_signature");
    db.close();
  });

  it("coalesces repeated events into one counted entry, written on close at the latest, in a chain that verifies", async () => {
    const { db, audit } = open();
    const before = audit.stats().entries;
    const failed = (n: number): AuditEvent => ({ type: "auth.failed", workspaceId: null, actor: "anonymous", outcome: "failure", requestId: `req_f${n}`, data: { reason: "invalid_api_key", remote: "192.0.2.7" } });
    for (let n = 0; n < 500; n++) audit.recordCoalesced("auth.failed|192.0.2.7|invalid_api_key", failed(n));
    audit.flush();
    assert.equal(audit.stats().entries - before, 1, "only the first is written before the window closes");
    audit.close();
    const again = open(db);
    const entries = again.audit.list(admin, { chain: "instance", type: "auth.failed", limit: 100, order: "asc" }).data.filter((e) => e.data.remote === "192.0.2.7");
    assert.equal(entries.length, 2);
    assert.equal(entries[1]!.data.count, 499);
    assert.equal(entries[1]!.request_id, "req_f499");
    const result = await again.audit.verify(admin);
    assert.equal(result.valid, true, JSON.stringify(result.problems));
    again.audit.close();
    db.close();
  });
});
