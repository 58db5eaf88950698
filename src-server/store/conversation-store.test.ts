import assert from "node:assert/strict";
import { it } from "node:test";
import { describeBackends } from "../../test/helpers/store-backends.js";
import { openSqlDatabase, type SqlDatabase } from "./sql-database.js";
import { ConversationStore, type ConversationRecord } from "./conversation-store.js";

const conversation = (id: string, workspaceId: string, updatedAt: number, more: Partial<ConversationRecord> = {}): ConversationRecord => ({
  id,
  workspaceId,
  corpusId: null,
  keyProvider: "local:test",
  wrappedKey: Buffer.from(`key of ${id}`),
  title: Buffer.from([0, 1, 2, 255, 254]),
  messageCount: 0,
  createdAt: 1,
  updatedAt,
  ...more,
});

const message = (id: string, role: "user" | "assistant" = "user") => ({ id, role, body: Buffer.from(`sealed ${id}\0`), createdAt: 7 });

async function openStore(open: () => Promise<SqlDatabase>): Promise<{ store: SqlDatabase; conversations: ConversationStore }> {
  const store = await open();
  for (const id of ["ws_a", "ws_b"]) await store.db.insertInto("workspaces").values({ id, name: id, created_at: 1 }).execute();
  return { store, conversations: new ConversationStore(store) };
}

