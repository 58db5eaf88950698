/**
 * The relevance gate end to end with real models (multilingual-e5-small, Gemma 3 270M as
 * the answering model and judge): before answering, the chat model is asked over the
 * same sources whether they hold the answer (`scoreChoices`), the gate combines that with
 * the retrieval evidence, and the answer says how it was decided (`relevance`), plain and
 * streamed. Gates come from the configuration here (one that admits everything, one that
 * refuses everything) and from the built-in gate fitted for this model pair.
 */
import assert from "node:assert/strict";
import { copyFileSync, linkSync, mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { judgeLogOdds } from "../../src-server/rag/answer/relevance-gate.js";
import { testModel } from "../helpers/models.js";
import { evalDoc, upload, waitForStatus } from "../helpers/rag.js";
import { readSse, startTestServer, type TestServer } from "../helpers/test-server.js";

const DOCS = ["banjir-kelantan-2022.md", "lrt-laluan-bayu-q2-2024.md", "eksport-minyak-sawit-2023.md", "employee-leave-policy.md"];
const ANSWERABLE = "Berapakah bilangan kemuncak mangsa di pusat pemindahan sementara semasa banjir Kelantan November 2022?";

describe("relevance gate", () => {
  let t: TestServer;
  let corpusId: string;
  let links: string;
  before(async () => {
    const gemma = testModel("gemma3-270m");
    // The same weights under three names (a model file is bound once, so two more links to
    // it): the built-in gate (found by fingerprint), one that admits all, one that refuses all.
    links = mkdtempSync(path.join(os.tmpdir(), "pustaka-gate-"));
    const link = (name: string) => {
      const file = path.join(links, `${name}.gguf`);
      try {
        linkSync(gemma, file);
      } catch {
        copyFileSync(gemma, file);
      }
      return file;
    };
    t = await startTestServer({
      bindings: { e5: testModel("multilingual-e5-small"), gemma, lenient: link("lenient"), strict: link("strict") },
      config: {
        chat: { contextSize: 4096, sequences: 1 },
        rag: {
          relevanceJudge: true,
          relevanceGates: {
            "e5|lenient": { intercept: 0, weights: { judge: 1 }, threshold: 0 },
            "e5|strict": { intercept: 0, weights: { judge: 1 }, threshold: 1 },
          },
        },
      },
    });
    corpusId = (await t.call("POST", "/v1/rag/corpora", { name: "gate", embedding_model: "e5" })).json.id;
    assert.equal((await upload(t, corpusId, DOCS.map(evalDoc))).status, 202);
    assert.equal((await waitForStatus(t, corpusId)).status, "ready");
  });
  after(async () => {
    await t.close();
    rmSync(links, { recursive: true, force: true });
  });

  const ask = (body: Record<string, unknown>) => t.call("POST", `/v1/rag/corpora/${corpusId}/query`, { max_tokens: 24, ...body });

  it("asks the chat model first and says how the answer was decided, plain and streamed", async () => {
    const res = await ask({ question: ANSWERABLE, model: "lenient" });
    assert.equal(res.status, 200, JSON.stringify(res.json));
    const { relevance } = res.json;
    assert.deepEqual(Object.keys(relevance).sort(), ["decided_by", "judge", "score", "threshold"]);
    assert.equal(relevance.decided_by, "gate");
    assert.ok(relevance.judge > 0 && relevance.judge < 1, `the judge's probability: ${relevance.judge}`);
    // A judge-only gate with weight 1 is the judge's own probability.
    assert.ok(Math.abs(relevance.score - 1 / (1 + Math.exp(-judgeLogOdds(relevance.judge)))) < 1e-9);
    assert.equal(relevance.threshold, 0);
    assert.equal(res.json.grounded, true);
    assert.ok(res.json.answer.length > 0);

    const streamed = await fetch(`${t.url}/v1/rag/corpora/${corpusId}/query`, {
      method: "POST",
      headers: { authorization: `Bearer ${t.key}`, "content-type": "application/json" },
      body: JSON.stringify({ question: ANSWERABLE, model: "lenient", stream: true, max_tokens: 24 }),
    });
    const final = ((await readSse(streamed)) as any[]).at(-1);
    assert.equal(final.object, "rag.answer.citations");
    assert.equal(final.grounded, true);
    assert.deepEqual(final.relevance, relevance, "the judge is deterministic: the same question gets the same judgement");
  });

  it("refuses with the 'not in the corpus' reply when the gate says no, and counts the judge's tokens", async () => {
    const res = await ask({ question: ANSWERABLE, model: "strict" });
    assert.equal(res.status, 200);
    assert.equal(res.json.grounded, false);
    assert.equal(res.json.answer, "Korpus ini tidak mengandungi maklumat untuk menjawab soalan ini.");
    assert.equal(res.json.relevance.decided_by, "gate");
    assert.ok(res.json.relevance.score < 1);
    assert.deepEqual(res.json.sentences, []);
    assert.ok(res.json.citations.length > 0 && res.json.citations.every((c: any) => c.cited === false && c.support === null));
    assert.equal(res.json.usage.completion_tokens, 0);
    // Embedding the question takes a few dozen tokens; the judge read the sources too.
    assert.ok(res.json.usage.prompt_tokens > 200, `prompt tokens ${res.json.usage.prompt_tokens}`);
  });

  it("leaves keyword mode to what matched: no gate", async () => {
    const res = await ask({ question: "Kelantan 41,870", model: "strict", search: "keyword" });
    assert.equal(res.json.grounded, true);
    assert.deepEqual(res.json.relevance, { decided_by: "none", score: null, threshold: null, judge: null });
  });

  it("uses the gate fitted for this model pair: answers what the corpus holds, refuses the 1998 World Cup", async () => {
    const answerable = await ask({ question: ANSWERABLE, model: "gemma" });
    assert.equal(answerable.json.relevance.decided_by, "gate");
    assert.notEqual(answerable.json.relevance.threshold, 0.5, "a fitted gate, not the generic one");
    assert.equal(answerable.json.grounded, true, JSON.stringify(answerable.json.relevance));
    const offTopic = await ask({ question: "Who won the 1998 FIFA World Cup?", model: "gemma" });
    assert.equal(offTopic.json.grounded, false, JSON.stringify(offTopic.json.relevance));
    assert.equal(offTopic.json.answer, "The corpus does not contain information that answers this question.");
  });
});
