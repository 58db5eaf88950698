import assert from "node:assert/strict";
import { it } from "node:test";
import { describeBackends } from "../../test/helpers/store-backends.js";
import { SessionStore, type SessionRecord } from "./session-store.js";
import { openSqlDatabase, type SqlDatabase } from "./sql-database.js";
import { WorkspaceStore } from "./workspace-store.js";

const session = (id: string, overrides: Partial<SessionRecord> = {}): SessionRecord => ({
  id,
  workspaceId: "ws_default",
  secretSha256: `sha-${id}`,
  scopes: ["inference", "workspaces.manage"],
  userAgent: "Mozilla/5.0 (test)",
  createdAt: 1000,
  expiresAt: 2000,
  lastUsedAt: 1000,
  ...overrides,
});

describeBackends("SessionStore", (backend) => {
  const open = async (): Promise<{ db: SqlDatabase; sessions: SessionStore }> => {
    const db = await backend.open();
    await new WorkspaceStore(db).insert({ id: "ws_default", name: "Default", createdAt: 1 });
    return { db, sessions: new SessionStore(db) };
  };

  it("stores a session and finds it by the digest of its secret", async () => {
    const { sessions } = await open();
    const s = session("ses_1", { expiresAt: 1_800_000_000_000 });
    await sessions.insert(s);
    assert.deepEqual(await sessions.findByDigest("sha-ses_1"), s);
    assert.equal(await sessions.findByDigest("sha-none"), undefined);
    await assert.rejects(sessions.insert(session("ses_2", { secretSha256: "sha-ses_1" })), "a secret belongs to one session");
  });

  it("slides a live session's expiry forward, never backward, and never revives an expired one", async () => {
    const { sessions } = await open();
    await sessions.insert(session("ses_1"));
    assert.equal(await sessions.touch("ses_1", 1500, 5000), true);
    assert.deepEqual(await sessions.findByDigest("sha-ses_1"), session("ses_1", { lastUsedAt: 1500, expiresAt: 5000 }));
    assert.equal(await sessions.touch("ses_1", 1400, 4900), false, "a late touch changes nothing");
    assert.equal((await sessions.findByDigest("sha-ses_1"))?.expiresAt, 5000);
    assert.equal(await sessions.touch("ses_1", 5000, 9000), false, "expired at 5000: not revived");
    assert.equal((await sessions.findByDigest("sha-ses_1"))?.expiresAt, 5000);
    assert.equal(await sessions.touch("ses_missing", 1500, 5000), false);
  });

  it("deletes one session by digest, and sweeps those expired at a time (the boundary included)", async () => {
    const { sessions } = await open();
    await sessions.insert(session("ses_1", { expiresAt: 2000 }));
    await sessions.insert(session("ses_2", { expiresAt: 2001 }));
    await sessions.insert(session("ses_3", { expiresAt: 1999 }));
    await sessions.insert(session("ses_4", { expiresAt: 9000 }));
    assert.equal(await sessions.deleteByDigest("sha-ses_4"), true);
    assert.equal(await sessions.deleteByDigest("sha-ses_4"), false);
    assert.equal(await sessions.findByDigest("sha-ses_4"), undefined);
    assert.equal(await sessions.deleteExpired(2000), 2);
    assert.equal(await sessions.findByDigest("sha-ses_1"), undefined);
    assert.equal(await sessions.findByDigest("sha-ses_3"), undefined);
    assert.ok(await sessions.findByDigest("sha-ses_2"));
    assert.equal(await sessions.deleteExpired(2000), 0);
  });

  it("keeps every session touched during concurrent sweeps by several replicas, and deletes each expired one once", async () => {
    const { db: first, sessions } = await open();
    const others = backend.dialect === "postgres" ? await Promise.all([1, 2].map(() => openSqlDatabase({ kind: "postgres", url: backend.lastUrl! }))) : [first, first];
    try {
      const stores = [sessions, ...others.map((db) => new SessionStore(db))];
      const count = 60;
      for (let i = 0; i < count; i++) await sessions.insert(session(`ses_${i}`, { expiresAt: 2000, lastUsedAt: 1000 }));
      // Even sessions are used at 1999 (extended to 5599) while every replica sweeps at 2000, in any order.
      const touches: Promise<boolean>[] = [];
      const sweeps: Promise<number>[] = [];
      for (let i = 0; i < count; i++) {
        if (i % 2 === 0) touches.push(stores[i % 3]!.touch(`ses_${i}`, 1999, 5599));
        if (i % 10 === 0) sweeps.push(stores[(i + 1) % 3]!.deleteExpired(2000));
      }
      const [extended, deleted] = await Promise.all([Promise.all(touches), Promise.all(sweeps)]);
      // A touch that reports success must leave the session extended; one that lost the race to a sweep finds it gone.
      const survivors = extended.flatMap((ok, j) => (ok ? [`ses_${j * 2}`] : []));
      for (let j = 0; j < extended.length; j++) {
        const found = await sessions.findByDigest(`sha-ses_${j * 2}`);
        if (extended[j]) assert.equal(found?.expiresAt, 5599, `ses_${j * 2} was extended, so no sweep may delete it`);
        else assert.equal(found, undefined, `ses_${j * 2} was swept before its touch`);
      }
      const remaining = await first.db.selectFrom("sessions").select("id").execute();
      assert.deepEqual(remaining.map((r) => r.id).sort(), survivors.sort(), "every odd session was swept");
      assert.equal(deleted.reduce((a, b) => a + b, 0), count - survivors.length, "each expired session was counted by exactly one sweep");
      assert.equal(await sessions.deleteExpired(2000), 0);
    } finally {
      if (backend.dialect === "postgres") for (const db of others) await db.close();
    }
  });
});
