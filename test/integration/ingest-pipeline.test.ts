/**
 * The pipelined indexer (issue 34, many small documents): documents parsed ahead, several
 * documents' passages embedded in one engine call, groups committed in one transaction.
 * Against the path of one document at a time (`rag.indexing.batchDocuments: 1`) on the same
 * files: the same chunks, vectors and search results. A document that fails in a group
 * fails alone; documents deleted while their group is under way leave nothing behind.
 * (The kill during a group is in ingest-pipeline-crash.test.ts.)
 */
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { Writable } from "node:stream";
import { after, describe, it } from "node:test";
import { openContent, openTerms, openVector, type ChunkContent } from "../../src-server/rag/chunk-codec.js";
import { CorpusKeyring } from "../../src-server/security/corpus-keyring.js";
import { LocalKeyFileProvider } from "../../src-server/security/local-key-file-provider.js";
import { CorpusStore } from "../../src-server/store/corpus-store.js";
import { openSqlDatabase } from "../../src-server/store/sql-database.js";
import { buildPdf, type PdfPage } from "../fixtures/documents/build-pdf.js";
import { REPO_ROOT, testModel } from "../helpers/models.js";
import { collectEvents, evalDoc, upload, waitForStatus, type UploadFile } from "../helpers/rag.js";
import { startTestServer } from "../helpers/test-server.js";

const SCIFACT = path.resolve(REPO_ROOT, "..", "shared", "evalsets", "scifact");
const ABSTRACTS = readFileSync(path.join(SCIFACT, "corpus.jsonl"), "utf8")
  .split("\n")
  .filter((l) => l.trim())
  .slice(0, 400)
  .map((l) => JSON.parse(l) as { _id: string; title: string; text: string });
/** The pipelined settings under test: small groups and a small passage cap, so that groups, the large-document lane and parse-ahead all run. */
const PIPELINED = { batchDocuments: 6, parseAhead: 8, maxGroupChunks: 24 };

const abstractFile = (d: { _id: string; title: string; text: string }): UploadFile => ({ name: `${d._id}.txt`, content: `${d.title}\n\n${d.text}` });

/** A PDF of several pages from abstracts (more passages than a group holds: it is embedded on its own). */
function longPdf(): UploadFile {
  const pages: PdfPage[] = [];
  for (let p = 0; p < 6; p++) {
    const texts: PdfPage["texts"] = [{ x: 56, y: 780, size: 14, text: `Section ${p + 1}: ${ABSTRACTS[300 + p]!.title.slice(0, 80)}` }];
    const words = ABSTRACTS.slice(300 + p * 4, 304 + p * 4).map((d) => d.text).join(" ");
    let y = 760;
    for (let i = 0; i < words.length && y > 60; i += 95, y -= 13) texts.push({ x: 56, y, size: 10, text: words.slice(i, i + 95) });
    pages.push({ texts });
  }
  return { name: "abstracts-digest.pdf", content: Buffer.from(buildPdf(pages)) };
}

interface StoredChunk {
  index: number;
  start: number;
  end: number;
  pageStart: number | null;
  pageEnd: number | null;
  tokenCount: number;
  content: ChunkContent;
  terms: unknown;
  vector: Float32Array;
}

/** Every document of the data folder's store by file name, with its chunks decrypted (the server is closed). */
async function storedDocuments(dataDir: string): Promise<Map<string, { status: string; chunkCount: number; pageCount: number | null; chunks: StoredChunk[] }>> {
  const store = await openSqlDatabase({ kind: "sqlite", dataDir });
  try {
    const keyring = new CorpusKeyring(new LocalKeyFileProvider(path.join(dataDir, "keys", "kek.bin")), new CorpusStore(store));
    const out = new Map<string, { status: string; chunkCount: number; pageCount: number | null; chunks: StoredChunk[] }>();
    for (const d of await store.db.selectFrom("documents").selectAll().execute()) {
      const cipher = await keyring.cipher(d.corpus_id);
      const rows = await store.db.selectFrom("chunks").selectAll().where("document_id", "=", d.id).orderBy("idx").execute();
      out.set(d.filename, {
        status: d.status,
        chunkCount: d.chunk_count,
        pageCount: d.page_count,
        chunks: rows.map((r) => ({
          index: r.idx,
          start: r.start_offset,
          end: r.end_offset,
          pageStart: r.page_start,
          pageEnd: r.page_end,
          tokenCount: r.token_count,
          content: openContent(cipher, r.id, r.content),
          terms: r.terms && openTerms(cipher, r.id, r.terms),
          vector: openVector(cipher, r.id, r.vector),
        })),
      });
    }
    const orphans = await store.db.selectFrom("chunks").leftJoin("documents", "documents.id", "chunks.document_id").select("chunks.id").where("documents.id", "is", null).execute();
    assert.equal(orphans.length, 0, "no chunk without its document");
    return out;
  } finally {
    await store.close();
  }
}