describeBackends("ConversationStore", (backend) => {
  it("keeps a conversation per workspace, its sealed bytes as they were", async () => {
    const { conversations } = await openStore(() => backend.open());
    await conversations.insert(conversation("conv_1", "ws_a", 10));
    assert.deepEqual(await conversations.get("ws_a", "conv_1"), conversation("conv_1", "ws_a", 10));
    assert.equal(await conversations.get("ws_b", "conv_1"), undefined, "another workspace's conversation does not exist");
    assert.deepEqual(await conversations.wrappedKey("conv_1"), Buffer.from("key of conv_1"), "the keyring reads any workspace's");
    assert.equal(await conversations.wrappedKey("conv_none"), undefined);
    await conversations.setTitle("conv_1", Buffer.from("new title"), 20);
    const renamed = (await conversations.get("ws_a", "conv_1"))!;
    assert.deepEqual(renamed.title, Buffer.from("new title"));
    assert.equal(renamed.updatedAt, 20);
  });

  it("lists the most recently active first, a page at a time", async () => {
    const { conversations } = await openStore(() => backend.open());
    await conversations.insert(conversation("conv_a", "ws_a", 30));
    await conversations.insert(conversation("conv_b", "ws_a", 10));
    await conversations.insert(conversation("conv_c", "ws_a", 20));
    await conversations.insert(conversation("conv_d", "ws_a", 20));
    await conversations.insert(conversation("conv_x", "ws_b", 40));
    const ids = (page: { data: ConversationRecord[] }) => page.data.map((c) => c.id);
    const first = await conversations.list("ws_a", { limit: 2, order: "desc" });
    assert.deepEqual(ids(first), ["conv_a", "conv_d"], "ties broken by id");
    assert.equal(first.hasMore, true);
    const second = await conversations.list("ws_a", { limit: 2, order: "desc", after: "conv_d" });
    assert.deepEqual(ids(second), ["conv_c", "conv_b"]);
    assert.equal(second.hasMore, false);
    assert.deepEqual(ids(await conversations.list("ws_a", { limit: 10, order: "asc" })), ["conv_b", "conv_c", "conv_d", "conv_a"]);
    assert.deepEqual(ids(await conversations.list("ws_a", { limit: 2, order: "desc", before: "conv_b" })), ["conv_d", "conv_c"], "before reads back to the cursor");
    assert.deepEqual(ids(await conversations.list("ws_a", { limit: 10, order: "desc", after: "conv_x" })), [], "another workspace's cursor gives an empty page");
    await conversations.setTitle("conv_b", Buffer.from("t"), 50);
    assert.deepEqual(ids(await conversations.list("ws_a", { limit: 1, order: "desc" })), ["conv_b"], "renaming makes it the most recent");
  });

  it("appends messages with consecutive indexes and counts them", async () => {
    const { conversations } = await openStore(() => backend.open());
    await conversations.insert(conversation("conv_1", "ws_a", 10));
    const stored = await conversations.append("conv_1", [message("msg_1"), message("msg_2", "assistant")], 15);
    assert.deepEqual(
      stored.map((m) => [m.id, m.index, m.conversationId]),
      [
        ["msg_1", 0, "conv_1"],
        ["msg_2", 1, "conv_1"],
      ],
    );
    const more = await conversations.append("conv_1", [message("msg_3")], 25);
    assert.equal(more[0]!.index, 2);
    assert.deepEqual(await conversations.append("conv_1", [], 26), []);
    const record = (await conversations.get("ws_a", "conv_1"))!;
    assert.equal(record.messageCount, 3);
    assert.equal(record.updatedAt, 26);
    const messages = await conversations.messages("conv_1");
    assert.deepEqual(
      messages.map((m) => [m.id, m.index, m.role]),
      [
        ["msg_1", 0, "user"],
        ["msg_2", 1, "assistant"],
        ["msg_3", 2, "user"],
      ],
    );
    assert.deepEqual(messages[1]!.body, Buffer.from("sealed msg_2\0"));
    assert.equal(messages[0]!.createdAt, 7);
    await assert.rejects(conversations.append("conv_none", [message("msg_9")], 30), /no conversation/);
    assert.equal((await conversations.messages("conv_none")).length, 0, "a failed append leaves nothing");
  });

  it("gives concurrent appends from three connections distinct, consecutive indexes", async () => {
    const first = await backend.open();
    await first.db.insertInto("workspaces").values({ id: "ws_a", name: "a", created_at: 1 }).execute();
    // Three replicas' pools on Postgres; on SQLite (':memory:' cannot be shared) one handle.
    const others: SqlDatabase[] = backend.dialect === "postgres" ? await Promise.all([1, 2].map(() => openSqlDatabase({ kind: "postgres", url: backend.lastUrl! }))) : [first, first];
    try {
      const stores = [first, ...others].map((db) => new ConversationStore(db));
      await stores[0]!.insert(conversation("conv_1", "ws_a", 1));
      const appended = await Promise.all(Array.from({ length: 30 }, (_, i) => stores[i % 3]!.append("conv_1", [message(`msg_${i}_a`), message(`msg_${i}_b`, "assistant")], 100 + i)));
      for (const pair of appended) assert.equal(pair[1]!.index, pair[0]!.index + 1, "one append's messages stay together");
      const indexes = appended.flat().map((m) => m.index);
      assert.deepEqual(
        [...indexes].sort((a, b) => a - b),
        Array.from({ length: 60 }, (_, i) => i),
      );
      assert.equal((await stores[0]!.get("ws_a", "conv_1"))!.messageCount, 60);
      assert.deepEqual(
        (await stores[1]!.messages("conv_1")).map((m) => m.index),
        Array.from({ length: 60 }, (_, i) => i),
      );
    } finally {
      if (backend.dialect === "postgres") for (const db of others) await db.close();
    }
  });

  it("deletes a conversation with its messages and its wrapped key", async () => {
    const { store, conversations } = await openStore(() => backend.open());
    await conversations.insert(conversation("conv_1", "ws_a", 10));
    await conversations.insert(conversation("conv_2", "ws_a", 10));
    await conversations.append("conv_1", [message("msg_1"), message("msg_2")], 11);
    await conversations.append("conv_2", [message("msg_3")], 11);
    await conversations.delete("conv_1");
    assert.equal(await conversations.get("ws_a", "conv_1"), undefined);
    assert.equal(await conversations.wrappedKey("conv_1"), undefined);
    assert.deepEqual(await conversations.messages("conv_1"), []);
    const left = await store.db.selectFrom("conversation_messages").select("id").execute();
    assert.deepEqual(
      left.map((r) => r.id),
      ["msg_3"],
      "the other conversation keeps its messages",
    );
  });
});
