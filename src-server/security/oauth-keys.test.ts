import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, describe, it } from "node:test";
import { decodeProtectedHeader } from "jose";
import { OAuthKeys } from "./oauth-keys.js";

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
