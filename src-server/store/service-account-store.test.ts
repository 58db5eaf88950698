import assert from "node:assert/strict";
import { it } from "node:test";
import { describeBackends } from "../../test/helpers/store-backends.js";
import { openSqlDatabase, type SqlDatabase } from "./sql-database.js";
import { ServiceAccountStore, type ServiceAccountRecord } from "./service-account-store.js";

const account = (id: string, workspaceId: string, createdAt: number, more: Partial<ServiceAccountRecord> = {}): ServiceAccountRecord => ({
  id,
  workspaceId,
  name: `account ${id}`,
  scopes: ["inference", "rag.read"],
  secretPrefix: "pss-abcd1234",
  secretSha256: "0".repeat(64),
  publicJwk: null,
  disabledAt: null,
  createdAt,
  lastTokenAt: null,
  ...more,
});

async function withWorkspaces(store: SqlDatabase, ...ids: string[]): Promise<void> {
  for (const id of ids) await store.db.insertInto("workspaces").values({ id, name: id, created_at: 1 }).execute();
}

describeBackends("ServiceAccountStore", (backend) => {
  const open = async () => {
    const store = await backend.open();
    await withWorkspaces(store, "ws_a", "ws_b");
    return new ServiceAccountStore(store);
  };

  it("stores an account and reads it back, scopes and key included", async () => {
    const accounts = await open();
    const jwk = { kty: "OKP", crv: "Ed25519", x: "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo" };
    await accounts.insert(account("sa_1", "ws_a", 100, { secretPrefix: null, secretSha256: null, publicJwk: jwk, disabledAt: 150, lastTokenAt: 160 }));
    assert.deepEqual(await accounts.get("sa_1"), account("sa_1", "ws_a", 100, { secretPrefix: null, secretSha256: null, publicJwk: jwk, disabledAt: 150, lastTokenAt: 160 }));
    assert.equal(await accounts.get("sa_none"), undefined);
  });

  it("lists one workspace's accounts a page at a time, in either order", async () => {
    const accounts = await open();
    for (const [i, id] of ["sa_1", "sa_2", "sa_3"].entries()) await accounts.insert(account(id, "ws_a", 100 + i));
    await accounts.insert(account("sa_other", "ws_b", 50));
    const first = await accounts.list("ws_a", { limit: 2, order: "asc" });
    assert.deepEqual(first.data.map((a) => a.id), ["sa_1", "sa_2"]);
    assert.equal(first.hasMore, true);
    const second = await accounts.list("ws_a", { limit: 2, order: "asc", after: "sa_2" });
    assert.deepEqual(second.data.map((a) => a.id), ["sa_3"]);
    assert.equal(second.hasMore, false);
    assert.deepEqual((await accounts.list("ws_a", { limit: 10, order: "desc" })).data.map((a) => a.id), ["sa_3", "sa_2", "sa_1"]);
    assert.deepEqual((await accounts.list("ws_a", { limit: 1, order: "desc", before: "sa_1" })).data.map((a) => a.id), ["sa_2"], "before walks back to the cursor");
    assert.deepEqual((await accounts.list("ws_a", { limit: 10, order: "asc", after: "sa_other" })).data, [], "another workspace's cursor gives an empty page");
    assert.deepEqual((await accounts.list("ws_b", { limit: 10, order: "asc" })).data.map((a) => a.id), ["sa_other"]);
  });

  it("updates only the fields given, and deletes", async () => {
    const accounts = await open();
    const jwk = { kty: "OKP", crv: "Ed25519", x: "abc" };
    await accounts.insert(account("sa_1", "ws_a", 100, { publicJwk: jwk }));
    await accounts.update("sa_1", { name: "renamed", scopes: ["inference"], disabledAt: 200 });
    let got = (await accounts.get("sa_1"))!;
    assert.equal(got.name, "renamed");
    assert.deepEqual(got.scopes, ["inference"]);
    assert.equal(got.disabledAt, 200);
    assert.deepEqual(got.publicJwk, jwk, "untouched");
    assert.equal(got.secretPrefix, "pss-abcd1234", "untouched");
    await accounts.update("sa_1", { publicJwk: null, disabledAt: null, lastTokenAt: 300, secretPrefix: "pss-new00000", secretSha256: "f".repeat(64), name: undefined });
    got = (await accounts.get("sa_1"))!;
    assert.equal(got.publicJwk, null);
    assert.equal(got.disabledAt, null);
    assert.equal(got.lastTokenAt, 300);
    assert.equal(got.secretSha256, "f".repeat(64));
    assert.equal(got.name, "renamed", "undefined leaves a field alone");
    await accounts.update("sa_1", {});
    assert.deepEqual(await accounts.get("sa_1"), got);
    await accounts.delete("sa_1");
    assert.equal(await accounts.get("sa_1"), undefined);
  });

  it("accepts an assertion's jti once per client, and forgets it once expired", async () => {
    const accounts = await open();
    assert.equal(await accounts.useAssertion("sa_1", "jti-1", 1000, 500), true);
    assert.equal(await accounts.useAssertion("sa_1", "jti-1", 1000, 600), false, "a replay");
    assert.equal(await accounts.useAssertion("sa_2", "jti-1", 1000, 600), true, "the same jti from another client is another assertion");
    assert.equal(await accounts.useAssertion("sa_1", "jti-2", 1000, 600), true);
    assert.equal(await accounts.useAssertion("sa_1", "jti-1", 1000, 1000), false, "still remembered at its expiry");
    assert.equal(await accounts.useAssertion("sa_1", "jti-1", 2000, 1001), true, "dropped after its expiry");
  });

  it("accepts a jti exactly once when 60 requests race through three connections", async () => {
    const first = await backend.open();
    // Three replicas' pools on Postgres; on SQLite (':memory:' cannot be shared) one handle.
    const others: SqlDatabase[] = backend.dialect === "postgres" ? await Promise.all([1, 2].map(() => openSqlDatabase({ kind: "postgres", url: backend.lastUrl! }))) : [first, first];
    try {
      const stores = [first, ...others].map((db) => new ServiceAccountStore(db));
      for (const round of [1, 2, 3]) {
        const results = await Promise.all(Array.from({ length: 60 }, (_, i) => stores[i % 3]!.useAssertion("sa_1", `race-${round}`, 10_000, 100)));
        assert.equal(results.filter(Boolean).length, 1, `round ${round}: one winner`);
      }
    } finally {
      if (backend.dialect === "postgres") for (const db of others) await db.close();
    }
  });
});
