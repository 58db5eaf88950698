import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ServiceError } from "../../errors.js";
import { parseWith } from "../validate.js";
import { RerankRequestSchema, rerankInput, rerankObject } from "./rerank-wire.js";

const parse = (body: unknown) => rerankInput(parseWith(RerankRequestSchema, body));

describe("rerank wire", () => {
  it("takes strings and Jina/Cohere {text} objects alike, with Cohere's defaults", () => {
    const input = parse({ model: "rr", query: "q", documents: ["a", { text: "b" }, { text: "c", title: "ignored" }] });
    assert.deepEqual(input, { model: "rr", query: "q", documents: ["a", "b", "c"], topN: undefined, returnDocuments: false });
    assert.equal(parse({ query: "q", documents: ["a"], top_n: 3, return_documents: true }).topN, 3);
  });

  it("names the field at fault in the contract's error shape", () => {
    const cases: [unknown, string, string][] = [
      [{ documents: ["a"] }, "query", "invalid_parameter"],
      [{ query: "", documents: ["a"] }, "query", "invalid_parameter"],
      [{ query: "q" }, "documents", "invalid_parameter"],
      [{ query: "q", documents: [] }, "documents", "invalid_parameter"],
      [{ query: "q", documents: "a" }, "documents", "invalid_parameter"],
      [{ query: "q", documents: ["a", 7] }, "documents.1", "invalid_parameter"],
      [{ query: "q", documents: [{ title: "no text" }] }, "documents.0", "invalid_parameter"],
      [{ query: "q", documents: ["a"], top_n: 0 }, "top_n", "invalid_parameter"],
      [{ query: "q", documents: ["a"], top_n: 1.5 }, "top_n", "invalid_parameter"],
      [{ query: "q", documents: ["a"], texts: ["a"] }, "texts", "unknown_parameter"],
    ];
    for (const [body, param, code] of cases) {
      assert.throws(
        () => parse(body),
        (e: unknown) => e instanceof ServiceError && e.kind === "invalid_request" && e.param === param && e.code === code,
        JSON.stringify(body),
      );
    }
  });

  it("answers llama.cpp's shape with Cohere's id, a document only when asked for", () => {
    const entry = {} as never;
    const body = rerankObject("rerank-1", { model: "rr", entry, promptTokens: 12, results: [{ index: 1, score: 0.9, document: "b" }, { index: 0, score: 0.1 }] });
    assert.deepEqual(body, {
      id: "rerank-1",
      object: "list",
      model: "rr",
      results: [
        { index: 1, relevance_score: 0.9, document: { text: "b" } },
        { index: 0, relevance_score: 0.1 },
      ],
      usage: { prompt_tokens: 12, total_tokens: 12 },
    });
  });
});
