/** The conversation service over the asynchronous store (SQLite): sealed at rest, keys looked up when not cached. */
import assert from "node:assert/strict";
import { mkdtempSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import type { Principal } from "../domain/scopes.js";
import { DataKeyGoneError, DataKeyring } from "../security/data-keyring.js";
import { LocalKeyFileProvider } from "../security/local-key-file-provider.js";
import { ConversationStore } from "../store/conversation-store.js";
import { openSqlDatabase, type SqlDatabase } from "../store/sql-database.js";
import { ConversationService } from "./conversation-service.js";

const alice: Principal = { workspaceId: "ws_a", keyId: "key_a", keyName: "a", scopes: new Set(["inference"]) };
const bob: Principal = { workspaceId: "ws_b", keyId: "key_b", keyName: "b", scopes: new Set(["inference"]) };
const text = (content: string, role: "user" | "assistant" = "user") => ({ role, content, citations: null, grounded: null, model: null, stopped: false });

describe("ConversationService", () => {
  let store: SqlDatabase;
  let provider: LocalKeyFileProvider;
  /** A service with a keyring of its own (nothing cached: keys come from the store). */
  const service = (maxMessages = 10_000) => {
    const conversations = new ConversationStore(store);
    return new ConversationService(conversations, new DataKeyring(provider, (id) => conversations.wrappedKey(id)), { maxMessages });
  };

  before(async () => {
    store = await openSqlDatabase({ kind: "sqlite", dataDir: ":memory:" });
    for (const id of ["ws_a", "ws_b"]) await store.db.insertInto("workspaces").values({ id, name: id, created_at: 1 }).execute();
    provider = new LocalKeyFileProvider(path.join(mkdtempSync(path.join(os.tmpdir(), "pustaka-conv-")), "kek.bin"));
  });
  after(async () => {
    await store.close();
  });

  it("names a conversation from its first question, and reads it back through a fresh keyring", async () => {
    const conversations = service();
    const created = await conversations.create(alice, {});
    assert.equal(created.title, "New conversation");
    const appended = await conversations.append(alice, created.id, [text("What does the contract say about leave?\nMore detail."), text("It says…", "assistant")]);
    assert.deepEqual(
      appended.map((m) => [m.role, m.content]),
      [
        ["user", "What does the contract say about leave?\nMore detail."],
        ["assistant", "It says…"],
      ],
    );
    const read = await service().get(alice, created.id);
    assert.equal(read.title, "What does the contract say about leave?");
    assert.equal(read.messageCount, 2);
    assert.deepEqual(
      read.messages.map((m) => m.content),
      ["What does the contract say about leave?\nMore detail.", "It says…"],
    );
    const sealed = await store.db.selectFrom("conversation_messages").select("body").execute();
    assert.ok(sealed.every((r) => !r.body.toString("utf8").includes("contract")), "no plaintext at rest");
    assert.equal((await service().rename(alice, created.id, "  Leave  ")).title, "Leave");
    assert.deepEqual(
      (await service().list(alice, { limit: 10, order: "desc" })).data.map((c) => [c.id, c.title]),
      [[created.id, "Leave"]],
    );
  });

  it("hides another workspace's conversation, refuses a full one, and deletes with the key", async () => {
    const conversations = service(3);
    const created = await conversations.create(alice, { title: "Mine" });
    await assert.rejects(service().get(bob, created.id), { code: "conversation_not_found" });
    await assert.rejects(service().delete(bob, created.id), { code: "conversation_not_found" });
    await conversations.append(alice, created.id, [text("one"), text("two")]);
    await assert.rejects(conversations.append(alice, created.id, [text("three"), text("four")]), { code: "conversation_full" });
    await conversations.delete(alice, created.id);
    await assert.rejects(conversations.get(alice, created.id), { code: "conversation_not_found" });
    const ring = new DataKeyring(provider, (id) => new ConversationStore(store).wrappedKey(id));
    await assert.rejects(ring.cipher(created.id), DataKeyGoneError);
  });
});
