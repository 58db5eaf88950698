import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, it } from "node:test";
import { LocalKeyFileProvider } from "../security/local-key-file-provider.js";
import type { KeyProvider } from "../security/key-provider.js";
import { latestSchemaVersion, openSqlDatabase } from "../store/sql-database.js";
import { Readiness } from "./readiness.js";

describe("Readiness", () => {
  it("is ready with a store that answers, the schema current and a key provider that works; says which check failed, never how", async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "pustaka-ready-"));
    try {
      const store = await openSqlDatabase({ kind: "sqlite", dataDir: path.join(dir, "data") });
      const provider = new LocalKeyFileProvider(path.join(dir, "kek.bin"));
      const ready = await new Readiness("r1", store, latestSchemaVersion(), provider).report();
      assert.equal(ready.status, "ready");
      assert.deepEqual(
        ready.checks.map((c) => [c.name, c.ok]),
        [
          ["database", true],
          ["schema", true],
          ["key_provider", true],
        ],
      );
      const ahead = await new Readiness("r1", store, latestSchemaVersion() + 1, provider).report();
      assert.equal(ahead.status, "not_ready");
      assert.match(ahead.checks.find((c) => c.name === "schema")!.reason!, /this build needs/);
      const broken: KeyProvider = { id: "broken", wrapKey: () => Promise.reject(new Error("CKR_DEVICE_REMOVED at slot 3")), unwrapKey: (w) => provider.unwrapKey(w), close: () => Promise.resolve() };
      const noHsm = await new Readiness("r1", store, latestSchemaVersion(), broken).report();
      assert.equal(noHsm.checks.find((c) => c.name === "key_provider")!.reason, "the key provider failed a wrap and unwrap");
      const draining = new Readiness("r1", store, latestSchemaVersion(), provider);
      draining.drain();
      assert.equal((await draining.report()).status, "draining");
      await store.close();
      const closed = await new Readiness("r1", store, latestSchemaVersion(), provider).report();
      assert.equal(closed.status, "not_ready");
      assert.equal(closed.checks.find((c) => c.name === "database")!.reason, "the database does not answer");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
