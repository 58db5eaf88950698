/**
 * Reranking over HTTP with a real (generated) cross-encoder GGUF loaded through the real
 * server: POST /v1/rerank and its alias, the `rerank` model type in /v1/models, type
 * checks in both directions, long and blank documents, the audit entry, and rerankers
 * declared in the catalog or on registration that cannot rank.
 *
 * The reranker is `rerank-random` (scripts/test-models): random weights, so its scores
 * carry no meaning. These tests check the path (shapes, order, determinism, limits),
 * never which document is relevant.
 */
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import canonicalize from "canonicalize";
import { ModelRegistry, ModelTypeMismatchError } from "../../src-server/models/model-registry.js";
import { loadCatalog } from "../../src-server/models/catalog.js";
import { startFileServer, type FileServer } from "../helpers/file-server.js";
import { REPO_ROOT, testModel, tinyModel } from "../helpers/models.js";
import { upload, waitForStatus } from "../helpers/rag.js";
import { startTestServer, type TestServer } from "../helpers/test-server.js";

const sha256 = (data: string | Buffer) => createHash("sha256").update(data).digest("hex");

const QUERY = "What is a giant panda?";
const DOCUMENTS = [
  "The giant panda is a bear species endemic to China.",
  "hi",
  "Kuala Lumpur is the capital of Malaysia.",
  "Banjir besar melanda Kelantan pada Disember 2022.",
  "Pandas eat bamboo almost exclusively.",
];

interface Ranked {
  index: number;
  relevance_score: number;
  document?: { text: string };
}

/** The shipped catalog plus two rerankers served by a local stand-in for their publisher. */
function catalogWith(base: string, reranker: Buffer, notReranker: Buffer): string {
  const catalog = JSON.parse(readFileSync(path.join(REPO_ROOT, "models", "catalog.json"), "utf8"));
  const local = (id: string, file: string, bytes: Buffer) => ({
    id,
    type: "rerank",
    name: id,
    license: "apache-2.0",
    architecture: "bert",
    parameters: "5M",
    quantization: "F16",
    context_length: 512,
    source: { url: `${base}/${file}`, filename: file, bytes: bytes.length, sha256: sha256(bytes) },
  });
  catalog.models.push(local("random-reranker", "random-reranker.gguf", reranker), local("fake-reranker", "fake-reranker.gguf", notReranker));
  const file = path.join(mkdtempSync(path.join(os.tmpdir(), "pustaka-catalog-")), "catalog.json");
  writeFileSync(file, JSON.stringify(catalog));
  return file;
}

async function waitForPull(t: TestServer, id: string): Promise<any> {
  for (let i = 0; i < 600; i++) {
    const pull = (await t.call("GET", `/v1/models/pulls/${id}`)).json;
    if (!["queued", "downloading", "verifying", "converting"].includes(pull.status)) return pull;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`pull ${id} did not finish`);
}

