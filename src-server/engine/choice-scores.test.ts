import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { choiceProbabilities, choiceSpellings, choiceTokens } from "./choice-scores.js";

/** A tokenizer over a small vocabulary: the longest known prefix is the first token ("nope" begins with "no"). */
const vocabulary = ["yes", " yes", "Yes", " Yes", "YES", " YES", "no", " no", "No", " No", "NO", " NO"];
const model = {
  tokenize: (text: string, _special?: boolean, options?: string) => {
    const t = options === "trimLeadingSpace" ? text.trimStart() : text;
    const prefix = vocabulary.filter((v) => t.startsWith(v)).sort((a, b) => b.length - a.length)[0];
    return prefix === undefined ? [] : ([vocabulary.indexOf(prefix), ...(t.length > prefix.length ? [99] : [])] as never[]);
  },
};

describe("choice scores", () => {
  it("spells a choice the ways a model may begin its reply", () => {
    assert.deepEqual(choiceSpellings("yes"), ["yes", " yes", "Yes", " Yes", "YES", " YES"]);
  });

  it("gathers each choice's first tokens and refuses choices that begin alike", () => {
    const [yes, no] = choiceTokens(model as never, ["yes", "no"]);
    assert.deepEqual(yes!.map((t) => vocabulary[t as number]).sort(), [" YES", " Yes", " yes", "YES", "Yes", "yes"].sort());
    assert.equal(no!.length, 6);
    assert.throws(() => choiceTokens(model as never, ["no", "nope"]), /begin with the same token/);
    assert.throws(() => choiceTokens(model as never, ["yes"]), /at least two/);
  });

  it("turns the choices' logits into probabilities over the choices (log-sum-exp per choice)", () => {
    const groups = [[1, 2], [3]] as never as number[][];
    // Choice 1 has two tokens at logit 0: mass log 2; choice 2 one token at log 2: equal odds.
    const even = choiceProbabilities(new Map([[1, 0], [2, 0], [3, Math.log(2)]]) as never, groups as never);
    assert.ok(Math.abs(even[0]! - 0.5) < 1e-9 && Math.abs(even[1]! - 0.5) < 1e-9);
    const sure = choiceProbabilities(new Map([[1, 20], [3, -20]]) as never, groups as never);
    assert.ok(sure[0]! > 0.999999 && Math.abs(sure[0]! + sure[1]! - 1) < 1e-12);
    // A choice with no logit at all gets nothing; none at all: no preference.
    assert.deepEqual(choiceProbabilities(new Map([[3, 1]]) as never, groups as never), [0, 1]);
    assert.deepEqual(choiceProbabilities(new Map() as never, groups as never), [0.5, 0.5]);
  });
});
