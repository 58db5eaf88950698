/**
 * OpenAI's Files and Vector Stores over corpora, with the official `openai` npm client
 * against the real server (multilingual-e5-small, the bilingual eval documents): upload,
 * vector stores that are corpora, uploadAndPoll (files and batches), search with the right
 * document first for English and Malay questions, attribute filters, pagination, modify,
 * static chunking, delete, expiry on an advanced clock, batch cancel, scopes, workspaces,
 * and bad input answered in OpenAI's error shape, never a 500.
 */
import assert from "node:assert/strict";
import { readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import fc from "fast-check";
import OpenAI, { toFile } from "openai";
import type { Clock } from "../../src-server/domain/clock.js";
import { testModel } from "../helpers/models.js";
import { EVAL_DOCS } from "../helpers/rag.js";
import { startTestServer, type TestServer } from "../helpers/test-server.js";

const DOCS = {
  kelantan: { file: "banjir-kelantan-2022.md", lang: "ms", year: 2022, topic: "floods" },
  pahang: { file: "floods-pahang-2023-briefing.md", lang: "en", year: 2023, topic: "floods" },
  sawit: { file: "eksport-minyak-sawit-2023.md", lang: "ms", year: 2023, topic: "palm oil" },
  leave: { file: "employee-leave-policy.md", lang: "en", year: 2024, topic: "hr" },
} as const;
type DocName = keyof typeof DOCS;

/** Questions of the eval set (test/fixtures/eval/questions.json), half of them asked across languages. */
const QUESTIONS: { question: string; doc: DocName }[] = [
  { question: "Berapakah bilangan kemuncak mangsa di pusat pemindahan sementara semasa banjir Kelantan November 2022?", doc: "kelantan" },
  { question: "Mengapakah amaran awal melalui SMS di Pasir Mas sampai lewat berbanding kenaikan air sungai?", doc: "kelantan" },
  { question: "For how long did ship handling stop at the state's main seaport during the Pahang floods of early 2023?", doc: "pahang" },
  { question: "How much did the Federal Government approve under the Pahang Flood Recovery Envelope?", doc: "pahang" },
  { question: "Which country bought the most Malaysian palm oil in 2023, and how much did it take?", doc: "sawit" },
  { question: "Berapa banyak minyak sawit yang masih tersimpan dalam negara pada penghujung 2023?", doc: "sawit" },
  { question: "How many days of unused annual leave can be carried forward under HR-POL-012?", doc: "leave" },
  { question: "Berapa hari cuti haji berbayar diberikan oleh Teraju Analytics?", doc: "leave" },
];
/**
 * Asked across languages about the two flood reports, which compete with each other: the
 * corpus search ranks the right one second, not first (as `/v1/rag/.../search` does); it must
 * be among the first results.
 */
const HARD_QUESTIONS: { question: string; doc: DocName }[] = [
  { question: "During the late-2022 monsoon floods, what peak river level was recorded at the royal jetty gauge in Kelantan?", doc: "kelantan" },
  { question: "Berapa hektar kawasan tanaman yang musnah akibat banjir Pahang pada awal tahun 2023?", doc: "pahang" },
];

const MAX_FILE_BYTES = 256 * 1024;
const bytesOf = (name: DocName) => readFileSync(path.join(EVAL_DOCS, DOCS[name].file));
const upload = (name: DocName) => toFile(bytesOf(name), DOCS[name].file);
const poll = { pollIntervalMs: 200 };

/** The status and body of a failed call, in OpenAI's error shape; fails the test if it succeeded or is not such an error. */
async function refused(call: Promise<unknown>): Promise<{ status: number; error: { message: string; type: string; param: string | null; code: string | null } }> {
  try {
    await call;
  } catch (error) {
    assert.ok(error instanceof OpenAI.APIError, `expected an API error, got ${String(error)}`);
    assert.ok(error.status !== undefined && error.status >= 400 && error.status < 500, `a 4xx, not ${error.status}: ${error.message}`);
    const body = error.error as { message: string; type: string; param: string | null; code: string | null };
    assert.equal(typeof body.message, "string");
    assert.equal(typeof body.type, "string");
    assert.ok("param" in body && "code" in body, JSON.stringify(body));
    return { status: error.status, error: body };
  }
  assert.fail("the call succeeded");
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? filesUnder(path.join(dir, e.name)) : [path.join(dir, e.name)]));
}