describe("reranking with a real cross-encoder GGUF", () => {
  let t: TestServer;
  let files: FileServer;
  let dataDir: string;
  let work: string;

  before(async () => {
    const reranker = readFileSync(testModel("rerank-random"));
    files = await startFileServer({ "/random-reranker.gguf": reranker, "/fake-reranker.gguf": readFileSync(tinyModel("stories260K")) });
    dataDir = mkdtempSync(path.join(os.tmpdir(), "pustaka-rerank-"));
    work = mkdtempSync(path.join(os.tmpdir(), "pustaka-rerank-work-"));
    t = await startTestServer({
      bindings: { rr: testModel("rerank-random"), minilm: testModel("all-minilm-l6-v2"), tiny: tinyModel("stories260K") },
      dataDir,
      // Two ranking contexts (threads are set by the test server: 1 per context here).
      config: { rerank: { contexts: 2, maxDocuments: 50 }, catalogPath: catalogWith(files.url, reranker, readFileSync(tinyModel("stories260K"))) },
    });
  });
  after(async () => {
    await t.close();
    await files.close();
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(work, { recursive: true, force: true });
  });

  async function rerank(body: Record<string, unknown>, route = "/v1/rerank"): Promise<any> {
    const res = await t.call("POST", route, body);
    assert.equal(res.status, 200, JSON.stringify(res.json));
    return res.json;
  }

  it("scores every document in [0, 1], best first, with usage, the same on every call", async () => {
    const first = await rerank({ model: "rr", query: QUERY, documents: DOCUMENTS });
    assert.match(first.id, /^rerank-[0-9A-Za-z]{24}$/);
    assert.equal(first.object, "list");
    assert.equal(first.model, "rr");
    const results = first.results as Ranked[];
    assert.equal(results.length, DOCUMENTS.length);
    assert.deepEqual(results.map((r) => r.index).sort(), [...DOCUMENTS.keys()], "each document exactly once");
    for (const r of results) {
      assert.ok(r.relevance_score >= 0 && r.relevance_score <= 1, `score ${r.relevance_score}`);
      assert.equal(r.document, undefined, "no text unless return_documents");
    }
    for (let i = 1; i < results.length; i++) assert.ok(results[i - 1]!.relevance_score >= results[i]!.relevance_score, "sorted by score, highest first");
    assert.ok(new Set(results.map((r) => r.relevance_score)).size > 1, "the scores are not all the same");
    // [CLS] query [SEP] [SEP] document [SEP] per pair: more than the words, fewer than the characters.
    assert.ok(first.usage.prompt_tokens > DOCUMENTS.length * 8 && first.usage.prompt_tokens < (QUERY.length + 4) * DOCUMENTS.length + DOCUMENTS.join("").length);
    assert.equal(first.usage.total_tokens, first.usage.prompt_tokens);
    const second = await rerank({ model: "rr", query: QUERY, documents: DOCUMENTS });
    assert.deepEqual(second.results, first.results, "deterministic");
    assert.deepEqual(second.usage, first.usage);
    assert.notEqual(second.id, first.id);
  });

  it("honours top_n (clamped to the documents), return_documents, {text} objects and the /v1/reranking alias", async () => {
    const all = (await rerank({ model: "rr", query: QUERY, documents: DOCUMENTS })).results as Ranked[];
    const top2 = await rerank({ model: "rr", query: QUERY, documents: DOCUMENTS, top_n: 2 });
    assert.deepEqual(top2.results, all.slice(0, 2));
    assert.equal(top2.usage.prompt_tokens, (await rerank({ model: "rr", query: QUERY, documents: DOCUMENTS })).usage.prompt_tokens, "every document is scored, whatever top_n");
    assert.deepEqual((await rerank({ model: "rr", query: QUERY, documents: DOCUMENTS, top_n: 1000 })).results, all);

    const withText = (await rerank({ model: "rr", query: QUERY, documents: DOCUMENTS, return_documents: true })).results as Ranked[];
    for (const r of withText) assert.deepEqual(r.document, { text: DOCUMENTS[r.index] });

    // Jina / Cohere v1 style objects, through the llama.cpp alias, as a plain fetch client sends them.
    const response = await fetch(`${t.url}/v1/reranking`, {
      method: "POST",
      headers: { authorization: `Bearer ${t.key}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "rr", query: QUERY, documents: DOCUMENTS.map((text) => ({ text })), top_n: 3, return_documents: true }),
    });
    assert.equal(response.status, 200);
    const objects = (await response.json()) as { results: Ranked[] };
    assert.deepEqual(objects.results, withText.slice(0, 3));
  });

  it("uses the only reranker installed when the request names none", async () => {
    const body = await rerank({ query: QUERY, documents: DOCUMENTS.slice(0, 2) });
    assert.equal(body.model, "rr");
  });

  it("gives concurrent requests the same scores as sequential ones (two ranking contexts)", async () => {
    const alone = (await rerank({ model: "rr", query: QUERY, documents: DOCUMENTS })).results;
    const other = (await rerank({ model: "rr", query: "Where is Kelantan?", documents: DOCUMENTS })).results;
    const [a, b, c] = await Promise.all([
      rerank({ model: "rr", query: QUERY, documents: DOCUMENTS }),
      rerank({ model: "rr", query: "Where is Kelantan?", documents: DOCUMENTS }),
      rerank({ model: "rr", query: QUERY, documents: DOCUMENTS }),
    ]);
    assert.deepEqual(a.results, alone);
    assert.deepEqual(b.results, other);
    assert.deepEqual(c.results, alone);
  });

  it("reads a document longer than the context in windows (best window) and scores blank documents 0", async () => {
    const long = `${"The giant panda lives in the mountains of central China. ".repeat(80)}`;
    const body = await rerank({ model: "rr", query: QUERY, documents: [long, "", " \u200b ", DOCUMENTS[0]] });
    const byIndex = new Map((body.results as Ranked[]).map((r) => [r.index, r.relevance_score]));
    const longScore = byIndex.get(0)!;
    assert.ok(longScore > 0 && longScore <= 1, `a ${long.length}-character document is scored, not refused (${longScore})`);
    assert.equal(byIndex.get(1), 0, "an empty document scores 0");
    assert.equal(byIndex.get(2), 0, "a document of white space and invisible characters scores 0");
    assert.deepEqual(
      (body.results as Ranked[]).slice(-2).map((r) => r.index),
      [1, 2],
      "blank documents rank last, in request order",
    );
    const alone = await rerank({ model: "rr", query: QUERY, documents: [DOCUMENTS[0]] });
    assert.equal(byIndex.get(3), alone.results[0].relevance_score, "other documents are unaffected");
    // The long document counts its whole pair once (not once per overlapping window); blanks count nothing.
    assert.ok(body.usage.prompt_tokens > 512, `${body.usage.prompt_tokens} tokens`);
    assert.ok(body.usage.prompt_tokens < 2 * 80 * 12 + alone.usage.prompt_tokens);
  });

  it("refuses bad requests with the contract's error shape", async () => {
    const cases: [Record<string, unknown>, number, string, string | null][] = [
      [{ model: "no-such-reranker", query: QUERY, documents: DOCUMENTS }, 404, "model_not_found", "model"],
      [{ model: "tiny", query: QUERY, documents: DOCUMENTS }, 400, "model_not_rerank", "model"],
      [{ model: "minilm", query: QUERY, documents: DOCUMENTS }, 400, "model_not_rerank", "model"],
      [{ model: "rr", documents: DOCUMENTS }, 400, "invalid_parameter", "query"],
      [{ model: "rr", query: "", documents: DOCUMENTS }, 400, "invalid_parameter", "query"],
      [{ model: "rr", query: " \u200b ", documents: DOCUMENTS }, 400, "empty_input", "query"],
      [{ model: "rr", query: "panda ".repeat(300), documents: DOCUMENTS }, 400, "context_length_exceeded", "query"],
      [{ model: "rr", query: QUERY }, 400, "invalid_parameter", "documents"],
      [{ model: "rr", query: QUERY, documents: [] }, 400, "invalid_parameter", "documents"],
      [{ model: "rr", query: QUERY, documents: ["ok", 42] }, 400, "invalid_parameter", "documents.1"],
      [{ model: "rr", query: QUERY, documents: [{ url: "x" }] }, 400, "invalid_parameter", "documents.0"],
      [{ model: "rr", query: QUERY, documents: DOCUMENTS, top_n: 0 }, 400, "invalid_parameter", "top_n"],
      [{ model: "rr", query: QUERY, documents: DOCUMENTS, top_n: -2 }, 400, "invalid_parameter", "top_n"],
      [{ model: "rr", query: QUERY, documents: Array.from({ length: 51 }, (_, i) => `doc ${i}`) }, 400, "too_many_documents", "documents"],
      [{ model: "rr", query: QUERY, documents: DOCUMENTS, rank_fields: ["text"] }, 400, "unknown_parameter", "rank_fields"],
    ];
    for (const [body, status, code, param] of cases) {
      const res = await t.call("POST", "/v1/rerank", body);
      const what = `${JSON.stringify(body).slice(0, 80)} → ${JSON.stringify(res.json)}`;
      assert.equal(res.status, status, what);
      assert.deepEqual(Object.keys(res.json.error).sort(), ["code", "message", "param", "type"], what);
      assert.equal(res.json.error.type, status === 404 ? "not_found_error" : "invalid_request_error", what);
      assert.equal(res.json.error.code, code, what);
      assert.equal(res.json.error.param, param, what);
      assert.ok(res.json.error.message.length > 10, what);
    }
    const notJson = await fetch(`${t.url}/v1/rerank`, { method: "POST", headers: { authorization: `Bearer ${t.key}`, "content-type": "text/plain" }, body: "rank this" });
    assert.equal(notJson.status, 415);
  });

  it("lists the reranker with type rerank, and keeps each model type to its own endpoint", async () => {
    const models = (await t.call("GET", "/v1/models")).json.data as { id: string; type: string; dimensions?: number; is_default: boolean; context_length: number }[];
    const rr = models.find((m) => m.id === "rr")!;
    assert.equal(rr.type, "rerank");
    assert.equal(rr.dimensions, undefined, "a reranker has no embedding width to report");
    assert.equal(rr.context_length, 512);
    assert.equal(rr.is_default, true, "the only reranker is the default one");
    assert.equal(models.find((m) => m.id === "minilm")?.type, "embedding");
    assert.equal(models.find((m) => m.id === "tiny")?.type, "chat");
    assert.equal((await t.call("GET", "/v1/models/rr")).json.type, "rerank");

    const embed = await t.call("POST", "/v1/embeddings", { model: "rr", input: "panda" });
    assert.equal(embed.status, 400, JSON.stringify(embed.json));
    assert.equal(embed.json.error.code, "model_not_supported");
    assert.equal(embed.json.error.param, "model");
    const chat = await t.call("POST", "/v1/chat/completions", { model: "rr", messages: [{ role: "user", content: "hi" }] });
    assert.equal(chat.status, 400, JSON.stringify(chat.json));
    assert.equal(chat.json.error.code, "model_not_supported");
    assert.match(chat.json.error.message, /rerank model/);
    const corpus = await t.call("POST", "/v1/rag/corpora", { name: "x", embedding_model: "rr" });
    assert.equal(corpus.status, 400);
    assert.equal(corpus.json.error.code, "model_not_embedding");
  });

  it("reranks a corpus's fused candidates: by the corpus's reranker, per query, or not at all", async () => {
    const created = await t.call("POST", "/v1/rag/corpora", { name: "reranked", embedding_model: "minilm", chunking: "paragraph", rerank_model: "rr" });
    assert.equal(created.status, 201, JSON.stringify(created.json));
    assert.equal(created.json.rerank_model, "rr");
    const corpus = created.json.id as string;
    const texts = DOCUMENTS.filter((d) => d.length > 5).map((d, i) => ({ name: `d${i}.txt`, content: Buffer.from(`${d}\n`) }));
    assert.equal((await upload(t, corpus, texts)).status, 202);
    await waitForStatus(t, corpus);
    const search = (body: Record<string, unknown>) => t.call("POST", `/v1/rag/corpora/${corpus}/search`, { query: QUERY, top_k: 3, ...body });

    const byCorpus = await search({});
    assert.equal(byCorpus.status, 200, JSON.stringify(byCorpus.json));
    assert.equal(byCorpus.json.reranked_by, "rr");
    assert.equal(byCorpus.json.data.length, 3, "top_k after reranking all candidates");
    const scores = (byCorpus.json.data as { score: number }[]).map((h) => h.score);
    for (let i = 1; i < scores.length; i++) assert.ok(scores[i - 1]! >= scores[i]!, "ordered by the reranker's score");
    assert.ok(scores.every((s) => s >= 0 && s <= 1), "the reranker's probabilities");
    assert.equal(byCorpus.json.evidence.rerank_score, scores[0]);
    // The same order /v1/rerank gives for the corpus's passages.
    const all = await search({ top_k: 10 });
    const direct = await rerank({ model: "rr", query: QUERY, documents: (all.json.data as { text: string }[]).map((h) => h.text) });
    assert.deepEqual((all.json.data as { score: number }[]).map((h) => h.score), (direct.results as Ranked[]).map((r) => r.relevance_score));

    const off = await search({ rerank: false });
    assert.equal(off.json.reranked_by, null);
    assert.equal(off.json.evidence.rerank_score, null);
    const named = await t.call("POST", `/v1/rag/corpora/${corpus}/query`, { question: QUERY, top_k: 2, model: "tiny", max_tokens: 4, rerank: { model: "rr", candidates: 4 } });
    assert.equal(named.status, 200, JSON.stringify(named.json));
    assert.equal(named.json.citations.length, 2);

    const wrongType = await search({ rerank: { model: "minilm" } });
    assert.equal(wrongType.status, 400);
    assert.equal(wrongType.json.error.code, "model_not_rerank");
    assert.equal(wrongType.json.error.param, "rerank.model");
    assert.equal((await search({ rerank: { candidates: 0 } })).status, 400);
    assert.equal((await search({ rerank: "yes" })).status, 400);

    // The setting changes (reranking reads text, not vectors), to another rerank model or to none.
    const refused = await t.call("PATCH", `/v1/rag/corpora/${corpus}`, { rerank_model: "minilm" });
    assert.equal(refused.status, 400);
    assert.equal(refused.json.error.code, "model_not_rerank");
    assert.equal((await t.call("PATCH", `/v1/rag/corpora/${corpus}`, { rerank_model: "nope" })).status, 404);
    const cleared = await t.call("PATCH", `/v1/rag/corpora/${corpus}`, { rerank_model: null });
    assert.equal(cleared.json.rerank_model, null);
    assert.equal((await search({})).json.reranked_by, null);
    const none = await search({ rerank: true });
    assert.equal(none.status, 400);
    assert.equal(none.json.error.code, "no_reranker");
    assert.equal((await t.call("POST", "/v1/rag/corpora", { name: "bad", embedding_model: "minilm", rerank_model: "minilm" })).json.error.code, "model_not_rerank");
  });

  it("needs the inference scope, like embeddings", async () => {
    const key = (await t.call("POST", "/v1/admin/workspaces/ws_default/api_keys", { name: "reader", scopes: ["rag.read"] })).json.secret;
    const refused = await t.call("POST", "/v1/rerank", { model: "rr", query: QUERY, documents: DOCUMENTS }, key);
    assert.equal(refused.status, 403);
    assert.equal(refused.json.error.type, "permission_error");
    assert.equal((await t.call("POST", "/v1/rerank", { model: "rr", query: QUERY, documents: DOCUMENTS }, null)).status, 401);
  });

  it("audits each request with a hash of query and documents, never their text", async () => {
    const documents = ["rahsia dokumen pertama", { text: "rahsia dokumen kedua" }];
    const ok = await t.call("POST", "/v1/rerank", { model: "rr", query: "soalan sulit", documents });
    assert.equal(ok.status, 200);
    const bad = await t.call("POST", "/v1/rerank", { model: "minilm", query: "soalan sulit", documents });
    assert.equal(bad.status, 400);
    let entries: any[] = [];
    for (let i = 0; i < 50 && entries.length < 2; i++) {
      entries = (await t.call("GET", "/v1/audit/events?type=rerank.create&order=desc&limit=2")).json.data;
      if (entries.length < 2) await new Promise((r) => setTimeout(r, 100));
    }
    const [refused, accepted] = entries;
    const digest = sha256(canonicalize({ query: "soalan sulit", documents })!);
    assert.equal(accepted.outcome, "success");
    assert.equal(accepted.data.model, "rr");
    assert.equal(accepted.data.documents, 2);
    assert.equal(accepted.data.prompt_tokens, ok.json.usage.prompt_tokens);
    assert.equal(accepted.data.input_sha256, digest);
    assert.equal(accepted.request_id, ok.headers.get("x-request-id"));
    assert.equal(refused.outcome, "failure");
    assert.equal(refused.data.error, "model_not_rerank");
    assert.equal(refused.data.input_sha256, digest);
    const raw = Buffer.concat([readFileSync(path.join(dataDir, "pustaka.db")), readFileSync(path.join(dataDir, "pustaka.db-wal"))]);
    assert.equal(raw.includes(Buffer.from("soalan sulit")), false);
    assert.equal(raw.includes(Buffer.from("rahsia dokumen")), false);
  });

  it("refuses to register or pull a file declared rerank that cannot rank, and takes one that can", async () => {
    const mismatch = await t.call("POST", "/v1/models/files", { path: testModel("all-minilm-l6-v2"), type: "rerank" });
    assert.equal(mismatch.status, 400, JSON.stringify(mismatch.json));
    assert.equal(mismatch.json.error.code, "model_type_mismatch");
    assert.equal(mismatch.json.error.param, "type");
    assert.match(mismatch.json.error.message, /no classification head/);
    const copy = path.join(work, "my-reranker.gguf");
    copyFileSync(testModel("rerank-random"), copy);
    const wrongWay = await t.call("POST", "/v1/models/files", { path: copy, type: "embedding" });
    assert.equal(wrongWay.status, 400);
    assert.equal(wrongWay.json.error.code, "model_type_mismatch");
    const registered = await t.call("POST", "/v1/models/files", { path: copy, id: "my-reranker", type: "rerank" });
    assert.equal(registered.status, 201, JSON.stringify(registered.json));
    assert.equal(registered.json.type, "rerank");
    assert.equal((await t.call("GET", "/v1/models/my-reranker")).json.type, "rerank");

    const failed = await waitForPull(t, (await t.call("POST", "/v1/models/pulls", { model: "fake-reranker" })).json.id);
    assert.equal(failed.status, "failed");
    assert.equal(failed.error.code, "model_type_mismatch");
    assert.match(failed.error.message, /declared a rerank model, but llama\.cpp cannot rank with it/);
    assert.equal((await t.call("GET", "/v1/models/fake-reranker")).status, 404);
    const done = await waitForPull(t, (await t.call("POST", "/v1/models/pulls", { model: "random-reranker" })).json.id);
    assert.equal(done.status, "done", JSON.stringify(done));
    const catalog = (await t.call("GET", "/v1/models/catalog")).json.data as { id: string; type: string; installed: boolean }[];
    assert.deepEqual(
      catalog.filter((m) => m.id.endsWith("-reranker")).map((m) => [m.id, m.type, m.installed]),
      [
        ["random-reranker", "rerank", true],
        ["fake-reranker", "rerank", false],
      ],
    );
    const pulled = await rerank({ model: "random-reranker", query: QUERY, documents: DOCUMENTS });
    assert.deepEqual(pulled.results, (await rerank({ model: "rr", query: QUERY, documents: DOCUMENTS })).results, "the same file, the same scores");
  });
});

describe("model registry: rerankers declared by the catalog", () => {
  it("skips a catalog file declared rerank that cannot rank, with a warning, and refuses to add it", async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "pustaka-rerank-models-"));
    try {
      const shipped = loadCatalog(path.join(REPO_ROOT, "models", "catalog.json"));
      const catalog = {
        ...shipped,
        models: [
          ...shipped.models,
          { ...shipped.models[0]!, id: "declared-reranker", type: "rerank" as const, source: { url: "http://127.0.0.1/x.gguf", filename: "declared-reranker.gguf", bytes: null, sha256: null } },
        ],
      };
      copyFileSync(tinyModel("stories260K"), path.join(dir, "declared-reranker.gguf"));
      const warnings: string[] = [];
      const registry = await ModelRegistry.build({ modelsDir: dir, catalog, bindings: {}, onWarning: (w) => warnings.push(w) });
      assert.equal(registry.find("declared-reranker"), undefined);
      assert.ok(warnings.some((w) => /declared a rerank model, but llama\.cpp cannot rank with it.*catalog model declared-reranker/.test(w)), warnings.join("\n"));
      await assert.rejects(registry.addFile(path.join(dir, "declared-reranker.gguf")), ModelTypeMismatchError);
      const found = await registry.addFile(testModel("rerank-random"));
      assert.equal(found.type, "rerank");
      assert.equal(found.gguf?.supportsRanking, true);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("reranker lifecycle", () => {
  let t: TestServer;
  before(async () => {
    t = await startTestServer({ bindings: { rr: testModel("rerank-random") }, config: { engine: { idleUnloadSeconds: 1 } } });
  });
  after(() => t.close());

  const loaded = async () => (await t.call("GET", "/healthz", undefined, null)).json.engine.loadedModels as { id: string; kinds: string[]; activeLeases: number }[];

  it("creates the ranking contexts on first use, disposes them with the idle model, and scores the same after reloading", async () => {
    assert.deepEqual(await loaded(), []);
    const first = await t.call("POST", "/v1/rerank", { query: QUERY, documents: DOCUMENTS });
    assert.equal(first.status, 200, JSON.stringify(first.json));
    assert.deepEqual(await loaded(), [{ id: "rr", kinds: ["rerank"], activeLeases: 0, busy: 0, queued: 0 }]);
    let unloaded = false;
    for (let i = 0; i < 50 && !unloaded; i++) {
      await new Promise((r) => setTimeout(r, 100));
      unloaded = (await loaded()).length === 0;
    }
    assert.ok(unloaded, "the idle reranker was not unloaded");
    const again = await t.call("POST", "/v1/rerank", { query: QUERY, documents: DOCUMENTS });
    assert.deepEqual(again.json.results, first.json.results);
  });
});
