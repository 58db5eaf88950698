import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { GENERIC_JUDGE_GATE, answerability, gateFor, judgeLogOdds, modelFingerprint, usesJudge, type RelevanceGateModel } from "./relevance-gate.js";
import { judgeMessages } from "./relevance-judge.js";
import { groundedMessages } from "./grounded-prompt.js";

const evidenceOnly: RelevanceGateModel = { intercept: -1, weights: { keyword_coverage: 4, unknown_term_share: -3 }, threshold: 0.5 };
const withJudge: RelevanceGateModel = { intercept: 0.5, weights: { keyword_coverage: 1, judge: 0.8 }, threshold: 0.6 };

describe("relevance gate", () => {
  it("scores answerability from the evidence and the judge's log-odds", () => {
    const covered = answerability({ keywordCoverage: 0.9, unknownTermShare: 0 }, null, evidenceOnly);
    const unknown = answerability({ keywordCoverage: 0.2, unknownTermShare: 1 }, null, evidenceOnly);
    assert.ok(covered > 0.9 && unknown < 0.05, `${covered} ${unknown}`);
    // Missing evidence is neutral: coverage 0.5, nothing unknown.
    assert.ok(Math.abs(answerability({}, null, evidenceOnly) - 1 / (1 + Math.exp(-1))) < 1e-12);
    const sure = answerability({ keywordCoverage: 0.5 }, 0.99, withJudge);
    const doubtful = answerability({ keywordCoverage: 0.5 }, 0.05, withJudge);
    assert.ok(sure > withJudge.threshold && doubtful < withJudge.threshold);
    assert.ok(Number.isFinite(judgeLogOdds(1)) && Number.isFinite(judgeLogOdds(0)) && judgeLogOdds(0.5) === 0);
    assert.equal(usesJudge(withJudge), true);
    assert.equal(usesJudge(evidenceOnly), false);
    // The generic judge gate follows the judge: yes more likely than no.
    assert.ok(answerability({}, 0.51, GENERIC_JUDGE_GATE) >= 0.5 && answerability({}, 0.49, GENERIC_JUDGE_GATE) < 0.5);
  });

  it("picks the gate fitted for the pair, then for the chat model, then the generic judge; evidence-only without the judge", () => {
    const gates = { "e5|qwen": withJudge, "*|gemma": { ...withJudge, threshold: 0.7 }, "e5|*": evidenceOnly };
    assert.equal(gateFor(gates, ["corpus-name", "e5"], ["chat", "qwen"], true), withJudge);
    assert.equal(gateFor(gates, ["e5"], ["gemma"], true)!.threshold, 0.7);
    assert.equal(gateFor(gates, ["e5"], ["unknown"], true), GENERIC_JUDGE_GATE);
    assert.equal(gateFor(gates, ["e5"], ["qwen"], false), evidenceOnly);
    assert.equal(gateFor(gates, ["minilm"], ["qwen"], false), null);
  });

  it("fingerprints weights by name, size and quantization", () => {
    assert.equal(modelFingerprint({ name: "Qwen2.5 Coder 1.5B Instruct", architecture: "qwen2", parameters: 1543714304, quantization: "Q4_K_M" }), "Qwen2.5 Coder 1.5B Instruct/1543714304/Q4_K_M");
    assert.equal(modelFingerprint({ name: null, architecture: "bert", parameters: 10, quantization: null }), "bert/10/unknown");
  });

  it("asks the judge over the grounded prompt, so the answer reuses its evaluated prefix", () => {
    const sources = [{ index: 1, filename: "a.txt", pageStart: null, pageEnd: null, headingPath: [], text: "Banjir di Kelantan." }];
    const judge = judgeMessages("Bila banjir?", sources);
    const answer = groundedMessages("Bila banjir?", sources);
    assert.equal(judge[0]!.content, answer[0]!.content);
    assert.ok((judge[1]!.content as string).startsWith(answer[1]!.content as string));
    assert.match(judge[1]!.content as string, /yes or no/);
  });
});
