import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { CorpusKeyring } from "../../security/corpus-keyring.js";
import { LocalKeyFileProvider } from "../../security/local-key-file-provider.js";
import { ChunkStore, type SealedChunk } from "../../store/chunk-store.js";
import { CorpusStore } from "../../store/corpus-store.js";
import { openDatabase, type Database } from "../../store/database.js";
import { DocumentStore } from "../../store/document-store.js";
import { WorkspaceStore } from "../../store/workspace-store.js";
import { openTerms, sealContent, sealTerms, sealVector } from "../chunk-codec.js";
import type { DataCipher } from "../../security/data-cipher.js";
import { CorpusIndexes } from "./corpus-indexes.js";
import { analyzeChunk } from "./keyword-analysis.js";

describe("CorpusIndexes: rebuilding a corpus's index from the encrypted store", () => {
  let dir: string;
  let db: Database;
  let chunks: ChunkStore;
  let keyring: CorpusKeyring;
  let cipher: DataCipher;
  const corpusId = "corp_open";
  const vector = (i: number) => new Float32Array([1, i, 0, 0]);

  function chunk(id: string, documentId: string, index: number, text: string, terms: Buffer | null): SealedChunk {
    return { id, corpusId, documentId, index, start: 0, end: text.length, pageStart: null, pageEnd: null, tokenCount: 5, content: sealContent(cipher, id, { text, headingPath: [] }), vector: sealVector(cipher, id, vector(index)), terms };
  }

  before(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), "pustaka-indexes-"));
    db = openDatabase(dir);
    const corpora = new CorpusStore(db);
    const documents = new DocumentStore(db);
    chunks = new ChunkStore(db);
    new WorkspaceStore(db).insert({ id: "ws_default", name: "test", createdAt: 0 });
    keyring = new CorpusKeyring(new LocalKeyFileProvider(path.join(dir, "kek.bin")), corpora);
    corpora.insert({ id: corpusId, workspaceId: "ws_default", name: "open", chunking: "fixed", embeddingModel: "synthetic", dimensions: 4, embeddingPrompts: { query: "", document: "" }, rerankModel: null, retentionDays: 30, metadata: {}, createdAt: 0, updatedAt: 0 }, await keyring.create(corpusId));
    cipher = await keyring.cipher(corpusId);
    for (const id of ["doc_old", "doc_new"]) documents.insert({ id, corpusId, filename: `${id}.md`, contentType: "text/markdown", format: "md", bytes: 1, sha256: id.padEnd(64, "0"), status: "processing", error: null, pageCount: null, chunkCount: 0, metadata: {}, attempts: 1, createdAt: 0, updatedAt: 0, indexedAt: null });
    // A chunk stored before analyses were kept, one with an analysis of an older version, and
    // one whose stored analysis deliberately differs from its text (to see which is used).
    chunks.commitDocument("doc_old", [chunk("chk_1", "doc_old", 0, "Banjir melanda Kelantan", null)], null, 0);
    const olderVersion = cipher.seal(Buffer.from(JSON.stringify({ v: 0, language: "en", terms: "stale" })), "chunk:chk_2:terms");
    chunks.commitDocument("doc_new", [chunk("chk_2", "doc_new", 0, "Durian harvest in Pahang", olderVersion), chunk("chk_3", "doc_new", 1, "Rubber prices fell", sealTerms(cipher, "chk_3", { terms: "zebra", language: "en" }))], null, 0);
  });
  after(() => {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("uses stored analyses without reading the text, and analyses and stores the rest", async () => {
    const indexes = new CorpusIndexes(chunks, keyring);
    try {
      const index = await indexes.get(corpusId);
      const keyword = async (text: string) => (await index.search({ mode: "keyword", text, vector: null, topK: 3 })).map((h) => h.chunkId);
      assert.deepEqual(await keyword("zebra"), ["chk_3"], "the stored analysis is what is indexed");
      assert.deepEqual(await keyword("rubber"), []);
      assert.deepEqual(await keyword("banjir"), ["chk_1"], "a chunk without one is analysed from its text");
      assert.deepEqual(await keyword("durian"), ["chk_2"], "an analysis of another version is redone");
      assert.deepEqual(await keyword("stale"), []);
      const [one, two] = chunks.byIds(["chk_1", "chk_2"]).sort((a, b) => a.id.localeCompare(b.id));
      assert.deepEqual(openTerms(cipher, "chk_1", one!.terms!), analyzeChunk("Banjir melanda Kelantan"), "the analysis is stored for next time");
      assert.deepEqual(openTerms(cipher, "chk_2", two!.terms!), analyzeChunk("Durian harvest in Pahang"));
      assert.ok(!one!.terms!.includes(Buffer.from("banjir")), "sealed, never plaintext");
      const hits = await index.search({ mode: "vector", text: "", vector: vector(1), topK: 1 });
      assert.equal(hits[0]?.chunkId, "chk_3", "vectors decrypt to what was sealed");
    } finally {
      await indexes.close();
    }
  });

  it("refuses a stored analysis sealed for another chunk", () => {
    const [three] = chunks.byIds(["chk_3"]);
    assert.throws(() => openTerms(cipher, "chk_1", three!.terms!));
  });
});