const cosine = (a: Float32Array, b: Float32Array) => {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i]! * b[i]!;
    na += a[i]! ** 2;
    nb += b[i]! ** 2;
  }
  return dot / Math.sqrt(na * nb);
};

interface Indexed {
  dataDir: string;
  /** Per query: the hits (file and passage) and their scores. */
  searches: { passage: string; score: number }[][];
  /** Per document id: its events in the order received. */
  events: Map<string, { object: string; status?: string; stage?: string; timings?: unknown }[]>;
  names: Map<string, string>;
}

const QUERIES = [...ABSTRACTS.slice(0, 40).map((d) => d.title), "effects of vitamin D on bone density", "transcription factors in stem cell differentiation"];

/** Indexes `files` on a fresh server with the given indexing settings, searches, and keeps the data folder. */
async function indexWith(indexing: Record<string, number>, files: UploadFile[]): Promise<Indexed> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), "pustaka-pipeline-"));
  const t = await startTestServer({ bindings: { minilm: testModel("all-minilm-l6-v2") }, dataDir, rendererDir: null, config: { rag: { maxFilesPerUpload: 1000, indexing } } });
  try {
    const corpusId = (await t.call("POST", "/v1/rag/corpora", { name: "pipeline", embedding_model: "minilm" })).json.id as string;
    const events = collectEvents(`${t.url}/v1/rag/corpora/${corpusId}/events?until=ready`, t.key, () => false);
    const res = await upload(t, corpusId, files);
    assert.equal(res.status, 202, JSON.stringify(res.json));
    assert.equal(res.json.documents.length, files.length);
    const ready = await waitForStatus(t, corpusId, 900_000);
    assert.equal(ready.status, "ready", JSON.stringify(ready.document_counts));
    const byDocument = new Map<string, { object: string; status?: string; stage?: string; timings?: unknown }[]>();
    for (const e of await events) if (e.document_id) byDocument.set(e.document_id, [...(byDocument.get(e.document_id) ?? []), e]);
    const names = new Map<string, string>((res.json.documents as { id: string; filename: string }[]).map((d) => [d.id, d.filename]));
    const searches = [];
    for (const search of ["vector", "keyword", "hybrid"]) {
      for (const query of QUERIES) {
        const found = await t.call("POST", `/v1/rag/corpora/${corpusId}/search`, { query, top_k: 12, search });
        assert.equal(found.status, 200, JSON.stringify(found.json));
        searches.push((found.json.data as { document_id: string; text: string; score: number }[]).map((h) => ({ passage: `${search} ${names.get(h.document_id)!}: ${h.text.slice(0, 60)}`, score: h.score })));
      }
    }
    return { dataDir, searches, events: byDocument, names };
  } finally {
    await t.close();
  }
}

