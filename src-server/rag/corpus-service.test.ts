/**
 * The corpus service over the asynchronous store (SQLite in memory): a corpus is created
 * with its data key claimed, read only in its workspace, listed and updated with its
 * status and counts, and deleted through the tombstone service.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { Principal } from "../domain/scopes.js";
import { ServiceError } from "../errors.js";
import type { ModelEntry, ModelRegistry } from "../models/model-registry.js";
import { CorpusKeyring } from "../security/corpus-keyring.js";
import { DataCipher, newDataKey } from "../security/data-cipher.js";
import type { KeyProvider } from "../security/key-provider.js";
import { CorpusStore } from "../store/corpus-store.js";
import { openSqlDatabase } from "../store/sql-database.js";
import type { TombstoneRecord } from "../store/tombstone-catalog.js";
import { CorpusEvents } from "./corpus-events.js";
import { CorpusService } from "./corpus-service.js";
import type { CorpusIndexes } from "./retrieval/corpus-indexes.js";
import type { TombstoneService } from "./tombstone-service.js";

class MemoryKeyProvider implements KeyProvider {
  readonly id = "memory:test";
  private readonly kek = new DataCipher(newDataKey());
  wrapKey(dataKey: Buffer): Promise<Buffer> {
    return Promise.resolve(this.kek.seal(dataKey, "kek"));
  }
  unwrapKey(wrapped: Buffer): Promise<Buffer> {
    return Promise.resolve(this.kek.open(wrapped, "kek"));
  }
  close(): Promise<void> {
    return Promise.resolve();
  }
}

const entry = (id: string, type: ModelEntry["type"]): ModelEntry =>
  ({ id, type, aliases: [], gguf: { architecture: "bert", name: id, contextLength: 512, embeddingLength: 4, parameters: null, quantization: null }, remote: null, catalog: null, origin: "scan" }) as unknown as ModelEntry;

const registry = {
  defaultName: (_type: string, preferred: string) => preferred,
  resolve: (name: string, param = "model") => {
    const models: Record<string, ModelEntry> = { emb: entry("emb", "embedding"), rr: entry("rr", "rerank"), chat: entry("chat", "chat") };
    const model = models[name];
    if (!model) throw new ServiceError("not_found", `No model '${name}'`, { code: "model_not_found", param });
    return model;
  },
} as unknown as ModelRegistry;

const principal = (workspaceId: string): Principal => ({ workspaceId, keyId: "key_1", keyName: "test", scopes: new Set(["rag.read", "rag.write"]) });

async function fixture() {
  const store = await openSqlDatabase({ kind: "sqlite", dataDir: ":memory:" });
  await store.db
    .insertInto("workspaces")
    .values([
      { id: "ws_a", name: "A", created_at: 1 },
      { id: "ws_b", name: "B", created_at: 1 },
    ])
    .execute();
  const corpora = new CorpusStore(store);
  const keyring = new CorpusKeyring(new MemoryKeyProvider(), corpora);
  const buried: string[] = [];
  const dropped: string[] = [];
  const tombstones = { buryCorpus: async (c: { id: string }) => (buried.push(c.id), { id: c.id } as TombstoneRecord) } as unknown as TombstoneService;
  const indexes = { drop: async (id: string) => void dropped.push(id) } as unknown as CorpusIndexes;
  const service = new CorpusService({ corpora, keyring, tombstones, indexes, events: new CorpusEvents(), registry, defaultEmbeddingModel: "emb", promptsFor: () => ({ query: "q: ", document: "d: " }) });
  return { store, corpora, keyring, service, buried, dropped };
}

const input = { name: "Handbook", chunking: "semantic" as const, retentionDays: 30, metadata: { team: "hr" } };

describe("CorpusService", () => {
  it("creates a corpus with the default embedder and its data key stored and claimed", async () => {
    const f = await fixture();
    const created = await f.service.create(principal("ws_a"), input);
    assert.equal(created.embeddingModel, "emb");
    assert.equal(created.dimensions, 4);
    assert.deepEqual(created.embeddingPrompts, { query: "q: ", document: "d: " });
    assert.equal(created.status, "empty");
    assert.deepEqual(created.counts, { queued: 0, processing: 0, indexed: 0, failed: 0, total: 0 });
    assert.equal(created.chunkCount, 0);
    const key = await f.corpora.wrappedKey(created.id);
    assert.equal(key?.destroyAfter, null, "the corpus claimed its key");
    const sealed = (await f.keyring.cipher(created.id)).seal(Buffer.from("text"), "aad");
    const fresh = new CorpusKeyring(new MemoryKeyProvider(), f.corpora);
    await assert.rejects(fresh.cipher(created.id), "another KEK cannot open it");
    assert.equal((await f.keyring.cipher(created.id)).open(sealed, "aad").toString(), "text");
    await assert.rejects(f.service.create(principal("ws_a"), { ...input, embeddingModel: "chat" }), /a corpus needs an embedding model/);
    await assert.rejects(f.service.create(principal("ws_a"), { ...input, rerankModel: "emb" }), /must be a rerank model/);
  });

  it("shows a corpus only in its workspace, with its status from its documents", async () => {
    const f = await fixture();
    const created = await f.service.create(principal("ws_a"), input);
    await assert.rejects(f.service.get(principal("ws_b"), created.id), (e: unknown) => e instanceof ServiceError && e.code === "corpus_not_found");
    await assert.rejects(f.service.record(principal("ws_b"), created.id), (e: unknown) => e instanceof ServiceError && e.code === "corpus_not_found");
    assert.equal((await f.service.record(principal("ws_a"), created.id)).name, "Handbook");
    await f.store.db
      .insertInto("documents")
      .values(["queued", "indexed"].map((status, i) => ({ id: `doc_${i}`, corpus_id: created.id, filename: `f${i}.txt`, content_type: "text/plain", format: "txt", bytes: 1, sha256: String(i).repeat(64), status, error_code: null, error_message: null, page_count: null, metadata: "{}", created_at: 1, updated_at: 1, indexed_at: null })))
      .execute();
    const view = await f.service.get(principal("ws_a"), created.id);
    assert.equal(view.status, "indexing");
    assert.deepEqual(view.counts, { queued: 1, processing: 0, indexed: 1, failed: 0, total: 2 });
    await f.store.db.updateTable("documents").set({ status: "indexed" }).execute();
    assert.equal((await f.service.get(principal("ws_a"), created.id)).status, "ready");
  });

  it("lists a workspace's corpora as views", async () => {
    const f = await fixture();
    const a = await f.service.create(principal("ws_a"), { ...input, name: "a" });
    await f.service.create(principal("ws_b"), { ...input, name: "other" });
    const listed = await f.service.list(principal("ws_a"), { limit: 10, order: "asc" });
    assert.deepEqual(
      listed.data.map((c) => [c.id, c.status, c.chunkCount]),
      [[a.id, "empty", 0]],
    );
    assert.equal(listed.hasMore, false);
  });

  it("updates the settings given, checks the reranker, and 404s another workspace's corpus", async () => {
    const f = await fixture();
    const created = await f.service.create(principal("ws_a"), input);
    const updated = await f.service.update(principal("ws_a"), created.id, { name: "Renamed", rerankModel: "rr", searchDefaults: { search: "keyword" } });
    assert.equal(updated.name, "Renamed");
    assert.equal(updated.rerankModel, "rr");
    assert.deepEqual(updated.searchDefaults, { search: "keyword" });
    assert.deepEqual(updated.metadata, { team: "hr" }, "what the patch does not name is kept");
    const cleared = await f.service.update(principal("ws_a"), created.id, { rerankModel: null, searchDefaults: null });
    assert.equal(cleared.rerankModel, null);
    assert.equal(cleared.searchDefaults, null);
    assert.equal(cleared.name, "Renamed");
    await assert.rejects(f.service.update(principal("ws_a"), created.id, { rerankModel: "chat" }), /must be a rerank model/);
    await assert.rejects(f.service.update(principal("ws_b"), created.id, { name: "x" }), (e: unknown) => e instanceof ServiceError && e.code === "corpus_not_found");
    assert.equal((await f.corpora.getAny(created.id))?.name, "Renamed");
  });

  it("deletes through the tombstone service, drops the index, and refuses another workspace's corpus", async () => {
    const f = await fixture();
    const created = await f.service.create(principal("ws_a"), input);
    await assert.rejects(f.service.delete(principal("ws_b"), created.id), (e: unknown) => e instanceof ServiceError && e.code === "corpus_not_found");
    assert.deepEqual(f.buried, []);
    const deleted = await f.service.delete(principal("ws_a"), created.id);
    assert.equal(deleted.id, created.id);
    assert.deepEqual(f.buried, [created.id]);
    assert.deepEqual(f.dropped, [created.id]);
  });
});
