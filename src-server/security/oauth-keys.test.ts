import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, describe, it } from "node:test";
import { decodeProtectedHeader } from "jose";
import { describeBackends } from "../../test/helpers/store-backends.js";
import { LocalKeyFileProvider } from "./local-key-file-provider.js";
import { OAuthKeys } from "./oauth-keys.js";
import { SqlKeyVault } from "./sql-key-vault.js";

describe("OAuthKeys", () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), "pustaka-oauth-keys-"));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const sign = (keys: OAuthKeys, now: number) => keys.sign({ sub: "sa_1", ws: "ws_default", scope: "inference" }, { issuer: "http://127.0.0.1", audience: "pustaka-api", ttlSeconds: 60, jti: "j", now });

  it("signs with the key made by a rotation in the same second as the first key, and publishes it first", async () => {
    const now = 1_800_000_000;
    const keys = await OAuthKeys.open(path.join(dir, "same-second.json"), now);
    const first = keys.kids(now)[0]!;
    const second = await keys.rotate(900, now);
    assert.deepEqual(keys.kids(now), [second, first]);
    assert.equal(decodeProtectedHeader(await sign(keys, now)).kid, second);
    // Reopened from the file, the order holds.
    const reopened = await OAuthKeys.open(path.join(dir, "same-second.json"), now);
    assert.deepEqual(reopened.kids(now), [second, first]);
    // After the grace period only the new key is published.
    assert.deepEqual(keys.kids(now + 901), [second]);
  });
});

describeBackends("OAuthKeys in the shared store", (backend) => {
  it("seals private keys, and replicas sign and verify each other's tokens across a rotation", async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "pustaka-oauth-vault-"));
    try {
      const provider = new LocalKeyFileProvider(path.join(dir, "kek.bin"));
      const store = await backend.open();
      const now = Math.floor(Date.now() / 1000);
      const a = await OAuthKeys.open(new SqlKeyVault(store, provider, "oauth"), now);
      const b = await OAuthKeys.open(new SqlKeyVault(store, provider, "oauth"), now);
      assert.deepEqual(b.kids(now), a.kids(now), "the second replica found the first one's key instead of making its own");
      const rows = await store.db.selectFrom("signing_keys").selectAll().execute();
      assert.equal(rows.length, 1);
      assert.ok(!rows[0]!.sealed.toString("latin1").includes("PRIVATE KEY"), "the private key is sealed at rest");
      const options = { issuer: "http://127.0.0.1", audience: "pustaka-api" };
      const claims = { sub: "sa_1", ws: "ws_default", scope: "inference" };
      assert.equal((await b.verify(await a.sign(claims, { ...options, ttlSeconds: 60, jti: "1" }), options)).sub, "sa_1");
      // A rotates; B has never seen the new key and looks it up when a token names it.
      await new Promise((r) => setTimeout(r, 300));
      const rotated = await a.rotate(900, now);
      const token = await a.sign(claims, { ...options, ttlSeconds: 60, jti: "2" });
      assert.equal(decodeProtectedHeader(token).kid, rotated);
      assert.equal((await b.verify(token, options)).sub, "sa_1");
      assert.deepEqual(b.kids(now), [rotated, ...a.kids(now).slice(1)]);
      // A key id nobody made is refused (after one look).
      const forged = `${token.split(".")[0]!.slice(0, -2)}xx.${token.split(".").slice(1).join(".")}`;
      await assert.rejects(b.verify(forged, options));
      // Another provider (a replica configured with a different key file) cannot unseal them.
      await assert.rejects(OAuthKeys.open(new SqlKeyVault(store, new LocalKeyFileProvider(path.join(dir, "other.bin")), "oauth"), now));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
