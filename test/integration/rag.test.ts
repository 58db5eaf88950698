/**
 * Grounded answers end to end over HTTP with real models: corpus → upload a batch →
 * events → ready → query (plain and streamed) → the right document cited; "not in the
 * corpus"; 409 while indexing; other workspaces see nothing; delete leaves nothing behind.
 */
import assert from "node:assert/strict";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import BetterSqlite3 from "better-sqlite3";
import { testModel } from "../helpers/models.js";
import { collectEvents, evalDoc, upload, waitForStatus } from "../helpers/rag.js";
import { readSse, startTestServer, type TestServer } from "../helpers/test-server.js";

const DOCS = ["banjir-kelantan-2022.md", "floods-pahang-2023-briefing.md", "lrt-laluan-bayu-q2-2024.md", "notis-gangguan-bekalan-air-klang.html", "rural-broadband-midterm-review.txt"];

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? filesUnder(path.join(dir, e.name)) : [path.join(dir, e.name)]));
}

describe("grounded answers", () => {
  let t: TestServer;
  let corpusId: string;
  before(async () => {
    t = await startTestServer({
      bindings: { "svc-merlion-13b": testModel("smollm2-135m-instruct"), minilm: testModel("all-minilm-l6-v2"), "svc-embed-1024": testModel("embed-1024") },
      // 0.3 separates on- from off-topic for all-MiniLM-L6-v2 (see `npm run eval`); the gate is per model.
      config: { chat: { contextSize: 2048, sequences: 2 }, rag: { chunkTargetTokens: 120, minSimilarity: 0.3 } },
    });
  });
  after(() => t.close());

  it("creates corpora with the guide's defaults and validates input", async () => {
    const created = await t.call("POST", "/v1/rag/corpora", { name: "Defaults" });
    assert.equal(created.status, 201);
    assert.match(created.json.id, /^corp_/);
    assert.equal(created.json.object, "rag.corpus");
    assert.equal(created.json.chunking, "semantic");
    assert.equal(created.json.embedding_model, "svc-embed-1024");
    assert.equal(created.json.dimensions, 1024);
    assert.equal(created.json.status, "empty");
    assert.equal(created.json.retention_days, 30);
    assert.deepEqual(created.json.document_counts, { queued: 0, processing: 0, indexed: 0, failed: 0, total: 0 });
    const badChunking = await t.call("POST", "/v1/rag/corpora", { name: "x", chunking: "sentences" });
    assert.equal(badChunking.status, 400);
    assert.equal(badChunking.json.error.param, "chunking");
    const badModel = await t.call("POST", "/v1/rag/corpora", { name: "x", embedding_model: "nope" });
    assert.equal(badModel.status, 404);
    assert.equal(badModel.json.error.param, "embedding_model");
    const chatModel = await t.call("POST", "/v1/rag/corpora", { name: "x", embedding_model: "svc-merlion-13b" });
    assert.equal(chatModel.status, 400, "a chat model cannot index a corpus");
    assert.equal(chatModel.json.error.code, "model_not_embedding");
    assert.equal(chatModel.json.error.param, "embedding_model");
    const patched = await t.call("PATCH", `/v1/rag/corpora/${created.json.id}`, { retention_days: 7, name: "Renamed" });
    assert.equal(patched.json.retention_days, 7);
    assert.equal(patched.json.name, "Renamed");
    assert.equal((await t.call("PATCH", `/v1/rag/corpora/${created.json.id}`, {})).status, 400);
    const listed = await t.call("GET", "/v1/rag/corpora?limit=1");
    assert.equal(listed.json.data.length, 1);
    assert.equal(listed.json.has_more, false);
  });

  it("uploads a batch, rejects bad files alone, streams progress and becomes ready", async () => {
    corpusId = (await t.call("POST", "/v1/rag/corpora", { name: "Malaysia briefings", embedding_model: "minilm" })).json.id;
    const events = collectEvents(`${t.url}/v1/rag/corpora/${corpusId}/events`, t.key, (e) => e.object === "rag.corpus.snapshot" && e.corpus.status === "ready");
    const names: (string | undefined)[] = [];
    const untilReady = collectEvents(`${t.url}/v1/rag/corpora/${corpusId}/events?until=ready`, t.key, () => false, undefined, names);
    const program = Buffer.from("7f454c4602010100000000000000000002003e00", "hex");
    const res = await upload(t, corpusId, [...DOCS.map(evalDoc), { name: "program.txt", content: program }, { ...evalDoc(DOCS[0]!), name: "copy-of-banjir.md" }, { name: "empty.md", content: "" }], { source: "eval", year: 2024 });
    assert.equal(res.status, 202, JSON.stringify(res.json));
    assert.equal(res.json.object, "rag.upload");
    assert.equal(res.json.documents.length, DOCS.length);
    assert.ok(res.json.documents.every((d: any) => d.status === "queued" && /^doc_/.test(d.id) && d.metadata.source === "eval" && d.metadata.year === 2024));
    const rejectedCodes = Object.fromEntries(res.json.rejected.map((r: any) => [r.filename, r.error.code]));
    assert.deepEqual(rejectedCodes, { "program.txt": "unsupported_file_type", "copy-of-banjir.md": "duplicate_document", "empty.md": "empty_file" });

    const busy = await t.call("POST", `/v1/rag/corpora/${corpusId}/query`, { question: "Bilakah banjir berlaku?" });
    assert.equal(busy.status, 409, "a corpus still indexing must answer 409");
    assert.equal(busy.json.error.code, "corpus_not_ready");

    const seen = await events;
    const statuses = seen.filter((e) => e.object === "rag.document.status");
    for (const doc of res.json.documents) assert.ok(statuses.some((e) => e.document_id === doc.id && e.status === "indexed"), `no indexed event for ${doc.filename}`);
    assert.ok(seen.some((e) => e.object === "rag.document.progress" && e.stage === "embedding"), "no embedding progress");
    // ?until=ready ends the stream by itself, with named events and a final `end`.
    const followed = await untilReady;
    assert.deepEqual(followed.at(-1), { object: "rag.corpus.events.end", reason: "ready" });
    assert.equal(followed.at(-2).object, "rag.corpus.snapshot");
    assert.equal(followed.at(-2).corpus.status, "ready");
    assert.deepEqual(names, [...followed.slice(0, -1).map((e) => e.object), "end"], "each event is named after its object");
    const settled = await collectEvents(`${t.url}/v1/rag/corpora/${corpusId}/events?until=ready`, t.key, () => false);
    assert.deepEqual(settled.map((e) => e.object), ["rag.corpus.snapshot", "rag.corpus.events.end"], "a ready corpus ends the stream at once");
    assert.equal((await t.call("GET", `/v1/rag/corpora/${corpusId}/events?until=done`)).status, 400);
    const ready = await waitForStatus(t, corpusId);
    assert.equal(ready.status, "ready");
    assert.equal(ready.document_counts.indexed, DOCS.length);
    assert.ok(ready.chunk_count >= DOCS.length);
    const docs = (await t.call("GET", `/v1/rag/corpora/${corpusId}/documents?order=asc`)).json.data;
    assert.ok(docs.every((d: any) => d.chunk_count > 0 && d.indexed_at > 0 && d.sha256.length === 64));
  });

  it("answers from the right document with citations, plain and streamed", async () => {
    const question = "Which LRT line is discussed in the second quarter 2024 report, and what was its ridership?";
    const res = await t.call("POST", `/v1/rag/corpora/${corpusId}/query`, { question, top_k: 3, include_citations: false, max_tokens: 60 });
    assert.equal(res.status, 200, JSON.stringify(res.json));
    assert.equal(res.json.object, "rag.answer");
    assert.equal(res.json.grounded, true);
    assert.match(res.json.id, /^ans_/);
    assert.ok(res.json.answer.length > 0);
    assert.ok(res.json.citations.length > 0, "citations are returned even when include_citations is false");
    assert.equal(res.json.citations[0].filename, "lrt-laluan-bayu-q2-2024.md");
    for (const c of res.json.citations) {
      assert.deepEqual(Object.keys(c).sort(), ["chunk_id", "cited", "document_id", "filename", "heading_path", "index", "metadata", "page", "page_end", "page_start", "score", "support", "text"]);
      assert.equal(typeof c.cited, "boolean");
    }
    assert.ok(Array.isArray(res.json.sentences) && res.json.sentences.every((s: any) => s.end <= res.json.answer.length && s.citations.every((n: number) => n >= 1 && n <= res.json.citations.length)));
    assert.ok(res.json.usage.prompt_tokens > 0 && res.json.usage.completion_tokens > 0);

    const streamed = await fetch(`${t.url}/v1/rag/corpora/${corpusId}/query`, {
      method: "POST",
      headers: { authorization: `Bearer ${t.key}`, "content-type": "application/json" },
      body: JSON.stringify({ question, top_k: 3, stream: true, max_tokens: 60 }),
    });
    assert.match(streamed.headers.get("content-type") ?? "", /^text\/event-stream/);
    const events = (await readSse(streamed)) as any[];
    const deltas = events.filter((e) => e.object === "rag.answer.delta");
    assert.ok(deltas.length > 1);
    assert.ok(deltas.every((d) => d.id === events.at(-1).id));
    const final = events.at(-1);
    assert.equal(final.object, "rag.answer.citations", "the citation event ends the stream");
    assert.equal(final.grounded, true);
    assert.equal(final.citations[0].filename, "lrt-laluan-bayu-q2-2024.md");
    assert.ok(final.usage.completion_tokens > 0);
    assert.ok(!events.includes("[DONE]"));
  });

  it("says the corpus does not contain an answer instead of inventing one", async () => {
    const en = await t.call("POST", `/v1/rag/corpora/${corpusId}/query`, { question: "What is the melting point of tungsten in kelvin?" });
    assert.equal(en.json.answer, "The corpus does not contain information that answers this question.");
    assert.equal(en.json.grounded, false, "an answer without sources says so in a field, not only in words");
    assert.ok(en.json.citations.every((c: any) => c.cited === false));
    assert.ok(Array.isArray(en.json.citations));
    // Keyword search trusts any match; a Malay question about something absent matches nothing.
    const ms = await t.call("POST", `/v1/rag/corpora/${corpusId}/query`, { question: "Siapakah pengarang novel Salina?", search: "keyword" });
    assert.equal(ms.json.answer, "Korpus ini tidak mengandungi maklumat untuk menjawab soalan ini.");
    assert.deepEqual(ms.json.citations, []);
  });

  it("refuses malformed uploads as a whole, and fails hostile documents alone", async () => {
    const tooMany = await upload(t, corpusId, Array.from({ length: 101 }, (_, i) => ({ name: `n${i}.txt`, content: `note ${i}` })));
    assert.equal(tooMany.status, 400);
    assert.equal(tooMany.json.error.code, "too_many_files");
    const badMetadata = await upload(t, corpusId, [{ name: "a.txt", content: "alpha" }], "{not json");
    assert.equal(badMetadata.status, 400);
    assert.equal(badMetadata.json.error.code, "invalid_metadata");
    const arrayMetadata = await upload(t, corpusId, [{ name: "a.txt", content: "alpha" }], "[1,2]");
    assert.equal(arrayMetadata.status, 400);
    const nothing = await upload(t, corpusId, [{ name: "x.exe", content: Buffer.from("4d5a90000300000004000000ffff", "hex") }]);
    assert.equal(nothing.status, 415, "nothing accepted: a 4xx, with the reasons");
    assert.equal(nothing.json.rejected[0].error.code, "unsupported_file_type");
    const json = await fetch(`${t.url}/v1/rag/corpora/${corpusId}/documents`, { method: "POST", headers: { authorization: `Bearer ${t.key}`, "content-type": "application/json" }, body: "{}" });
    assert.equal(json.status, 415);
    const before = (await t.call("GET", `/v1/rag/corpora/${corpusId}`)).json.document_counts.total;
    assert.equal(before, DOCS.length, "refused uploads leave no documents behind");

    // A "PDF" that ends half way: accepted by type, then fails alone at indexing.
    const broken = await upload(t, corpusId, [{ name: "broken.pdf", content: "%PDF-1.7\n1 0 obj << /Type /Catalog /Pages 2 0 R >>\nendobj\n2 0 obj << /Type /Pa" }]);
    assert.equal(broken.status, 202);
    const after = await waitForStatus(t, corpusId);
    assert.equal(after.status, "ready", "one failed document does not fail the corpus");
    const failed = (await t.call("GET", `/v1/rag/corpora/${corpusId}/documents/${broken.json.documents[0].id}`)).json;
    assert.equal(failed.status, "failed");
    assert.equal(failed.error.code, "corrupt_document");
    assert.equal(after.document_counts.failed, 1, "the corpus record counts its failed document");
    const listedFailed = (await t.call("GET", `/v1/rag/corpora/${corpusId}/documents?status=failed`)).json.data;
    assert.deepEqual(listedFailed.map((d: any) => d.id), [failed.id], "?status=failed lists exactly the failed documents");
    assert.equal((await t.call("GET", `/v1/rag/corpora/${corpusId}/documents?status=broken`)).status, 400);
    assert.equal((await t.call("DELETE", `/v1/rag/corpora/${corpusId}/documents/${failed.id}`)).status, 200);
    assert.equal((await t.call("GET", `/v1/rag/corpora/${corpusId}/documents/${failed.id}`)).status, 404);
  });

  it("refuses a multipart body cut short with a 400, keeps serving, and leaves no partial file", async () => {
    const id = (await t.call("POST", "/v1/rag/corpora", { name: "cut", embedding_model: "minilm" })).json.id;
    const res = await fetch(`${t.url}/v1/rag/corpora/${id}/documents`, {
      method: "POST",
      headers: { authorization: `Bearer ${t.key}`, "content-type": "multipart/form-data; boundary=zzz" },
      body: '--zzz\r\nContent-Disposition: form-data; name="file"; filename="a.txt"\r\n\r\nthe body ends here without its boundary',
    });
    assert.equal(res.status, 400);
    assert.equal(((await res.json()) as any).error.code, "invalid_multipart");
    const dir = path.join(t.dataDir, "blobs", id);
    assert.deepEqual(existsSync(dir) ? readdirSync(dir) : [], []);
    assert.equal((await t.call("GET", "/healthz", undefined, null)).status, 200);
    await t.call("DELETE", `/v1/rag/corpora/${id}`);
  });

  it("fails an upload cleanly (500, no hang, nothing left behind) when storage fails, then recovers", async () => {
    const id = (await t.call("POST", "/v1/rag/corpora", { name: "storage", embedding_model: "minilm" })).json.id;
    // A file where the corpus's blob folder must go: every write fails.
    mkdirSync(path.join(t.dataDir, "blobs"), { recursive: true });
    writeFileSync(path.join(t.dataDir, "blobs", id), "in the way");
    const failed = await upload(t, id, [{ name: "a.md", content: "# A\n\nalpha" }, { name: "b.md", content: "# B\n\nbeta" }]);
    assert.equal(failed.status, 500);
    assert.equal(failed.json.error.code, "storage_failed");
    assert.equal((await t.call("GET", `/v1/rag/corpora/${id}`)).json.document_counts.total, 0);
    rmSync(path.join(t.dataDir, "blobs", id));
    const ok = await upload(t, id, [{ name: "a.md", content: "# A\n\nalpha" }]);
    assert.equal(ok.status, 202);
    await t.call("DELETE", `/v1/rag/corpora/${id}`);
  });

  it("filters retrieval on document metadata", async () => {
    const none = await t.call("POST", `/v1/rag/corpora/${corpusId}/search`, { query: "banjir", filter: { source: "elsewhere" } });
    assert.deepEqual(none.json.data, []);
    const some = await t.call("POST", `/v1/rag/corpora/${corpusId}/search`, { query: "banjir", filter: { source: "eval", year: 2024 }, search: "keyword" });
    assert.ok(some.json.data.length > 0);
  });

  it("embeds passages and queries with the corpus's prompts (multilingual-e5's query:/passage: and the like)", async () => {
    const minilm = (await t.call("POST", "/v1/rag/corpora", { name: "no prompts", embedding_model: "minilm" })).json;
    assert.deepEqual(minilm.embedding_prompts, { query: "", document: "" }, "all-MiniLM wants none");
    const prompts = { query: "query: ", document: "passage: " };
    const id = (await t.call("POST", "/v1/rag/corpora", { name: "prompted", embedding_model: "minilm", chunking: "paragraph", embedding_prompts: prompts })).json.id;
    assert.equal((await upload(t, id, [{ name: "note.txt", content: "The Pahang river flooded Kuantan in January 2023." }])).status, 202);
    await waitForStatus(t, id);
    const question = "When did Kuantan flood?";
    const hit = (await t.call("POST", `/v1/rag/corpora/${id}/search`, { query: question, search: "vector", top_k: 1 })).json.data[0];
    const embed = async (text: string) => (await t.call("POST", "/v1/embeddings", { model: "minilm", input: text })).json.data[0].embedding as number[];
    const cosine = (a: number[], b: number[]) => a.reduce((s, x, i) => s + x * b[i]!, 0) / Math.sqrt(a.reduce((s, x) => s + x * x, 0) * b.reduce((s, x) => s + x * x, 0));
    const withPrompts = cosine(await embed(`query: ${question}`), await embed(`passage: ${hit.text}`));
    const without = cosine(await embed(question), await embed(hit.text));
    assert.ok(Math.abs(hit.score - withPrompts) < 1e-3, `the score ${hit.score} is the prompted cosine ${withPrompts} (unprompted: ${without})`);
    assert.ok(Math.abs(withPrompts - without) > 1e-3, "the prompts change the vectors, so the check above can fail");
    assert.equal((await t.call("POST", "/v1/rag/corpora", { name: "x", embedding_model: "minilm", embedding_prompts: { query: "q" } })).status, 400);
  });

  it("embeds and keyword-indexes each passage with its document's title and headings, and cites the passage alone", async () => {
    const id = (await t.call("POST", "/v1/rag/corpora", { name: "context lines", embedding_model: "minilm", chunking: "paragraph" })).json.id;
    const shelters = "The school halls open at six in the evening. Each hall keeps blankets, drinking water and a first-aid kit for two hundred people, and volunteers register every family on arrival.";
    const transport = "Buses leave from the bus terminal every thirty minutes while the roads stay open. Boats of the fire and rescue department take over when the water rises above half a metre.";
    // Paragraphs of about 100 tokens each, against the 120-token target: a passage per paragraph.
    const markdown = `# Kuantan flood relief plan\n\n## Shelters\n\n${shelters} ${shelters}\n\n${shelters} ${shelters}\n\n## Transport\n\n${transport} ${transport}\n\n${transport} ${transport}`;
    const text = `Temerloh evacuation notes\n\n${shelters} ${shelters}\n\n${transport} ${transport}\n\n${transport} ${transport}`;
    assert.equal((await upload(t, id, [{ name: "plan.md", content: markdown }, { name: "notes.txt", content: text }])).status, 202);
    assert.equal((await waitForStatus(t, id)).status, "ready");
    // The title's words find every passage of its document, though most do not contain them.
    const byTitle = async (word: string, filename: string) => {
      const hits = (await t.call("POST", `/v1/rag/corpora/${id}/search`, { query: word, search: "keyword", top_k: 20 })).json.data as { filename: string; text: string; heading_path: string[] }[];
      return hits.filter((h) => h.filename === filename);
    };
    for (const [word, filename] of [["Kuantan", "plan.md"], ["Temerloh", "notes.txt"]] as const) {
      const hits = await byTitle(word, filename);
      assert.ok(hits.length >= 3, `${word}: ${hits.length} passages of ${filename}`);
      assert.ok(hits.some((h) => !h.text.includes(word)), `${word} reaches passages that do not contain it`);
    }
    // The passage is embedded after its context line ("title › headings") and shown without it.
    const transportHit = (await byTitle("Kuantan", "plan.md")).find((h) => h.text.startsWith("Buses"))!;
    assert.ok(transportHit, "the Transport section's passage, which starts without its heading");
    assert.deepEqual(transportHit.heading_path, ["Kuantan flood relief plan", "Transport"]);
    const question = "When do the buses leave?";
    const vectorHit = ((await t.call("POST", `/v1/rag/corpora/${id}/search`, { query: question, search: "vector", top_k: 20 })).json.data as { filename: string; text: string; score: number }[]).find((h) => h.filename === "plan.md" && h.text === transportHit.text)!;
    const embed = async (input: string) => (await t.call("POST", "/v1/embeddings", { model: "minilm", input })).json.data[0].embedding as number[];
    const cosine = (a: number[], b: number[]) => a.reduce((sum, x, i) => sum + x * b[i]!, 0) / Math.sqrt(a.reduce((sum, x) => sum + x * x, 0) * b.reduce((sum, x) => sum + x * x, 0));
    const withContext = cosine(await embed(question), await embed(`Kuantan flood relief plan › Transport\n\n${transportHit.text}`));
    const bare = cosine(await embed(question), await embed(transportHit.text));
    assert.ok(Math.abs(vectorHit.score - withContext) < 1e-3, `score ${vectorHit.score} is the cosine with the context line ${withContext} (without: ${bare})`);
    assert.ok(Math.abs(withContext - bare) > 1e-3, "the context line changes the vector, so the check above can fail");
  });

  it("hides corpora from other workspaces (404, never the data)", async () => {
    const ws = (await t.call("POST", "/v1/admin/workspaces", { name: "Other team" })).json;
    const key = (await t.call("POST", `/v1/admin/workspaces/${ws.id}/api_keys`, { name: "k" })).json.secret;
    for (const [method, route, body] of [
      ["GET", `/v1/rag/corpora/${corpusId}`],
      ["GET", `/v1/rag/corpora/${corpusId}/documents`],
      ["POST", `/v1/rag/corpora/${corpusId}/query`, { question: "banjir" }],
      ["DELETE", `/v1/rag/corpora/${corpusId}`],
    ] as [string, string, unknown?][]) {
      const res = await t.call(method, route, body, key);
      assert.equal(res.status, 404, `${method} ${route}`);
      assert.equal(res.json.error.code, "corpus_not_found");
    }
    assert.equal((await upload(t, corpusId, [evalDoc(DOCS[1]!)], undefined, key)).status, 404);
    assert.deepEqual((await t.call("GET", "/v1/rag/corpora", undefined, key)).json.data, []);
  });

  it("keeps no plaintext chunk text or vector anywhere in the data directory", async () => {
    const search = await t.call("POST", `/v1/rag/corpora/${corpusId}/search`, { query: "LRT ridership", top_k: 1 });
    const chunkText: string = search.json.data[0].text;
    const vector = (await t.call("POST", "/v1/embeddings", { model: "minilm", input: chunkText })).json.data[0].embedding as number[];
    const vectorBytes = Buffer.from(new Float32Array(vector).buffer).subarray(0, 64);
    const phrase = Buffer.from(chunkText.slice(0, 60), "utf8");
    const files = filesUnder(t.dataDir).filter((f) => statSync(f).isFile());
    assert.ok(files.some((f) => f.endsWith("pustaka.db")));
    for (const file of files) {
      const bytes = readFileSync(file);
      assert.equal(bytes.indexOf(phrase), -1, `plaintext chunk text in ${file}`);
      assert.equal(bytes.indexOf(vectorBytes), -1, `plaintext vector bytes in ${file}`);
    }
  });

  it("deletes a corpus irreversibly: rows, originals and the in-memory index", async () => {
    assert.ok(t.server.indexes.isLoaded(corpusId));
    const res = await t.call("DELETE", `/v1/rag/corpora/${corpusId}`);
    assert.equal(res.status, 200);
    assert.equal(res.json.object, "rag.corpus.deleted");
    assert.equal(res.json.deleted, true);
    assert.ok(Math.abs(res.json.tombstone_expires_at - (Date.now() / 1000 + 30 * 86400)) < 120);
    assert.equal((await t.call("GET", `/v1/rag/corpora/${corpusId}`)).status, 404);
    assert.equal(t.server.indexes.isLoaded(corpusId), false);
    assert.equal(existsSync(path.join(t.dataDir, "blobs", corpusId)), false);
    const db = new BetterSqlite3(path.join(t.dataDir, "pustaka.db"), { readonly: true });
    try {
      for (const table of ["documents", "chunks"]) {
        assert.equal((db.prepare(`SELECT COUNT(*) AS n FROM ${table} WHERE corpus_id = ?`).get(corpusId) as { n: number }).n, 0, table);
      }
      const key = db.prepare("SELECT destroy_after FROM corpus_keys WHERE corpus_id = ?").get(corpusId) as { destroy_after: number };
      assert.equal(key.destroy_after, res.json.tombstone_expires_at, "the key outlives the corpus only until the retention window ends");
    } finally {
      db.close();
    }
  });
});
