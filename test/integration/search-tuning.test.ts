/**
 * A corpus's own search settings and their tuning, over HTTP with a real embedding model
 * (all-MiniLM-L6-v2, English-only: on Malay questions its vectors are weak and keyword
 * search is strong, so the settings matter): `search_defaults` stored, used when a request
 * does not say and overridden when it does; `POST …/search/tune` scoring every setting the
 * way `/search` ranks, cross-validating its choice, and storing it only when asked, allowed
 * and better on held-out questions.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { ndcgAt } from "../../src-server/rag/retrieval/ir-metrics.js";
import { REPO_ROOT, testModel } from "../helpers/models.js";
import { evalDoc, upload, waitForStatus } from "../helpers/rag.js";
import { startTestServer, type TestServer } from "../helpers/test-server.js";

const DOCS = ["banjir-kelantan-2022.md", "floods-pahang-2023-briefing.md", "lrt-laluan-bayu-q2-2024.md", "notis-gangguan-bekalan-air-klang.html", "rural-broadband-midterm-review.txt"];
const QUESTIONS = (JSON.parse(readFileSync(path.join(REPO_ROOT, "test", "fixtures", "eval", "questions.json"), "utf8")) as { question: string; doc: string | null; lang: string }[]).filter((q) => q.doc && DOCS.includes(q.doc));
const MALAY = QUESTIONS.filter((q) => q.lang === "ms").map((q) => ({ question: q.question, relevant: [q.doc!] }));

describe("search settings per corpus, and tuning them on judged questions", () => {
  let t: TestServer;
  let corpusId: string;
  const idOf = new Map<string, string>();
  before(async () => {
    t = await startTestServer({ bindings: { minilm: testModel("all-minilm-l6-v2") }, config: { rag: { chunkTargetTokens: 120 } } });
    corpusId = (await t.call("POST", "/v1/rag/corpora", { name: "Tuned", embedding_model: "minilm" })).json.id;
    const uploaded = await upload(t, corpusId, DOCS.map(evalDoc));
    for (const d of uploaded.json.documents) idOf.set(d.filename, d.id);
    assert.equal((await waitForStatus(t, corpusId)).status, "ready");
  });
  after(() => t.close());

  const search = (body: Record<string, unknown>) => t.call("POST", `/v1/rag/corpora/${corpusId}/search`, { query: MALAY[0]!.question, top_k: 5, ...body });
  const tune = (body: Record<string, unknown>, key?: string) => t.call("POST", `/v1/rag/corpora/${corpusId}/search/tune`, body, key);
  const ids = (res: { json: { data: { chunk_id: string }[] } }) => res.json.data.map((c) => c.chunk_id);

  it("stores search settings on a corpus, uses them when a request does not say, and lets a request override each field", async () => {
    const created = await t.call("POST", "/v1/rag/corpora", { name: "With settings", embedding_model: "minilm", search_defaults: { fusion: { vector_weight: 0.3, keyword_trust: "language" } } });
    assert.equal(created.status, 201);
    assert.deepEqual(created.json.search_defaults, { search: "hybrid", fusion: { vector_weight: 0.3, keyword_trust: "language" } });

    const plain = await search({});
    assert.equal(plain.json.search, "hybrid");
    assert.deepEqual(plain.json.fusion, { method: "convex", vector_weight: 0.5, keyword_trust: "auto" }, "no settings: the server's");

    const patched = await t.call("PATCH", `/v1/rag/corpora/${corpusId}`, { search_defaults: { search: "hybrid", fusion: { vector_weight: 0.2, keyword_trust: "fixed" } } });
    assert.equal(patched.status, 200);
    assert.deepEqual(patched.json.search_defaults, { search: "hybrid", fusion: { vector_weight: 0.2, keyword_trust: "fixed" } });
    assert.deepEqual((await t.call("GET", `/v1/rag/corpora/${corpusId}`)).json.search_defaults, patched.json.search_defaults);
    const byCorpus = await search({});
    assert.deepEqual(byCorpus.json.fusion, { method: "convex", vector_weight: 0.2, keyword_trust: "fixed" });
    const explicit = await search({ search: "hybrid", fusion: { vector_weight: 0.2, keyword_trust: "fixed" } });
    assert.deepEqual(ids(byCorpus), ids(explicit), "the corpus's settings rank as the same request would");
    const overridden = await search({ fusion: { vector_weight: 0.9 } });
    assert.deepEqual(overridden.json.fusion, { method: "convex", vector_weight: 0.9, keyword_trust: "fixed" }, "a request's field wins, the corpus's others stay");

    await t.call("PATCH", `/v1/rag/corpora/${corpusId}`, { search_defaults: { search: "keyword" } });
    const keyword = await search({});
    assert.equal(keyword.json.search, "keyword");
    assert.equal(keyword.json.fusion, null);
    assert.deepEqual(ids(keyword), ids(await search({ search: "keyword" })));
    assert.equal((await search({ search: "vector" })).json.search, "vector", "a request's mode wins");

    const cleared = await t.call("PATCH", `/v1/rag/corpora/${corpusId}`, { search_defaults: null });
    assert.equal(cleared.json.search_defaults, null);
    assert.deepEqual((await search({})).json.fusion, { method: "convex", vector_weight: 0.5, keyword_trust: "auto" });

    for (const [bad, param] of [
      [{ search: "vector", fusion: { vector_weight: 0.5 } }, "search_defaults.fusion"],
      [{ fusion: { vector_weight: 2 } }, "search_defaults.fusion.vector_weight"],
      [{ search: "semantic" }, "search_defaults.search"],
      [{ search: "hybrid", boost: 1 }, "search_defaults.boost"],
      ["hybrid", "search_defaults"],
    ] as const) {
      const res = await t.call("PATCH", `/v1/rag/corpora/${corpusId}`, { search_defaults: bad });
      assert.equal(res.status, 400, JSON.stringify(bad));
      assert.equal(res.json.error.param, param, JSON.stringify(bad));
    }
    assert.equal((await t.call("GET", `/v1/rag/corpora/${corpusId}`)).json.search_defaults, null, "a refused change leaves the settings");
  });

  it("scores every setting as /search ranks it, cross-validates the best, and stores it only when asked, allowed and better held out", { timeout: 120_000 }, async () => {
    await t.call("PATCH", `/v1/rag/corpora/${corpusId}`, { search_defaults: { search: "vector" } });
    const result = await tune({ questions: MALAY });
    assert.equal(result.status, 200, JSON.stringify(result.json));
    const r = result.json;
    assert.equal(r.object, "rag.search_tuning");
    assert.equal(r.questions, MALAY.length);
    assert.deepEqual({ search: r.current.search, fusion: r.current.fusion }, { search: "vector", fusion: null });
    // keyword, vector (the settings in force) and convex fusion at 9 weights × 5 keyword-trust rules.
    assert.equal(r.settings.length, 2 + 45);
    assert.deepEqual(r.settings[0], r.best);
    for (let i = 1; i < r.settings.length; i++) assert.ok(r.settings[i - 1].ndcg_at_10 >= r.settings[i].ndcg_at_10, "best first");
    assert.equal(r.applied, false);
    assert.equal(r.not_applied_reason, "not_asked");
    assert.deepEqual((await t.call("GET", `/v1/rag/corpora/${corpusId}`)).json.search_defaults, { search: "vector" }, "not asked: unchanged");

    // Each setting's score is what /search gives for it (ten passages, documents by their best one).
    const viaSearch = async (body: Record<string, unknown>) => {
      let sum = 0;
      for (const q of MALAY) {
        const found = await t.call("POST", `/v1/rag/corpora/${corpusId}/search`, { query: q.question, top_k: 10, ...body });
        sum += ndcgAt([...new Set<string>(found.json.data.map((c: { document_id: string }) => c.document_id))], new Set([idOf.get(q.relevant[0]!)!]), 10);
      }
      return sum / MALAY.length;
    };
    const scoreOf = (search: string, fusion: Record<string, unknown> | null) => r.settings.find((s: any) => s.search === search && JSON.stringify(s.fusion) === JSON.stringify(fusion)).ndcg_at_10;
    assert.ok(Math.abs(scoreOf("keyword", null) - (await viaSearch({ search: "keyword" }))) < 1e-4);
    assert.ok(Math.abs(scoreOf("vector", null) - (await viaSearch({ search: "vector" }))) < 1e-4);
    for (const fusion of [
      { method: "convex", vector_weight: 0.3, keyword_trust: "language" },
      { method: "convex", vector_weight: 0.7, keyword_trust: "squared" },
      { method: "convex", vector_weight: 0.5, keyword_trust: "auto" },
    ]) {
      assert.ok(Math.abs(scoreOf("hybrid", fusion) - (await viaSearch({ search: "hybrid", fusion }))) < 1e-4, JSON.stringify(fusion));
    }
    // On Malay questions an English-only model's vectors lose to words: the choice beats them held out.
    assert.ok(scoreOf("keyword", null) > scoreOf("vector", null), JSON.stringify(r.settings.slice(0, 3)));
    assert.ok(r.best.ndcg_at_10 > r.current.ndcg_at_10);
    assert.ok(r.held_out.tuned_ndcg_at_10 > r.held_out.current_ndcg_at_10, JSON.stringify(r.held_out));
    assert.equal(r.held_out.current_ndcg_at_10, r.current.ndcg_at_10, "the settings in force are not fitted: held out is all");

    // Storing takes the write scope.
    const reader = (await t.call("POST", "/v1/admin/workspaces/ws_default/api_keys", { name: "reader", scopes: ["rag.read"] })).json;
    const evaluated = await tune({ questions: MALAY }, reader.secret);
    assert.equal(evaluated.status, 200, "a read key may evaluate");
    const refused = await tune({ questions: MALAY, apply: true }, reader.secret);
    assert.equal(refused.status, 403);
    assert.equal(refused.json.error.code, "insufficient_scope");

    const applied = await tune({ questions: MALAY, apply: true });
    assert.equal(applied.json.applied, true);
    assert.equal(applied.json.not_applied_reason, null);
    const stored = { search: r.best.search, ...(r.best.fusion ? { fusion: r.best.fusion } : {}) };
    assert.deepEqual(applied.json.search_defaults, stored);
    assert.deepEqual((await t.call("GET", `/v1/rag/corpora/${corpusId}`)).json.search_defaults, stored);
    const now = await search({});
    assert.equal(now.json.search, r.best.search, "searches now use the tuned setting");
    assert.ok(Math.abs((await viaSearch({})) - r.best.ndcg_at_10) < 1e-4);

    const again = await tune({ questions: MALAY, apply: true });
    assert.equal(again.json.applied, false);
    assert.equal(again.json.not_applied_reason, "already_best");
    assert.deepEqual(again.json.current, again.json.best);

    // The audit trail records the tuning by a digest of its questions, never their text.
    const trail = (await t.call("GET", "/v1/audit/events?type=rag.search.tune&order=asc")).json.data;
    assert.equal(trail.length, 5);
    const appliedEntry = trail.find((e: any) => e.data.applied === true);
    assert.deepEqual(appliedEntry.data.search_defaults, stored);
    assert.match(appliedEntry.data.questions_sha256, /^[0-9a-f]{64}$/);
    assert.ok(!JSON.stringify(trail).includes(MALAY[0]!.question.slice(0, 20)), "no question text in the trail");
  });

  it("refuses bad tuning requests in the error shape", async () => {
    const four = MALAY.slice(0, 4);
    for (const [body, status, code, param] of [
      [{ questions: MALAY.slice(0, 3) }, 400, "invalid_parameter", "questions"],
      [{ questions: [] }, 400, "invalid_parameter", "questions"],
      [{ questions: [...four.slice(0, 3), { question: "x", relevant: [] }] }, 400, "invalid_parameter", "questions.3.relevant"],
      [{ questions: [...four.slice(0, 3), { question: "  ", relevant: [DOCS[0]] }] }, 400, "invalid_parameter", "questions.3.question"],
      [{ questions: [four[0], { question: "y", relevant: ["no-such-report.pdf"] }, ...four.slice(2)] }, 400, "unknown_document", "questions.1.relevant.0"],
      [{ questions: four, apply: "yes" }, 400, "invalid_parameter", "apply"],
      [{ questions: four, extra: 1 }, 400, "unknown_parameter", "extra"],
    ] as const) {
      const res = await tune(body);
      assert.equal(res.status, status, JSON.stringify(body).slice(0, 120));
      assert.equal(res.json.error.code, code, JSON.stringify(res.json));
      if (param) assert.equal(res.json.error.param, param, JSON.stringify(res.json));
    }
    // Relevant documents by id work as by filename.
    const byId = await tune({ questions: four.map((q) => ({ question: q.question, relevant: [idOf.get(q.relevant[0]!)!] })) });
    const byName = await tune({ questions: four });
    assert.deepEqual(byId.json.settings, byName.json.settings);

    const empty = (await t.call("POST", "/v1/rag/corpora", { name: "Nothing yet", embedding_model: "minilm" })).json;
    const notReady = await t.call("POST", `/v1/rag/corpora/${empty.id}/search/tune`, { questions: four });
    assert.equal(notReady.status, 409);
    assert.equal(notReady.json.error.code, "corpus_not_ready");
    assert.equal((await t.call("POST", "/v1/rag/corpora/corp_nope/search/tune", { questions: four })).status, 404);
  });
});
