import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ServiceError } from "../../errors.js";
import { EmbeddingsRequestSchema, embeddingsObject, inputStrings } from "./embeddings-wire.js";

describe("embeddings wire", () => {
  it("base64 decodes to the same float32 values as the float format", () => {
    const vector = new Float32Array([0.5, -0.25, 1e-7, 3.4e38]);
    const asFloat = embeddingsObject("m", [vector], "float", 1).data[0]!.embedding as number[];
    const asBase64 = embeddingsObject("m", [vector], "base64", 1).data[0]!.embedding as string;
    const bytes = Buffer.from(asBase64, "base64");
    const decoded = Array.from(new Float32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4));
    assert.deepEqual(decoded, asFloat);
  });

  it("accepts a string or a list of strings", () => {
    assert.deepEqual(inputStrings(EmbeddingsRequestSchema.parse({ input: "a" }).input), ["a"]);
    assert.deepEqual(inputStrings(EmbeddingsRequestSchema.parse({ input: ["a", "b"] }).input), ["a", "b"]);
  });

  it("refuses token ids, empty strings and empty lists with the field named", () => {
    const cases: [unknown, string][] = [
      [[1, 2, 3], "input.0"],
      [["ok", ""], "input.1"],
      [[], "input"],
    ];
    for (const [input, param] of cases) {
      assert.throws(
        () => inputStrings(EmbeddingsRequestSchema.parse({ input }).input),
        (e: unknown) => e instanceof ServiceError && e.kind === "invalid_request" && e.param === param,
      );
    }
  });
});
