import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { it } from "node:test";
import { describeBackends } from "../../test/helpers/store-backends.js";
import { ChunkStore, type IndexSource, type SealedChunk } from "./chunk-store.js";
import { DocumentStore } from "./document-store.js";
import type { SqlDatabase } from "./sql-database.js";

async function seed(store: SqlDatabase): Promise<void> {
  await store.db.insertInto("workspaces").values({ id: "ws_a", name: "a", created_at: 1 }).execute();
  for (const id of ["corp_a", "corp_b"]) {
    await store.db
      .insertInto("corpora")
      .values({ id, workspace_id: "ws_a", name: id, chunking: "fixed", embedding_model: "m", dimensions: 4, retention_days: 30, metadata: "{}", created_at: 1, updated_at: 1, rerank_model: null, search_defaults: null })
      .execute();
  }
}

async function addDocument(store: SqlDatabase, id: string, corpusId = "corp_a"): Promise<void> {
  await new DocumentStore(store).insert({ id, corpusId, filename: `${id}.txt`, contentType: "text/plain", format: "txt", bytes: 1, sha256: id.padEnd(64, "0"), status: "processing", error: { code: "old", message: "old failure" }, pageCount: null, chunkCount: 0, metadata: {}, attempts: 1, createdAt: 1, updatedAt: 1, indexedAt: null });
}

/** Sealed bytes stand-ins: random, so a mix-up between chunks or columns shows. */
const chunk = (id: string, documentId: string, index: number, fields: Partial<SealedChunk> = {}): SealedChunk => ({
  id,
  corpusId: "corp_a",
  documentId,
  index,
  start: index * 100,
  end: index * 100 + 99,
  pageStart: index + 1,
  pageEnd: index + 2,
  tokenCount: 40 + index,
  content: randomBytes(64),
  vector: randomBytes(32),
  terms: randomBytes(16),
  ...fields,
});

const source = (c: SealedChunk): IndexSource => ({ id: c.id, documentId: c.documentId, vector: c.vector, terms: c.terms ?? null, content: c.terms ? null : c.content });
const binary = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of items) out.push(item);
  return out;
}