describe("pipelined indexing", () => {
  const folders: string[] = [];
  after(() => {
    for (const dir of folders) rmSync(dir, { recursive: true, force: true });
  });

  it("indexes to the same chunks, vectors and search results as one document at a time", async () => {
    const files = [...ABSTRACTS.slice(0, 40).map(abstractFile), ...["banjir-kelantan-2022.md", "notis-gangguan-bekalan-air-klang.html", "rural-broadband-midterm-review.txt"].map(evalDoc), longPdf()];
    const alone = await indexWith({ batchDocuments: 1 }, files);
    folders.push(alone.dataDir);
    const piped = await indexWith(PIPELINED, files);
    folders.push(piped.dataDir);

    const expected = await storedDocuments(alone.dataDir);
    const actual = await storedDocuments(piped.dataDir);
    assert.equal(actual.size, files.length);
    assert.ok(expected.get("abstracts-digest.pdf")!.chunkCount > PIPELINED.maxGroupChunks, "the PDF has more passages than a group holds");
    for (const [file, want] of expected) {
      const got = actual.get(file);
      assert.ok(got, `${file} is stored`);
      assert.equal(got.status, "indexed", file);
      assert.deepEqual([got.chunkCount, got.pageCount], [want.chunkCount, want.pageCount], file);
      assert.equal(got.chunks.length, want.chunks.length, `${file}: each chunk once`);
      for (const [i, w] of want.chunks.entries()) {
        const g: StoredChunk = got.chunks[i]!;
        const { vector: wv, ...wRest } = w;
        const { vector: gv, ...gRest } = g;
        assert.deepEqual(gRest, wRest, `${file} chunk ${i}: text, offsets, pages, context and keyword terms`);
        // Passages evaluated beside other documents' passages: the same vector up to float rounding.
        assert.ok(cosine(gv, wv) > 0.9999, `${file} chunk ${i}: vector (cosine ${cosine(gv, wv)})`);
      }
    }
    // The same ten best passages in the same order with the same scores, up to float rounding
    // (vector scores within 1e-3; hybrid scores, normalised over the candidates, within 1e-2;
    // keyword scores exactly but for float32 rounding):
    // two passages scored within that of each other (a tie) may swap places.
    let same = 0;
    let compared = 0;
    for (const [q, want] of alone.searches.entries()) {
      const got = piped.searches[q]!;
      const mode = want[0]?.passage.split(" ")[0] ?? "";
      // Keyword (BM25) scores are unbounded: within float32 rounding of their size.
      const tolerance = mode === "hybrid" ? 1e-2 : mode === "vector" ? 1e-3 : 1e-5 * Math.max(1, Math.abs(want[0]?.score ?? 1));
      assert.equal(got.length, want.length, `query ${q}: as many hits`);
      for (let i = 0; i < Math.min(10, want.length); i++) {
        assert.ok(Math.abs(got[i]!.score - want[i]!.score) <= tolerance, `query ${q} rank ${i}: score ${got[i]!.score} against ${want[i]!.score}`);
        const tie = [want[i - 1], want[i + 1]].some((other) => other !== undefined && Math.abs(other.score - want[i]!.score) <= 2 * tolerance);
        if (!tie) assert.equal(got[i]!.passage, want[i]!.passage, `query ${q} rank ${i}`);
        if (got[i]!.passage === want[i]!.passage) same++;
        compared++;
      }
    }
    assert.ok(same >= compared * 0.95, `${same} of ${compared} hits identical`);

    // Each document's events in order: processing, its progress, then indexed with its timings.
    const stages = ["parsing", "chunking", "embedding", "storing"];
    for (const [documentId, events] of piped.events) {
      const file = piped.names.get(documentId);
      const statuses = events.filter((e) => e.object === "rag.document.status").map((e) => e.status);
      assert.deepEqual(statuses.slice(-2), ["processing", "indexed"], `${file}: ${statuses.join(", ")}`);
      const processing = events.findIndex((e) => e.status === "processing");
      const progress = events.filter((e) => e.object === "rag.document.progress").map((e) => stages.indexOf(e.stage!));
      assert.ok(events.slice(0, processing).every((e) => e.object !== "rag.document.progress"), `${file}: progress after processing`);
      assert.deepEqual(progress, [...progress].sort((a, b) => a - b), `${file}: stages in order`);
      assert.deepEqual([...new Set(progress)], [0, 1, 2, 3], `${file}: every stage reported`);
      const indexed = events.at(-1) as { timings?: { parse_ms: number; embed_ms: number; embed_tokens: number; store_ms: number } };
      assert.ok(indexed.timings && indexed.timings.embed_ms >= 0 && indexed.timings.parse_ms >= 0, `${file}: timings`);
      assert.ok(indexed.timings.embed_tokens > 0, `${file}: tokens embedded (${indexed.timings.embed_tokens})`);
    }
    // The tokens embedded, shared among a group's documents, add up to what each document alone
    // costs (within each document's rounding).
    const tokensOf = (run: typeof piped) => [...run.events.values()].reduce((sum, events) => sum + ((events.at(-1) as { timings?: { embed_tokens: number } }).timings?.embed_tokens ?? 0), 0);
    assert.ok(tokensOf(alone) > 0);
    assert.ok(Math.abs(tokensOf(piped) - tokensOf(alone)) <= files.length, `tokens embedded: ${tokensOf(piped)} pipelined, ${tokensOf(alone)} alone`);
  });

  it("fails a document alone within its group, and leaves nothing of documents deleted while their group is under way", async () => {
    const logs: string[] = [];
    const logStream = new Writable({ write: (chunk: Buffer, _encoding, done) => (logs.push(chunk.toString()), done()) });
    const t = await startTestServer({ bindings: { minilm: testModel("all-minilm-l6-v2") }, rendererDir: null, logStream, config: { rag: { maxFilesPerUpload: 1000, indexing: PIPELINED } } });
    try {
      const corpusId = (await t.call("POST", "/v1/rag/corpora", { name: "faults", embedding_model: "minilm", chunking: "paragraph" })).json.id as string;
      const good = ABSTRACTS.slice(100, 148).map(abstractFile);
      // A PDF that cannot be read (fails its parse), and a text whose only passage has no
      // token to embed (fails the group's embedding call, then its own).
      const broken: UploadFile[] = [
        { name: "broken.pdf", content: Buffer.from("%PDF-1.7\n1 0 obj << /Type /Catalog >> endobj\ntrailer garbage") },
        { name: "invisible.txt", content: "\u200b\u200b\u200b \u200b\u200b" },
      ];
      const files = [...good.slice(0, 10), broken[0]!, ...good.slice(10, 20), broken[1]!, ...good.slice(20)];
      const res = await upload(t, corpusId, files);
      assert.equal(res.status, 202, JSON.stringify(res.json));
      const ids = new Map<string, string>((res.json.documents as { id: string; filename: string }[]).map((d) => [d.filename, d.id]));
      assert.equal(ids.size, files.length);

      // Delete documents queued, and documents the pipeline has taken (processing: parsed
      // ahead, or in a group being embedded), as soon as some are.
      const deleted = new Set<string>([good[5]!.name, good[30]!.name]);
      for (const name of deleted) assert.equal((await t.call("DELETE", `/v1/rag/corpora/${corpusId}/documents/${ids.get(name)}`)).status, 200);
      for (let tries = 0; tries < 3000; tries++) {
        const processing = (await t.call("GET", `/v1/rag/corpora/${corpusId}/documents?status=processing&limit=100`)).json.data as { id: string; filename: string }[];
        const victims = processing.filter((d) => !deleted.has(d.filename) && !d.filename.includes(".pdf") && d.filename !== "invisible.txt").slice(0, 3);
        if (victims.length >= 2) {
          for (const v of victims) {
            const gone = await t.call("DELETE", `/v1/rag/corpora/${corpusId}/documents/${v.id}`);
            assert.equal(gone.status, 200, JSON.stringify(gone.json));
            deleted.add(v.filename);
          }
          break;
        }
        await new Promise((r) => setTimeout(r, 20));
      }
      assert.ok(deleted.size >= 4, "documents were deleted while the pipeline had them");

      const ready = await waitForStatus(t, corpusId, 900_000);
      assert.equal(ready.status, "ready");
      const listed = new Map<string, { status: string; error: { code: string } | null; chunk_count: number }>();
      for (let after: string | null = null; ; ) {
        const page: { data: { filename: string; status: string; error: { code: string } | null; chunk_count: number }[]; has_more: boolean; last_id: string } = (await t.call("GET", `/v1/rag/corpora/${corpusId}/documents?limit=100&order=asc${after ? `&after=${after}` : ""}`)).json;
        for (const d of page.data) listed.set(d.filename, d);
        if (!page.has_more) break;
        after = page.last_id;
      }
      assert.equal(listed.size, files.length - deleted.size);
      for (const name of deleted) assert.ok(!listed.has(name), `${name} is gone`);
      assert.equal(listed.get("broken.pdf")!.status, "failed");
      assert.equal(listed.get("broken.pdf")!.error!.code, "corrupt_document");
      assert.equal(listed.get("invisible.txt")!.status, "failed");
      assert.equal(listed.get("invisible.txt")!.error!.code, "indexing_failed");
      assert.match(logs.join(""), /could not be embedded together; embedding each document on its own/, "the group's embedding failed, then each of its documents was embedded alone");
      for (const [name, d] of listed) if (name.endsWith(".txt") && name !== "invisible.txt") assert.equal(d.status, "indexed", `${name} indexed despite the failures beside it`);
      assert.equal(ready.document_counts.indexed, good.length - deleted.size);
      assert.equal(ready.chunk_count, [...listed.values()].reduce((sum, d) => sum + d.chunk_count, 0), "the corpus holds exactly its documents' chunks");

      // Nothing of the deleted documents is found.
      for (const name of deleted) {
        const title = ABSTRACTS.find((d) => `${d._id}.txt` === name)!.title;
        const found = await t.call("POST", `/v1/rag/corpora/${corpusId}/search`, { query: title, top_k: 20 });
        assert.ok((found.json.data as { document_id: string }[]).every((h) => h.document_id !== ids.get(name)), `${name} is not found`);
      }
    } finally {
      await t.close();
    }
  });
});