describe("OpenAI Files and Vector Stores on corpora (official openai client)", () => {
  let t: TestServer;
  let client: OpenAI;
  /** The server's clock: real time plus what a test adds (expiry without waiting days). */
  let offsetMs = 0;
  const clock: Clock = { now: () => Date.now() + offsetMs };
  const fileIds = {} as Record<DocName, string>;
  let storeId: string;

  before(async () => {
    t = await startTestServer({ bindings: { e5: testModel("multilingual-e5-small") }, clock, config: { rag: { maxFileBytes: MAX_FILE_BYTES } } });
    client = new OpenAI({ apiKey: t.key, baseURL: `${t.url}/v1`, maxRetries: 0, timeout: 300_000 });
  });
  after(() => t?.close());

  it("uploads files for a purpose, sealed at rest, and lists, retrieves, reads and refuses them as OpenAI does", async () => {
    for (const name of Object.keys(DOCS) as DocName[]) {
      const file = await client.files.create({ file: await upload(name), purpose: name === "leave" ? "user_data" : "assistants" });
      assert.match(file.id, /^file-[0-9A-Za-z]{24}$/);
      assert.equal(file.object, "file");
      assert.equal(file.bytes, bytesOf(name).length);
      assert.equal(file.filename, DOCS[name].file);
      assert.equal(file.purpose, name === "leave" ? "user_data" : "assistants");
      assert.equal(file.status, "processed");
      assert.ok(Math.abs(file.created_at - clock.now() / 1000) < 60);
      fileIds[name] = file.id;
    }
    const read = await client.files.content(fileIds.kelantan);
    assert.deepEqual(Buffer.from(await read.arrayBuffer()), bytesOf("kelantan"));
    assert.deepEqual(await client.files.retrieve(fileIds.pahang), { id: fileIds.pahang, object: "file", bytes: bytesOf("pahang").length, created_at: (await client.files.retrieve(fileIds.pahang)).created_at, filename: DOCS.pahang.file, purpose: "assistants", status: "processed", expires_at: null, status_details: null });

    // Nothing in the data folder holds a file's text: the uploads are sealed.
    const phrase = Buffer.from("Tambatan Diraja");
    assert.ok(bytesOf("kelantan").includes(phrase));
    for (const f of filesUnder(t.dataDir)) if (statSync(f).size < 64 * 1024 * 1024) assert.ok(!readFileSync(f).includes(phrase), `plaintext in ${f}`);

    const all = await client.files.list();
    assert.deepEqual(all.data.map((f) => f.id).sort(), Object.values(fileIds).sort());
    assert.deepEqual((await client.files.list({ purpose: "user_data" })).data.map((f) => f.id), [fileIds.leave]);
    // Pages of two, oldest first, walked by the client to the end: the whole list in order (ties in the second ordered by id).
    const seen: string[] = [];
    for await (const f of client.files.list({ limit: 2, order: "asc" })) seen.push(f.id);
    assert.deepEqual(seen, (await client.files.list({ order: "asc" })).data.map((f) => f.id));
    assert.deepEqual(seen.toReversed(), all.data.map((f) => f.id), "newest first by default");
    const firstPage = await client.files.list({ limit: 3, order: "asc" });
    assert.equal(firstPage.has_more, true);

    const wrongPurpose = await refused(client.files.create({ file: await upload("pahang"), purpose: "fine-tune" }));
    assert.equal(wrongPurpose.status, 400);
    assert.equal(wrongPurpose.error.param, "purpose");
    assert.equal(wrongPurpose.error.type, "invalid_request_error");
    const huge = await refused(client.files.create({ file: await toFile(Buffer.alloc(MAX_FILE_BYTES + 10, 65), "huge.txt"), purpose: "assistants" }));
    assert.equal(huge.status, 413);
    assert.equal(huge.error.code, "file_too_large");
    const empty = await refused(client.files.create({ file: await toFile(Buffer.alloc(0), "empty.txt"), purpose: "assistants" }));
    assert.equal(empty.status, 400);
    assert.equal(empty.error.code, "empty_file");
    const unknown = await refused(client.files.retrieve("file-doesnotexist0000000000000"));
    assert.equal(unknown.status, 404);
    assert.equal(unknown.error.message, "No such File object: file-doesnotexist0000000000000");
    assert.equal((await refused(client.files.content("file-nothing"))).status, 404);
    // None of the refused uploads was kept.
    assert.equal((await client.files.list()).data.length, 4);
  });

  it("creates a vector store that is a corpus, fills it with uploadAndPoll, batches and attributes", async () => {
    const store = await client.vectorStores.create({ name: "Taklimat Malaysia", metadata: { team: "analysts" }, file_ids: [fileIds.kelantan] });
    assert.match(store.id, /^vs_[0-9A-Za-z]{24}$/);
    assert.equal(store.object, "vector_store");
    assert.equal(store.name, "Taklimat Malaysia");
    assert.deepEqual(store.metadata, { team: "analysts" });
    assert.equal(store.file_counts.total, 1);
    storeId = store.id;
    const corpusId = `corp_${store.id.slice(3)}`;

    // One file attached with its attributes, polled until indexed.
    const pahang = await client.vectorStores.files.createAndPoll(store.id, { file_id: fileIds.pahang, attributes: { lang: "en", year: 2023, topic: "floods" } }, poll);
    assert.equal(pahang.id, fileIds.pahang);
    assert.equal(pahang.object, "vector_store.file");
    assert.equal(pahang.status, "completed", JSON.stringify(pahang.last_error));
    assert.equal(pahang.vector_store_id, store.id);
    assert.deepEqual(pahang.attributes, { lang: "en", year: 2023, topic: "floods" });
    assert.deepEqual(pahang.chunking_strategy, { type: "other" });
    assert.ok(pahang.usage_bytes > 0);
    // A batch with per-file attributes.
    const batch = await client.vectorStores.fileBatches.createAndPoll(
      store.id,
      {
        files: [
          { file_id: fileIds.sawit, attributes: { lang: "ms", year: 2023, topic: "palm oil" } },
          { file_id: fileIds.leave, attributes: { lang: "en", year: 2024, topic: "hr" } },
        ],
      },
      poll,
    );
    assert.match(batch.id, /^vsfb_/);
    assert.equal(batch.object, "vector_store.files_batch");
    assert.equal(batch.status, "completed");
    assert.deepEqual(batch.file_counts, { in_progress: 0, completed: 2, failed: 0, cancelled: 0, total: 2 });
    assert.deepEqual((await client.vectorStores.fileBatches.listFiles(batch.id, { vector_store_id: store.id })).data.map((f) => f.id).sort(), [fileIds.sawit, fileIds.leave].sort());
    // The file the store was created with, given its attributes now.
    await client.vectorStores.files.poll(store.id, fileIds.kelantan, poll);
    const kelantan = await client.vectorStores.files.update(fileIds.kelantan, { vector_store_id: store.id, attributes: { lang: "ms", year: 2022, topic: "floods" } });
    assert.deepEqual(kelantan.attributes, { lang: "ms", year: 2022, topic: "floods" });

    const ready = await client.vectorStores.retrieve(store.id);
    assert.equal(ready.status, "completed");
    assert.deepEqual(ready.file_counts, { in_progress: 0, completed: 4, failed: 0, cancelled: 0, total: 4 });
    assert.ok(ready.usage_bytes > 0);
    assert.ok(ready.last_active_at !== null && ready.last_active_at >= ready.created_at);

    // It is a corpus: the workbench's API sees it, with the four documents and their attributes as metadata.
    const corpus = await t.call("GET", `/v1/rag/corpora/${corpusId}`);
    assert.equal(corpus.status, 200);
    assert.equal(corpus.json.name, "Taklimat Malaysia");
    assert.equal(corpus.json.document_counts.indexed, 4);
    const documents = (await t.call("GET", `/v1/rag/corpora/${corpusId}/documents`)).json.data;
    assert.deepEqual(documents.find((d: any) => d.filename === DOCS.sawit.file).metadata, { lang: "ms", year: 2023, topic: "palm oil" });

    // The files list: a filter by status, and pages.
    assert.equal((await client.vectorStores.files.list(store.id, { filter: "completed" })).data.length, 4);
    assert.equal((await client.vectorStores.files.list(store.id, { filter: "failed" })).data.length, 0);
    const pages: string[] = [];
    let page = await client.vectorStores.files.list(store.id, { limit: 3, order: "asc" });
    pages.push(...page.data.map((f) => f.id));
    assert.equal(page.has_more, true);
    while (page.hasNextPage()) {
      page = await page.getNextPage();
      pages.push(...page.data.map((f) => f.id));
    }
    const whole = (await client.vectorStores.files.list(store.id, { order: "asc" })).data.map((f) => f.id);
    assert.deepEqual(pages, whole);
    assert.deepEqual([...whole].sort(), Object.values(fileIds).sort());
    const before = await t.call("GET", `/v1/vector_stores/${store.id}/files?limit=2&order=asc&before=${whole[3]}`);
    assert.deepEqual(before.json.data.map((f: any) => f.id), whole.slice(1, 3));
    assert.equal(before.json.first_id, whole[1]);
    assert.equal(before.json.last_id, whole[2]);
    assert.equal(before.json.has_more, true);

    // Parsed content, as indexed.
    const content = [];
    for await (const part of client.vectorStores.files.content(fileIds.kelantan, { vector_store_id: store.id })) content.push(part);
    assert.ok(content.every((p) => p.type === "text"));
    assert.match(content.map((p) => p.text).join("\n"), /Tambatan Diraja/);

    // uploadAndPoll: a file uploaded and attached in one call (a second store, for a later test).
    const other = await client.vectorStores.create({ name: "Banjir sahaja" });
    const uploaded = await client.vectorStores.files.uploadAndPoll(other.id, await upload("kelantan"), poll);
    assert.equal(uploaded.status, "completed");
    assert.equal((await client.files.retrieve(uploaded.id)).purpose, "assistants");
    const batchUploaded = await client.vectorStores.fileBatches.uploadAndPoll(other.id, { files: [await upload("pahang"), await upload("sawit")] }, poll);
    assert.equal(batchUploaded.status, "completed");
    assert.equal(batchUploaded.file_counts.completed, 2);
    assert.equal((await client.vectorStores.retrieve(other.id)).file_counts.completed, 3);
  });

  it("searches: the right document first for questions in English and Malay, through the corpus search", async () => {
    for (const { question, doc } of QUESTIONS) {
      const page = await client.vectorStores.search(storeId, { query: question, max_num_results: 5 });
      const results = page.data;
      assert.ok(results.length > 0 && results.length <= 5, question);
      assert.equal(results[0]!.filename, DOCS[doc].file, `${question} → ${results.map((r) => r.filename).join(", ")}`);
      assert.equal(results[0]!.file_id, fileIds[doc]);
      assert.deepEqual(results[0]!.attributes, { lang: DOCS[doc].lang, year: DOCS[doc].year, topic: DOCS[doc].topic });
      assert.equal(results[0]!.content[0]!.type, "text");
      assert.ok(results[0]!.content[0]!.text.length > 0);
      for (let i = 1; i < results.length; i++) assert.ok(results[i - 1]!.score >= results[i]!.score, "best first");
    }
    for (const { question, doc } of HARD_QUESTIONS) {
      const results = (await client.vectorStores.search(storeId, { query: question, max_num_results: 3 })).data;
      assert.ok(results.some((r) => r.file_id === fileIds[doc]), `${question} → ${results.map((r) => r.filename).join(", ")}`);
    }
    // The raw page as OpenAI writes it.
    const raw = await t.call("POST", `/v1/vector_stores/${storeId}/search`, { query: QUESTIONS[0]!.question, max_num_results: 2 });
    assert.equal(raw.status, 200);
    assert.equal(raw.json.object, "vector_store.search_results.page");
    assert.deepEqual(raw.json.search_query, [QUESTIONS[0]!.question]);
    assert.equal(raw.json.has_more, false);
    assert.equal(raw.json.next_page, null);
    assert.equal(raw.json.data.length, 2);
    // The same corpus through Pustaka's own search finds the same first passage.
    const native = await t.call("POST", `/v1/rag/corpora/corp_${storeId.slice(3)}/search`, { query: QUESTIONS[0]!.question, top_k: 2 });
    assert.equal(native.json.data[0].text, raw.json.data[0].content[0].text);
    assert.equal(native.json.data[0].score, raw.json.data[0].score);
    // Several queries at once: each passage once, at its best score.
    const both = await client.vectorStores.search(storeId, { query: [QUESTIONS[0]!.question, QUESTIONS[4]!.question], max_num_results: 10 });
    const files = new Set(both.data.map((r) => r.filename));
    assert.ok(files.has(DOCS.kelantan.file) && files.has(DOCS.sawit.file), [...files].join(", "));
    // A score threshold and no reranking.
    const all = (await client.vectorStores.search(storeId, { query: QUESTIONS[3]!.question, max_num_results: 10, ranking_options: { ranker: "none" } })).data;
    const threshold = all[Math.floor(all.length / 2)]!.score;
    const above = (await client.vectorStores.search(storeId, { query: QUESTIONS[3]!.question, max_num_results: 10, ranking_options: { ranker: "none", score_threshold: threshold } })).data;
    assert.ok(above.length > 0 && above.length < all.length && above.every((r) => r.score >= threshold));
    assert.equal((await client.vectorStores.search(storeId, { query: "banjir", rewrite_query: true })).data.length > 0, true);
  });

  it("filters on attributes: comparisons, in and nin, and compound filters", async () => {
    const question = QUESTIONS[0]!.question;
    const search = async (filters: Parameters<typeof client.vectorStores.search>[1]["filters"]) => (await client.vectorStores.search(storeId, { query: question, max_num_results: 20, filters })).data;
    const malay = await search({ type: "eq", key: "lang", value: "ms" });
    assert.ok(malay.length > 0 && malay.every((r) => r.attributes?.lang === "ms"));
    assert.ok(new Set(malay.map((r) => r.filename)).size === 2);
    const recent = await search({ type: "gte", key: "year", value: 2023 });
    assert.ok(recent.length > 0 && recent.every((r) => (r.attributes?.year as number) >= 2023));
    assert.ok(!recent.some((r) => r.filename === DOCS.kelantan.file), "the 2022 report is filtered out even where it is the best match");
    const floodsNotMalay = await search({ type: "and", filters: [{ type: "eq", key: "topic", value: "floods" }, { type: "ne", key: "lang", value: "ms" }] });
    assert.ok(floodsNotMalay.length > 0 && floodsNotMalay.every((r) => r.filename === DOCS.pahang.file));
    const either = await search({ type: "or", filters: [{ type: "eq", key: "topic", value: "hr" }, { type: "eq", key: "year", value: 2022 }] });
    assert.deepEqual(new Set(either.map((r) => r.filename)), new Set([DOCS.leave.file, DOCS.kelantan.file]));
    const listed = await search({ type: "in", key: "topic", value: ["palm oil", "hr"] });
    assert.deepEqual(new Set(listed.map((r) => r.filename)), new Set([DOCS.sawit.file, DOCS.leave.file]));
    const excluded = await search({ type: "nin", key: "topic", value: ["floods"] });
    assert.ok(excluded.length > 0 && excluded.every((r) => r.attributes?.topic !== "floods"));
    assert.deepEqual(await search({ type: "eq", key: "lang", value: "fr" }), [], "nothing passes: nothing found, no error");
    // New attributes are searched on at once.
    await client.vectorStores.files.update(fileIds.leave, { vector_store_id: storeId, attributes: { lang: "en", year: 2024, topic: "hr", confidential: true } });
    assert.deepEqual(new Set((await search({ type: "eq", key: "confidential", value: true })).map((r) => r.filename)), new Set([DOCS.leave.file]));
  });

  it("modifies a store, and honours static chunking", async () => {
    const updated = await client.vectorStores.update(storeId, { name: "Taklimat (dikemas kini)", metadata: { team: "analysts", quarter: "Q3" }, expires_after: { anchor: "last_active_at", days: 30 } });
    assert.equal(updated.name, "Taklimat (dikemas kini)");
    assert.deepEqual(updated.metadata, { team: "analysts", quarter: "Q3" });
    assert.deepEqual(updated.expires_after, { anchor: "last_active_at", days: 30 });
    assert.equal(updated.expires_at, updated.last_active_at! + 30 * 86400);
    assert.equal((await t.call("GET", `/v1/rag/corpora/corp_${storeId.slice(3)}`)).json.name, "Taklimat (dikemas kini)");
    const cleared = await client.vectorStores.update(storeId, { expires_after: null });
    assert.equal(cleared.expires_after, undefined);
    assert.equal(cleared.expires_at, null);

    // The same file in windows of 100 and of 2000 tokens (cut to what the embedding model reads).
    const windows = async (max: number) => {
      const store = await client.vectorStores.create({ name: `Windows of ${max}`, file_ids: [fileIds.sawit], chunking_strategy: { type: "static", static: { max_chunk_size_tokens: max, chunk_overlap_tokens: 20 } } });
      const file = await client.vectorStores.files.poll(store.id, fileIds.sawit, poll);
      assert.equal(file.status, "completed");
      assert.deepEqual(file.chunking_strategy, { type: "static", static: { max_chunk_size_tokens: max, chunk_overlap_tokens: 20 } });
      const chunks = (await t.call("GET", `/v1/rag/corpora/corp_${store.id.slice(3)}/documents`)).json.data[0].chunk_count as number;
      await client.vectorStores.delete(store.id);
      return chunks;
    };
    const fine = await windows(100);
    const coarse = await windows(2000);
    assert.ok(fine > 2 * coarse, `100-token windows (${fine} chunks) cut finer than the largest the model reads (${coarse})`);
  });

  it("stops a batch on cancel: what was still indexing is cancelled and its document deleted", async () => {
    const store = await client.vectorStores.create({ name: "Cancelled" });
    const batch = await client.vectorStores.fileBatches.create(store.id, { file_ids: [fileIds.kelantan, fileIds.pahang, fileIds.sawit, fileIds.leave] });
    assert.equal(batch.status, "in_progress");
    assert.equal(batch.file_counts.total, 4);
    const cancelled = await client.vectorStores.fileBatches.cancel(batch.id, { vector_store_id: store.id });
    assert.equal(cancelled.status, "cancelled");
    // The indexer takes one document at a time, each a run of the model: four are never all done between two requests.
    assert.ok(cancelled.file_counts.cancelled >= 1, JSON.stringify(cancelled.file_counts));
    // Whatever was mid-way finishes; then the corpus holds exactly the files that completed.
    let files;
    for (;;) {
      files = (await client.vectorStores.fileBatches.listFiles(batch.id, { vector_store_id: store.id })).data;
      if (!files.some((f) => f.status === "in_progress")) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    assert.ok(files.every((f) => f.status === "cancelled" || f.status === "completed"), files.map((f) => f.status).join(", "));
    const completed = files.filter((f) => f.status === "completed").length;
    assert.equal((await t.call("GET", `/v1/rag/corpora/corp_${store.id.slice(3)}`)).json.document_counts.total, completed);
    assert.equal((await client.vectorStores.fileBatches.listFiles(batch.id, { vector_store_id: store.id, filter: "cancelled" })).data.length, 4 - completed);
    await client.vectorStores.delete(store.id);
  });

  it("marks a file it cannot read failed, with last_error", async () => {
    // An executable's header: no format Pustaka reads (a PNG would be read by OCR).
    const png = await client.files.create({ file: await toFile(Buffer.from("7f454c4602010100000000000000000002003e00", "hex"), "program.txt"), purpose: "assistants" });
    const store = await client.vectorStores.create({ name: "Bad files" });
    const failed = await client.vectorStores.files.createAndPoll(store.id, { file_id: png.id }, poll);
    assert.equal(failed.status, "failed");
    assert.equal(failed.last_error?.code, "unsupported_file");
    assert.match(failed.last_error?.message ?? "", /unsupported file type/);
    const retrieved = await client.vectorStores.retrieve(store.id);
    assert.deepEqual(retrieved.file_counts, { in_progress: 0, completed: 0, failed: 1, cancelled: 0, total: 1 });
    assert.deepEqual((await client.vectorStores.search(store.id, { query: "anything" })).data, [], "an empty store finds nothing");
    await client.vectorStores.delete(store.id);
    await client.files.delete(png.id);
  });

  it("expires a store after its days without activity: its documents go, it answers expired, the files stay", async () => {
    const store = await client.vectorStores.create({ name: "Short-lived", file_ids: [fileIds.leave], expires_after: { anchor: "last_active_at", days: 1 } });
    await client.vectorStores.files.poll(store.id, fileIds.leave, poll);
    const corpusId = `corp_${store.id.slice(3)}`;
    // A file kept for an hour (OpenAI's `expires_after` of files, sent as form fields).
    const hourly = await client.files.create({ file: await upload("pahang"), purpose: "assistants", expires_after: { anchor: "created_at", seconds: 3600 } });
    assert.equal(hourly.expires_at, hourly.created_at + 3600);
    await client.vectorStores.files.createAndPoll(store.id, { file_id: hourly.id }, poll);
    const live = await client.vectorStores.retrieve(store.id);
    assert.equal(live.status, "completed");
    assert.equal(live.expires_at, live.last_active_at! + 86400);
    assert.ok((await client.vectorStores.search(store.id, { query: "annual leave" })).data.length > 0);
    offsetMs += 2 * 86400 * 1000;
    try {
      const expired = await client.vectorStores.retrieve(store.id);
      assert.equal(expired.status, "expired");
      assert.equal(expired.file_counts.total, 0, "its files' documents went with it");
      const search = await refused(client.vectorStores.search(store.id, { query: "annual leave" }));
      assert.equal(search.status, 400);
      assert.equal(search.error.code, "vector_store_expired");
      assert.match(search.error.message, /is expired/);
      assert.equal((await refused(client.vectorStores.files.create(store.id, { file_id: fileIds.leave }))).error.code, "vector_store_expired");
      // The documents went as any deletion goes: tombstones, kept for the corpus's retention.
      assert.equal((await t.call("GET", `/v1/rag/corpora/${corpusId}`)).json.document_counts.total, 0);
      const tombstones = (await t.call("GET", "/v1/admin/tombstones")).json.data;
      assert.ok(tombstones.some((ts: any) => ts.corpus_id === corpusId && ts.kind === "document"));
      assert.equal((await client.files.retrieve(fileIds.leave)).id, fileIds.leave, "the file stays");
      assert.equal((await refused(client.files.retrieve(hourly.id))).status, 404, "a file past its own expiry is gone");
      assert.ok(!(await client.files.list()).data.some((f) => f.id === hourly.id));
      assert.ok((await client.vectorStores.list()).data.some((s) => s.id === store.id && s.status === "expired"));
      // Another store is untouched (it has no expiry).
      assert.equal((await client.vectorStores.retrieve(storeId)).status, "completed");
    } finally {
      offsetMs = 0;
    }
    await client.vectorStores.delete(store.id);
  });

  it("detaches and deletes: the documents go, the files stay until deleted, then leave every store", async () => {
    const store = await client.vectorStores.create({ name: "To delete", file_ids: [fileIds.kelantan, fileIds.pahang] });
    await client.vectorStores.files.poll(store.id, fileIds.kelantan, poll);
    await client.vectorStores.files.poll(store.id, fileIds.pahang, poll);
    const corpusId = `corp_${store.id.slice(3)}`;
    const detached = await client.vectorStores.files.delete(fileIds.pahang, { vector_store_id: store.id });
    assert.deepEqual(detached, { id: fileIds.pahang, object: "vector_store.file.deleted", deleted: true });
    assert.equal((await t.call("GET", `/v1/rag/corpora/${corpusId}`)).json.document_counts.total, 1);
    assert.equal((await refused(client.vectorStores.files.retrieve(fileIds.pahang, { vector_store_id: store.id }))).status, 404);
    assert.equal((await client.files.retrieve(fileIds.pahang)).id, fileIds.pahang);

    const deleted = await client.vectorStores.delete(store.id);
    assert.deepEqual(deleted, { id: store.id, object: "vector_store.deleted", deleted: true });
    const gone = await refused(client.vectorStores.retrieve(store.id));
    assert.equal(gone.status, 404);
    assert.equal(gone.error.message, `No vector store found with id '${store.id}'.`);
    assert.equal((await t.call("GET", `/v1/rag/corpora/${corpusId}`)).status, 404, "the corpus went with it");
    assert.equal((await client.files.retrieve(fileIds.kelantan)).id, fileIds.kelantan, "the files stay");

    // Deleting a file removes it from every store it is in.
    const extra = await client.files.create({ file: await upload("leave"), purpose: "assistants" });
    const a = await client.vectorStores.create({ name: "A", file_ids: [extra.id] });
    const b = await client.vectorStores.create({ name: "B", file_ids: [extra.id] });
    await client.vectorStores.files.poll(a.id, extra.id, poll);
    await client.vectorStores.files.poll(b.id, extra.id, poll);
    assert.deepEqual(await client.files.delete(extra.id), { id: extra.id, object: "file", deleted: true });
    for (const s of [a, b]) {
      assert.equal((await client.vectorStores.retrieve(s.id)).file_counts.total, 0);
      assert.equal((await t.call("GET", `/v1/rag/corpora/corp_${s.id.slice(3)}`)).json.document_counts.total, 0);
      await client.vectorStores.delete(s.id);
    }
    assert.equal((await refused(client.files.retrieve(extra.id))).status, 404);
  });

  it("needs rag.read to read and rag.write to write, and shows another workspace nothing", async () => {
    const me = (await t.call("GET", "/v1/me")).json;
    const keyWith = async (scopes: string[], workspace = me.workspace_id) => (await t.call("POST", `/v1/admin/workspaces/${workspace}/api_keys`, { name: scopes.join("+") || "none", scopes })).json.secret as string;
    const as = (key: string) => new OpenAI({ apiKey: key, baseURL: `${t.url}/v1`, maxRetries: 0 });
    const inferenceOnly = as(await keyWith(["inference"]));
    for (const read of [() => inferenceOnly.vectorStores.list(), () => inferenceOnly.files.list(), () => inferenceOnly.vectorStores.search(storeId, { query: "banjir" }), () => inferenceOnly.vectorStores.retrieve(storeId)]) {
      const r = await refused(read());
      assert.equal(r.status, 403);
      assert.equal(r.error.type, "permission_error");
    }
    const reader = as(await keyWith(["rag.read"]));
    assert.ok((await reader.vectorStores.search(storeId, { query: "banjir" })).data.length > 0);
    assert.equal((await reader.vectorStores.retrieve(storeId)).id, storeId);
    const writes = [
      () => reader.vectorStores.create({ name: "x" }),
      async () => reader.files.create({ file: await upload("leave"), purpose: "assistants" }),
      () => reader.vectorStores.delete(storeId),
      () => reader.files.delete(fileIds.leave),
      () => reader.vectorStores.files.create(storeId, { file_id: fileIds.leave }),
      () => reader.vectorStores.update(storeId, { name: "x" }),
    ];
    for (const write of writes) assert.equal((await refused(write())).status, 403);

    const ws = (await t.call("POST", "/v1/admin/workspaces", { name: "Another team" })).json;
    const stranger = as(await keyWith(["rag.read", "rag.write"], ws.id));
    assert.equal((await refused(stranger.vectorStores.retrieve(storeId))).status, 404);
    assert.equal((await refused(stranger.vectorStores.search(storeId, { query: "banjir" }))).status, 404);
    assert.equal((await refused(stranger.vectorStores.files.list(storeId))).status, 404);
    assert.equal((await refused(stranger.vectorStores.delete(storeId))).status, 404);
    assert.equal((await refused(stranger.files.retrieve(fileIds.kelantan))).status, 404);
    assert.equal((await refused(stranger.files.content(fileIds.kelantan))).status, 404);
    assert.deepEqual((await stranger.vectorStores.list()).data, []);
    assert.deepEqual((await stranger.files.list()).data, []);
    // Its own store cannot take our files.
    const theirs = await stranger.vectorStores.create({ name: "Theirs" });
    assert.equal((await refused(stranger.vectorStores.files.create(theirs.id, { file_id: fileIds.kelantan }))).status, 404);
    assert.equal((await refused(stranger.vectorStores.create({ name: "x", file_ids: [fileIds.kelantan] }))).status, 404);
    assert.equal((await client.vectorStores.retrieve(storeId)).status, "completed", "our store is untouched");
  });

  it("audits uploads, stores, attachments, searches and deletions like the corpora's", async () => {
    const events = async (type: string) => (await t.call("GET", `/v1/audit/events?type=${type}&order=asc&limit=100`)).json.data as any[];
    const uploads = await events("file.upload");
    assert.ok(uploads.some((e) => e.outcome === "success" && e.data.file_id === fileIds.kelantan && e.data.bytes === bytesOf("kelantan").length && e.data.purpose === "assistants"));
    assert.ok(uploads.some((e) => e.outcome === "failure" && e.data.error === "unsupported_purpose"));
    const created = (await events("corpus.create")).find((e) => e.data.vector_store_id === storeId);
    assert.equal(created?.data.corpus_id, `corp_${storeId.slice(3)}`);
    assert.ok((await events("document.upload")).some((e) => e.data.vector_store_id === storeId && e.data.file_id === fileIds.pahang && e.data.document_id));
    const searches = (await events("rag.search")).filter((e) => e.data.vector_store_id === storeId);
    assert.ok(searches.length > 0 && searches.every((e) => typeof e.data.query_sha256 === "string" && Array.isArray(e.data.results)));
    assert.ok(!JSON.stringify(searches).includes("Kelantan"), "the query is recorded by its hash only");
    assert.ok((await events("corpus.delete")).some((e) => e.data.vector_store_id !== undefined && e.data.corpus_id));
    assert.ok((await events("file.delete")).some((e) => e.outcome === "success" && e.data.file_id));
  });

  it("answers bad input in OpenAI's error shape, never a 500", async () => {
    const filesBefore = (await client.files.list()).data.length;
    const unknownStore = await refused(client.vectorStores.retrieve("vs_doesnotexist000000000000"));
    assert.equal(unknownStore.status, 404);
    assert.equal(unknownStore.error.message, "No vector store found with id 'vs_doesnotexist000000000000'.");
    for (const id of ["corp_x", "vs_", "x".repeat(300), "vs_%00"]) assert.equal((await refused(client.vectorStores.retrieve(id))).status, 404, id);
    assert.equal((await refused(client.vectorStores.files.retrieve("file-nothing", { vector_store_id: storeId }))).error.message, `No file found with id 'file-nothing' in vector store '${storeId}'.`);
    assert.equal((await refused(client.vectorStores.fileBatches.retrieve("vsfb_nothing", { vector_store_id: storeId }))).status, 404);
    assert.equal((await refused(client.vectorStores.fileBatches.cancel("vsfb_nothing", { vector_store_id: storeId }))).status, 404);
    const storesBefore = (await client.vectorStores.list({ limit: 100 })).data.length;
    const unknownFile = await refused(client.vectorStores.create({ name: "x", file_ids: [fileIds.kelantan, "file-nothing"] }));
    assert.equal(unknownFile.status, 404);
    assert.equal(unknownFile.error.message, "No such File object: file-nothing");
    assert.equal((await client.vectorStores.list({ limit: 100 })).data.length, storesBefore, "nothing was created");
    assert.equal((await refused(client.vectorStores.files.create(storeId, { file_id: "file-nothing" }))).status, 404);
    assert.equal((await refused(client.vectorStores.fileBatches.create(storeId, { file_ids: [fileIds.kelantan, "file-nothing"] }))).status, 404);

    const bad = async (body: unknown, param: string | null, route = `/v1/vector_stores/${storeId}/search`) => {
      const res = await t.call("POST", route, body);
      assert.ok(res.status >= 400 && res.status < 500, `${JSON.stringify(body)} → ${res.status} ${JSON.stringify(res.json)}`);
      assert.equal(res.json.error.type, "invalid_request_error", JSON.stringify(res.json));
      assert.equal(res.json.error.param, param, JSON.stringify(res.json));
      return res.json.error;
    };
    await bad({ query: "" }, "query");
    await bad({ query: [] }, "query");
    await bad({ query: ["ok", ""] }, "query.1");
    await bad({}, "query");
    await bad({ query: "x", max_num_results: 0 }, "max_num_results");
    await bad({ query: "x", max_num_results: 51 }, "max_num_results");
    await bad({ query: "x", filters: { type: "regex", key: "a", value: "b" } }, "filters.type");
    await bad({ query: "x", filters: { type: "and", filters: [{ type: "eq", key: "lang" }] } }, "filters.filters.0.value");
    await bad({ query: "x", filters: { type: "in", key: "lang", value: "ms" } }, "filters.value");
    await bad({ query: "x", filters: "lang = ms" }, "filters");
    await bad({ query: "x", ranking_options: { score_threshold: 2 } }, "ranking_options.score_threshold");
    await bad({ query: "x", surprise: true }, "surprise");
    const metadata = Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`k${i}`, "v"]));
    assert.match((await bad({ name: "x", metadata }, "metadata", "/v1/vector_stores")).message, /at most 16/);
    await bad({ name: "x", metadata: { k: "v".repeat(513) } }, "metadata.k", "/v1/vector_stores");
    await bad({ name: "x", expires_after: { anchor: "created_at", days: 1 } }, "expires_after.anchor", "/v1/vector_stores");
    await bad({ name: "x", expires_after: { anchor: "last_active_at", days: 366 } }, "expires_after.days", "/v1/vector_stores");
    await bad({ file_ids: [fileIds.kelantan], chunking_strategy: { type: "static", static: { max_chunk_size_tokens: 5000, chunk_overlap_tokens: 0 } } }, "chunking_strategy.static.max_chunk_size_tokens", "/v1/vector_stores");
    await bad({ file_ids: [fileIds.kelantan], chunking_strategy: { type: "static", static: { max_chunk_size_tokens: 200, chunk_overlap_tokens: 150 } } }, "chunking_strategy.static.chunk_overlap_tokens", "/v1/vector_stores");
    await bad({ file_id: fileIds.kelantan, attributes: Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`a${i}`, i])) }, "attributes", `/v1/vector_stores/${storeId}/files`);
    await bad({ file_id: fileIds.kelantan, attributes: { nested: { a: 1 } } }, "attributes.nested", `/v1/vector_stores/${storeId}/files`);
    await bad({}, null, `/v1/vector_stores/${storeId}/file_batches`);
    await bad({ file_ids: [fileIds.kelantan, fileIds.kelantan] }, "file_ids", `/v1/vector_stores/${storeId}/file_batches`);
    // Not JSON, not multipart, no file: clear 4xx.
    const notJson = await fetch(`${t.url}/v1/vector_stores`, { method: "POST", headers: { authorization: `Bearer ${t.key}`, "content-type": "application/json" }, body: "{nope" });
    assert.equal(notJson.status, 400);
    assert.equal(((await notJson.json()) as any).error.code, "invalid_json");
    const jsonUpload = await t.call("POST", "/v1/files", { purpose: "assistants" });
    assert.equal(jsonUpload.status, 415);
    const noFile = new FormData();
    noFile.append("purpose", "assistants");
    const missing = await fetch(`${t.url}/v1/files`, { method: "POST", headers: { authorization: `Bearer ${t.key}` }, body: noFile });
    assert.equal(missing.status, 400);
    assert.equal(((await missing.json()) as any).error.param, "file");
    const noPurpose = new FormData();
    noPurpose.append("file", new Blob(["hello"]), "a.txt");
    const purposeless = await fetch(`${t.url}/v1/files`, { method: "POST", headers: { authorization: `Bearer ${t.key}` }, body: noPurpose });
    assert.equal(purposeless.status, 400);
    assert.equal(((await purposeless.json()) as any).error.param, "purpose");
    const twoFiles = new FormData();
    twoFiles.append("purpose", "assistants");
    twoFiles.append("file", new Blob(["a"]), "a.txt");
    twoFiles.append("file", new Blob(["b"]), "b.txt");
    assert.equal((await fetch(`${t.url}/v1/files`, { method: "POST", headers: { authorization: `Bearer ${t.key}` }, body: twoFiles })).status, 400);
    const truncated = await fetch(`${t.url}/v1/files`, { method: "POST", headers: { authorization: `Bearer ${t.key}`, "content-type": "multipart/form-data; boundary=xyz" }, body: "--xyz\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.txt\"\r\n\r\nhello" });
    assert.equal(truncated.status, 400);
    assert.equal((await client.files.list()).data.length, filesBefore, "no refused upload was kept");
    // Cursors that name nothing give an empty page, as OpenAI's lists do.
    assert.deepEqual((await t.call("GET", "/v1/vector_stores?after=vs_nothing")).json.data, []);
    assert.equal((await t.call("GET", "/v1/vector_stores?limit=0")).status, 400);
    assert.equal((await t.call("GET", `/v1/vector_stores/${storeId}/files?filter=done`)).json.error.param, "filter");
  });
  it("survives fuzzed requests to every route of its own: no 5xx, errors in OpenAI's shape, still serving", { timeout: 600_000 }, async () => {
    const routes: [string, string][] = [
      ["POST", "/v1/files"],
      ["GET", "/v1/files"],
      ["GET", "/v1/files/:file"],
      ["GET", "/v1/files/:file/content"],
      ["DELETE", "/v1/files/:file"],
      ["POST", "/v1/vector_stores"],
      ["GET", "/v1/vector_stores"],
      ["GET", "/v1/vector_stores/:store"],
      ["POST", "/v1/vector_stores/:store"],
      ["DELETE", "/v1/vector_stores/:store"],
      ["POST", "/v1/vector_stores/:store/search"],
      ["POST", "/v1/vector_stores/:store/files"],
      ["GET", "/v1/vector_stores/:store/files"],
      ["GET", "/v1/vector_stores/:store/files/:file"],
      ["POST", "/v1/vector_stores/:store/files/:file"],
      ["DELETE", "/v1/vector_stores/:store/files/:file"],
      ["GET", "/v1/vector_stores/:store/files/:file/content"],
      ["POST", "/v1/vector_stores/:store/file_batches"],
      ["GET", "/v1/vector_stores/:store/file_batches/:batch"],
      ["POST", "/v1/vector_stores/:store/file_batches/:batch/cancel"],
      ["GET", "/v1/vector_stores/:store/file_batches/:batch/files"],
    ];
    // A store and a file of its own to aim at (the earlier tests' are left alone).
    const target = await client.vectorStores.create({ name: "Fuzzed" });
    const file = await client.files.create({ file: await upload("leave"), purpose: "assistants" });
    const batch = await client.vectorStores.fileBatches.create(target.id, { file_ids: [file.id] });
    const junk = fc.constantFrom("", "x", "vs_", "file-", "vsfb_", "%00", "..%2F..", "vs_" + "A".repeat(24), "file-" + "z".repeat(300), "corp_" + target.id.slice(3), "\u00e9");
    const pools: Record<string, string[]> = { ":store": [target.id], ":file": [file.id], ":batch": [batch.id] };
    const fields = ["name", "metadata", "file_ids", "file_id", "files", "attributes", "chunking_strategy", "expires_after", "query", "max_num_results", "filters", "ranking_options", "rewrite_query", "purpose", "description"];
    const value = fc.oneof(fc.jsonValue({ maxDepth: 3 }), fc.constantFrom(file.id, [file.id], { type: "static", static: { max_chunk_size_tokens: 100, chunk_overlap_tokens: 60 } }, { type: "eq", key: "lang", value: "ms" }, { type: "and", filters: [] }, { anchor: "last_active_at", days: 1 }, "x".repeat(5000), -1, 1e308));
    const body = fc.oneof(
      { weight: 4, arbitrary: fc.dictionary(fc.constantFrom(...fields), value, { maxKeys: 5 }).map((o) => JSON.stringify(o)) },
      { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 4 }).map((v) => JSON.stringify(v)) },
      { weight: 1, arbitrary: fc.string({ maxLength: 200 }) },
    );
    const request = fc.record({
      route: fc.constantFrom(...routes),
      ids: fc.array(fc.oneof({ weight: 3, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: junk }), { minLength: 3, maxLength: 3 }),
      body,
      type: fc.constantFrom("application/json", "application/json", "application/json", "text/plain", "multipart/form-data; boundary=x", ""),
      query: fc.constantFrom("", "?limit=1", "?limit=0", "?limit=abc", "?order=sideways", "?after=" + file.id, "?before=vs_x", "?filter=done", "?purpose=assistants", "?limit=1&limit=2"),
    });
    await fc.assert(
      fc.asyncProperty(request, async ({ route: [method, template], ids, body, type, query }) => {
        let i = 0;
        const path = template.replace(/:[a-z]+/g, (name) => encodeURIComponent(ids[i++] ?? pools[name]![0]!));
        const headers: Record<string, string> = { authorization: `Bearer ${t.key}` };
        if (type) headers["content-type"] = type;
        const res = await fetch(t.url + path + query, { method, headers, body: method === "GET" || method === "DELETE" ? undefined : body });
        const text = await res.text();
        const where = `${method} ${path}${query} ${body.slice(0, 120)} → ${res.status} ${text.slice(0, 300)}`;
        assert.ok(res.status < 500, where);
        if (res.status >= 400) {
          const error = (JSON.parse(text) as { error: { message: unknown; type: unknown; param: unknown; code: unknown } }).error;
          assert.equal(typeof error.message, "string", where);
          assert.match(String(error.type), /^(invalid_request_error|permission_error|not_found_error|conflict_error)$/, where);
          assert.ok(error.code === null || (typeof error.code === "string" && /^[a-z0-9_]+$/.test(error.code)), where);
        }
      }),
      { numRuns: 400, seed: 20_250_901 },
    );
    assert.equal((await t.call("GET", "/healthz", undefined, null)).json.status, "ok");
    assert.equal((await client.vectorStores.retrieve(storeId)).status, "completed", "the other stores are untouched");
  });
});