describeBackends("ChunkStore", (backend) => {
  const open = async () => {
    const store = await backend.open();
    await seed(store);
    return { store, chunks: new ChunkStore(store), documents: new DocumentStore(store) };
  };

  it("commits a document's chunks and marks it indexed in one go; committing again replaces them", async () => {
    const { store, chunks, documents } = await open();
    await addDocument(store, "doc_1");
    const first = [chunk("chk_1a", "doc_1", 0), chunk("chk_1b", "doc_1", 1, { pageStart: null, pageEnd: null, terms: null })];
    await chunks.commitDocument("doc_1", first, 7, 1_700_000_000);
    const stored = await documents.getById("doc_1");
    assert.deepEqual([stored?.status, stored?.chunkCount, stored?.pageCount, stored?.indexedAt, stored?.updatedAt, stored?.error], ["indexed", 2, 7, 1_700_000_000, 1_700_000_000, null]);
    assert.deepEqual(await chunks.ofDocument("doc_1"), first.map((c) => ({ ...c, terms: c.terms ?? null })));

    const again = [chunk("chk_2a", "doc_1", 0)];
    await chunks.commitDocument("doc_1", again, null, 5);
    assert.deepEqual(await chunks.idsOfDocument("doc_1"), ["chk_2a"], "the earlier chunks are gone, none twice");
    assert.equal((await documents.getById("doc_1"))?.chunkCount, 1);
  });

  it("stores thousands of chunks of one document (several multi-row statements) and reads them back byte for byte", async () => {
    const { store, chunks } = await open();
    await addDocument(store, "doc_big");
    const many = Array.from({ length: 6100 }, (_, i) => chunk(`chk_${String(i).padStart(5, "0")}`, "doc_big", i, { content: randomBytes(24), vector: randomBytes(16), terms: i % 3 === 0 ? null : randomBytes(8) }));
    await chunks.commitDocument("doc_big", many, null, 1);
    const back = await chunks.ofDocument("doc_big");
    assert.equal(back.length, 6100);
    assert.deepEqual(back, many.map((c) => ({ ...c, terms: c.terms ?? null })));
    const picked = [many[0]!, many[2501]!, many[6099]!];
    assert.deepEqual((await chunks.byIds(picked.map((c) => c.id))).sort((a, b) => a.index - b.index), picked.map((c) => ({ ...c, terms: c.terms ?? null })));
  });

  it("reads a corpus's chunks and index sources page by page, each once, in id order; content only where no analysis is stored", async () => {
    const { store, chunks } = await open();
    await addDocument(store, "doc_1");
    await addDocument(store, "doc_2");
    await addDocument(store, "doc_b", "corp_b");
    const ids = ["chk_B", "chk_a", "chk_A", "chk_c", "chk_0", "chk_z", "chk_Z"];
    const mine = ids.map((id, i) => chunk(id, i % 2 ? "doc_1" : "doc_2", Math.floor(i / 2), { terms: i % 3 === 0 ? null : randomBytes(8) }));
    await chunks.commitDocument("doc_1", mine.filter((c) => c.documentId === "doc_1"), null, 1);
    await chunks.commitDocument("doc_2", mine.filter((c) => c.documentId === "doc_2"), null, 1);
    await chunks.commitDocument("doc_b", [chunk("chk_other", "doc_b", 0, { corpusId: "corp_b" })], null, 1);

    const sorted = [...mine].sort((a, b) => binary(a.id, b.id));
    assert.deepEqual(await chunks.idsOfCorpus("corp_a", 2), sorted.map((c) => c.id), "ascending binary order, across pages");
    for (const pageSize of [2, 3, 7, 100]) {
      const walked = await collect(chunks.iterateCorpus("corp_a", pageSize));
      assert.deepEqual(
        walked.map((c) => c.id).sort(binary),
        sorted.map((c) => c.id),
        `every chunk once with pages of ${pageSize}`,
      );
      const sources = await collect(chunks.iterateIndexSources("corp_a", pageSize));
      assert.deepEqual(sources.sort((a, b) => binary(a.id, b.id)), sorted.map(source));
    }
    assert.deepEqual(await chunks.indexSourcesOf(["chk_z", "chk_a", "chk_gone"]), [mine[5]!, mine[1]!].map(source).sort((a, b) => binary(a.id, b.id)));
    assert.deepEqual(await chunks.indexSourcesOf([]), []);
    assert.deepEqual(await chunks.idsOfCorpus("corp_none"), []);
  });

  it("reads content, stores analyses made later (skipping chunks deleted meanwhile), and finds a chunk's neighbours", async () => {
    const { store, chunks } = await open();
    await addDocument(store, "doc_1");
    const three = [0, 1, 2].map((i) => chunk(`chk_${i}`, "doc_1", i, { terms: null }));
    await chunks.commitDocument("doc_1", three, null, 1);
    assert.deepEqual(await chunks.contentOf("chk_1"), three[1]!.content);
    assert.equal(await chunks.contentOf("chk_gone"), undefined);

    const terms = randomBytes(12);
    await chunks.setTerms([
      { id: "chk_1", terms },
      { id: "chk_gone", terms: randomBytes(4) },
    ]);
    await chunks.setTerms([]);
    const [one] = await chunks.byIds(["chk_1"]);
    assert.deepEqual(one?.terms, terms);
    assert.equal((await chunks.byIds(["chk_0"]))[0]?.terms, null);

    const middle = await chunks.neighbours("doc_1", 1);
    assert.deepEqual([middle.before?.id, middle.after?.id], ["chk_0", "chk_2"]);
    const start = await chunks.neighbours("doc_1", 0);
    assert.deepEqual([start.before, start.after?.id], [undefined, "chk_1"]);
    const end = await chunks.neighbours("doc_1", 2);
    assert.deepEqual([end.before?.id, end.after], ["chk_1", undefined]);
    assert.deepEqual(await chunks.byIds([]), []);
    assert.deepEqual(await chunks.byIds(["chk_gone"]), []);
  });
});
