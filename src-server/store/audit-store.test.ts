import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { it } from "node:test";
import { sql } from "kysely";
import { describeBackends } from "../../test/helpers/store-backends.js";
import { AuditStore, chainLockKey, type AuditDraft, type AuditRow } from "./audit-store.js";
import { openSqlDatabase, type SqlDatabase } from "./sql-database.js";

const GENESIS = "0".repeat(64);
/** A stand-in for the service's entry hash: any function of the draft and its place will do. */
const seal = (d: AuditDraft, seq: number, prevHash: string) => createHash("sha256").update(`${prevHash}|${d.chain}|${seq}|${d.id}|${d.type}|${d.body}`).digest("hex");

let counter = 0;
const draft = (chain: string, over: Partial<AuditDraft> = {}): AuditDraft => {
  counter += 1;
  return { id: `aud_${counter}`, chain, atMs: 1_000 * counter, type: "chat.completion", actor: "api_key:key_a", outcome: "success", requestId: `req_${counter}`, body: JSON.stringify({ n: counter }), ...over };
};

/** Every row of a chain links to the one before, carries its seal, and the sequence has no gap. */
function assertChained(rows: AuditRow[]): void {
  let prev = GENESIS;
  for (const [i, row] of rows.entries()) {
    assert.equal(row.seq, i + 1, "gapless sequence");
    assert.equal(row.prev_hash, prev, `entry ${row.seq} links to the one before`);
    const { id, chain, at_ms, type, actor, outcome, request_id, body } = row;
    assert.equal(row.hash, seal({ id, chain, atMs: at_ms, type, actor, outcome, requestId: request_id, body }, row.seq, row.prev_hash));
    prev = row.hash;
  }
}

