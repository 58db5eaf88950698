import assert from "node:assert/strict";
import { it } from "node:test";
import { describeBackends } from "../../test/helpers/store-backends.js";
import { ApiKeyStore } from "./api-key-store.js";
import { OllamaListenerStore } from "./ollama-listener-store.js";
import { WorkspaceStore } from "./workspace-store.js";

describeBackends("OllamaListenerStore", (backend) => {
  const open = async () => {
    const db = await backend.open();
    await new WorkspaceStore(db).insert({ id: "ws_a", name: "A", createdAt: 1 });
    const keys = new ApiKeyStore(db);
    for (const id of ["key_1", "key_2"]) {
      await keys.insert({ id, workspaceId: "ws_a", name: id, prefix: `psk-${id}`, secretSha256: `sha-${id}`, scopes: ["inference"], createdAt: 1, expiresAt: null, revokedAt: null, lastUsedAt: null });
    }
    return { db, settings: new OllamaListenerStore(db) };
  };

  it("keeps one setting at most: put, replace, read back, remove", async () => {
    const { settings } = await open();
    assert.equal(await settings.get(), undefined);
    await settings.put({ keyId: "key_1", port: 11434, openedBy: "api_key:key_admin", openedAt: 1_700_000_000 });
    assert.deepEqual(await settings.get(), { keyId: "key_1", port: 11434, openedBy: "api_key:key_admin", openedAt: 1_700_000_000 });
    await settings.put({ keyId: "key_2", port: 65535, openedBy: "session:ses_1", openedAt: 1_700_000_100 });
    assert.deepEqual(await settings.get(), { keyId: "key_2", port: 65535, openedBy: "session:ses_1", openedAt: 1_700_000_100 });
    await settings.remove();
    assert.equal(await settings.get(), undefined);
    await settings.remove();
    assert.equal(await settings.get(), undefined, "removing twice is fine");
  });

  it("refuses a key that does not exist and a port out of range", async () => {
    const { settings } = await open();
    await assert.rejects(settings.put({ keyId: "key_missing", port: 11434, openedBy: "cli", openedAt: 1 }));
    await assert.rejects(settings.put({ keyId: "key_1", port: 0, openedBy: "cli", openedAt: 1 }));
    await assert.rejects(settings.put({ keyId: "key_1", port: 65536, openedBy: "cli", openedAt: 1 }));
    assert.equal(await settings.get(), undefined);
  });
});