describeBackends("AuditStore", (backend) => {
  const open = async () => {
    const db = await backend.open();
    return { db, store: new AuditStore(db) };
  };

  /** Runs SQL as the superuser outside the store: psql on Postgres, the raw connection on SQLite. */
  const outside = (db: SqlDatabase, text: string): void => {
    if (backend.server) backend.server.psql(backend.lastUrl!, text);
    else db.sqlite!.exec(text);
  };

  it("appends interleaved chains in one batch, each row after its chain's head, and returns the new heads", async () => {
    const { store } = await open();
    // More rows than one INSERT statement holds, two chains interleaved: the insert trigger checks every row.
    const first = Array.from({ length: 450 }, (_, i) => draft(i % 3 === 0 ? "ws_b" : "ws_a"));
    const heads = await store.append(first, seal, GENESIS);
    assert.deepEqual(
      heads.map((h) => [h.chain, h.seq]),
      [
        ["ws_a", 300],
        ["ws_b", 150],
      ],
    );
    const more = await store.append([draft("ws_a"), draft("instance")], seal, GENESIS);
    assert.deepEqual(
      more.map((h) => [h.chain, h.seq]),
      [
        ["instance", 1],
        ["ws_a", 301],
      ],
    );
    const a = await store.range("ws_a", 1, Number.MAX_SAFE_INTEGER, 1000);
    assert.equal(a.length, 301);
    assertChained(a);
    assert.deepEqual(
      a.slice(0, 3).map((r) => r.id),
      first.filter((d) => d.chain === "ws_a").slice(0, 3).map((d) => d.id),
      "in the order given",
    );
    assertChained(await store.range("ws_b", 1, Number.MAX_SAFE_INTEGER, 1000));
    assert.deepEqual(await store.heads(), [
      { chain: "instance", seq: 1, hash: (await store.hashAt("instance", 1))! },
      { chain: "ws_a", seq: 301, hash: a.at(-1)!.hash },
      { chain: "ws_b", seq: 150, hash: (await store.hashAt("ws_b", 150))! },
    ]);
    assert.deepEqual(await store.chains(), ["instance", "ws_a", "ws_b"]);
    assert.deepEqual(await store.append([], seal, GENESIS), []);
  });

  it("writes nothing of a batch when one row is refused", async () => {
    const { store } = await open();
    await store.append([draft("ws_a")], seal, GENESIS);
    const clash = draft("ws_b");
    await store.append([clash], seal, GENESIS);
    // The same id again (the primary key) in the middle of a batch: the whole batch is rolled back.
    await assert.rejects(store.append([draft("ws_a"), { ...clash, chain: "ws_a" }, draft("ws_a")], seal, GENESIS));
    assert.deepEqual(
      (await store.heads()).map((h) => [h.chain, h.seq]),
      [
        ["ws_a", 1],
        ["ws_b", 1],
      ],
    );
    assert.equal((await store.append([draft("ws_a")], seal, GENESIS))[0]!.seq, 2, "the chain goes on from its real head");
  });

  it("reads ranges, bounds by time, single hashes, the head before a time and an id's place", async () => {
    const { store } = await open();
    const drafts = Array.from({ length: 10 }, (_, i) => draft("ws_a", { atMs: 10_000 + i * 100 }));
    await store.append(drafts, seal, GENESIS);
    assert.deepEqual(
      (await store.range("ws_a", 3, 8, 4)).map((r) => r.seq),
      [3, 4, 5, 6],
    );
    assert.deepEqual(
      (await store.range("ws_a", 7, 8, 100)).map((r) => r.seq),
      [7, 8],
    );
    const row = (await store.range("ws_a", 1, 1, 1))[0]!;
    assert.equal(typeof row.seq, "number");
    assert.equal(typeof row.at_ms, "number");
    assert.equal(row.request_id, drafts[0]!.requestId);
    assert.deepEqual(await store.seqBounds("ws_a", 10_200, 10_500), { first: 3, last: 5 });
    assert.deepEqual(await store.seqBounds("ws_a", undefined, undefined), { first: 1, last: 10 });
    assert.deepEqual(await store.seqBounds("ws_a", 10_950, undefined), null, "nothing after the last entry");
    assert.equal(await store.seqBounds("ws_none", undefined, undefined), null);
    assert.equal(await store.hashAt("ws_a", 4), (await store.range("ws_a", 4, 4, 1))[0]!.hash);
    assert.equal(await store.hashAt("ws_a", 11), null);
    assert.deepEqual(await store.headBefore("ws_a", 10_250), { seq: 3, hash: (await store.hashAt("ws_a", 3))! });
    assert.equal(await store.headBefore("ws_a", 10_000), null);
    assert.equal(await store.seqOf("ws_a", drafts[6]!.id), 7);
    assert.equal(await store.seqOf("ws_b", drafts[6]!.id), undefined, "an id of another chain is no cursor");
  });

  it("pages with filters, type prefixes compared exactly, and a cursor in either order", async () => {
    const { store } = await open();
    const types = ["document.upload", "document.delete", "documents.x", "document", "api_key.create", "apiXkey.create", "Document.upload", "chat.completion"];
    await store.append(
      types.map((type, i) => draft("ws_a", { type, atMs: 50_000 + i, outcome: i % 2 === 0 ? "success" : "failure", actor: i < 4 ? "api_key:key_a" : "session:ses_b", requestId: i === 5 ? null : `r${i}` })),
      seal,
      GENESIS,
    );
    await store.append([draft("ws_b", { type: "document.upload" })], seal, GENESIS);
    const seqs = async (filter: Parameters<AuditStore["page"]>[0], limit = 100, after?: number, order: "asc" | "desc" = "asc") => (await store.page(filter, limit, after, order)).data.map((r) => r.seq);
    assert.deepEqual(await seqs({ chain: "ws_a", type: "document." }), [1, 2], "a prefix: not 'documents.', not 'document', not another case");
    assert.deepEqual(await seqs({ chain: "ws_a", type: "api_key." }), [5], "'_' is no wildcard");
    assert.deepEqual(await seqs({ chain: "ws_a", type: "Document." }), [7], "case matters");
    assert.deepEqual(await seqs({ chain: "ws_a", type: "document" }), [4], "without the dot: exact");
    assert.deepEqual(await seqs({ chain: "ws_a", type: "dokument.ü" }), []);
    assert.deepEqual(await seqs({ chain: "ws_a", actor: "session:ses_b", outcome: "failure" }), [6, 8]);
    assert.deepEqual(await seqs({ chain: "ws_a", requestId: "r3" }), [4]);
    assert.deepEqual(await seqs({ chain: "ws_a", sinceMs: 50_002, untilMs: 50_005 }), [3, 4, 5]);
    assert.deepEqual(await seqs({ chain: "ws_a" }, 3, undefined, "desc"), [8, 7, 6]);
    assert.deepEqual(await seqs({ chain: "ws_a" }, 3, 6, "desc"), [5, 4, 3]);
    assert.deepEqual(await seqs({ chain: "ws_a" }, 3, 6, "asc"), [7, 8]);
    const page = await store.page({ chain: "ws_a" }, 7, undefined, "asc");
    assert.equal(page.data.length, 7);
    assert.equal(page.hasMore, true);
    assert.equal((await store.page({ chain: "ws_a" }, 8, undefined, "asc")).hasMore, false);
    assert.equal(page.data[5]!.request_id, null);
  });

  it("has the database refuse an UPDATE, a DELETE and an insert that does not extend its chain", async () => {
    const { db, store } = await open();
    await store.append([draft("ws_a"), draft("ws_a")], seal, GENESIS);
    const [one, two] = await store.range("ws_a", 1, 2, 2);
    await assert.rejects(db.db.updateTable("audit_events").set({ body: "{}" }).where("seq", "=", 1).execute(), /append-only/);
    await assert.rejects(db.db.deleteFrom("audit_events").where("seq", "=", 2).execute(), /append-only/);
    const forged = { ...one!, id: "aud_forged", seq: 3, prev_hash: one!.hash };
    await assert.rejects(db.db.insertInto("audit_events").values(forged).execute(), /extend its chain/, "the wrong previous hash");
    await assert.rejects(db.db.insertInto("audit_events").values({ ...forged, seq: 4, prev_hash: two!.hash }).execute(), /extend its chain/, "a gap in the sequence");
    await assert.rejects(db.db.insertInto("audit_events").values({ ...forged, chain: "ws_new", seq: 1, prev_hash: one!.hash }).execute(), /extend its chain/, "a new chain starts at the genesis hash");
    assert.deepEqual(await store.range("ws_a", 1, 10, 10), [one, two]);
    assert.deepEqual(await store.missingTriggers(), []);
  });

  if (backend.dialect === "postgres") {
    it("has Postgres refuse UPDATE, DELETE, TRUNCATE and forged inserts from any client (psql)", async () => {
      const { store } = await open();
      await store.append([draft("ws_a"), draft("ws_a")], seal, GENESIS);
      const url = backend.lastUrl!;
      const psql = (text: string) => backend.server!.psql(url, text);
      const refused = (text: string, message: RegExp) => assert.throws(() => psql(text), (error: Error & { stderr?: Buffer }) => message.test(String(error.stderr)));
      refused("UPDATE audit_events SET body = '{}' WHERE seq = 1", /append-only: UPDATE refused/);
      refused("DELETE FROM audit_events WHERE seq = 2", /append-only: DELETE refused/);
      refused("TRUNCATE audit_events", /append-only: TRUNCATE refused/);
      const head = (await store.range("ws_a", 2, 2, 1))[0]!;
      const insert = (seq: number, prev: string) =>
        `INSERT INTO audit_events (id, chain, seq, at_ms, type, actor, outcome, request_id, body, prev_hash, hash) VALUES ('aud_forged', 'ws_a', ${seq}, 1, 't', 'a', 'success', NULL, '{}', '${prev}', '${"f".repeat(64)}')`;
      refused(insert(2, head.prev_hash), /extend its chain/); // a sequence number already taken, even with its link
      refused(insert(4, head.hash), /extend its chain/); // a gap
      refused(insert(3, head.prev_hash), /extend its chain/); // the wrong previous hash
      assert.equal(psql("SELECT count(*) FROM audit_events").trim(), "2");
      // The one insert that extends the chain is accepted from any client: the hashes are the application's to check.
      psql(insert(3, head.hash));
      assert.equal((await store.heads())[0]!.seq, 3);
    });

    it("locks the same advisory lock as the insert trigger (one lock per chain, not two)", async () => {
      const { db } = await open();
      const held = await db.transaction(async (tx) => {
        await db.lock(tx, [chainLockKey("ws_a")]);
        const row = { id: "aud_1", chain: "ws_a", seq: 1, at_ms: 1, type: "t", actor: "a", outcome: "success" as const, request_id: null, body: "{}", prev_hash: GENESIS, hash: "1".repeat(64) };
        await tx.insertInto("audit_events").values(row).execute();
        const { rows } = await sql<{ locks: number }>`SELECT count(*) AS locks FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid()`.execute(tx);
        return rows[0]!.locks;
      });
      assert.equal(held, 1, "the trigger's lock is the store's, taken again (re-entrant)");
    });
  }

  it("reports the append-only triggers someone dropped (or, on Postgres, disabled)", async () => {
    const { db, store } = await open();
    assert.deepEqual(await store.missingTriggers(), []);
    outside(db, "DROP TRIGGER audit_events_no_delete" + (backend.dialect === "postgres" ? " ON audit_events" : ""));
    assert.deepEqual(await store.missingTriggers(), ["audit_events_no_delete"]);
    if (backend.dialect === "postgres") {
      outside(db, "ALTER TABLE audit_events DISABLE TRIGGER audit_events_no_truncate");
      outside(db, "ALTER TABLE audit_events ENABLE REPLICA TRIGGER audit_events_chained");
      assert.deepEqual(await store.missingTriggers(), ["audit_events_no_delete", "audit_events_no_truncate", "audit_events_chained"]);
      outside(db, "ALTER TABLE audit_events ENABLE ALWAYS TRIGGER audit_events_chained");
      assert.deepEqual(await store.missingTriggers(), ["audit_events_no_delete", "audit_events_no_truncate"]);
    } else {
      outside(db, "DROP TRIGGER audit_events_chained");
      assert.deepEqual(await store.missingTriggers(), ["audit_events_no_delete", "audit_events_chained"]);
    }
  });

  it("keeps one gapless chain when three handles on the same database append 100 entries each at once", async () => {
    const first = await backend.open();
    // Three handles on one database: three replicas' pools on Postgres. SQLite races on one
    // handle: ':memory:' cannot be shared, and two handles on one file in one process would
    // could stall each other (a blocked BEGIN IMMEDIATE waits synchronously, holding the event loop
    // the other handle's open transaction needs); processes (server and CLI) wait for each other.
    const handles = backend.dialect === "postgres" ? [first, ...(await Promise.all([1, 2].map(() => openSqlDatabase({ kind: "postgres", url: backend.lastUrl! }))))] : [first, first, first];
    try {
      const stores = handles.map((h) => new AuditStore(h));
      const written = await Promise.all(stores.flatMap((store, s) => Array.from({ length: 100 }, (_, i) => store.append([draft("ws_race", { actor: `writer_${s}_${i}` })], seal, GENESIS))));
      assert.deepEqual(written.map((heads) => heads[0]!.seq).sort((a, b) => a - b), Array.from({ length: 300 }, (_, i) => i + 1), "each append got its own place");
      const rows = await stores[0]!.range("ws_race", 1, Number.MAX_SAFE_INTEGER, 1000);
      assert.equal(rows.length, 300);
      assertChained(rows);
      for (let s = 0; s < 3; s++) assert.equal(rows.filter((r) => r.actor.startsWith(`writer_${s}_`)).length, 100);
    } finally {
      for (const h of handles) if (h !== first) await h.close();
    }
  });
});
