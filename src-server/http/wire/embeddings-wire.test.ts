import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ServiceError } from "../../errors.js";
import { EmbeddingsRequestSchema, embeddingsObject, float32Decimal, inputStrings } from "./embeddings-wire.js";

/** Float32 values across the whole range: every exponent, both signs, subnormals and the extremes. */
function float32Spread(count: number): Float32Array {
  const values = new Float32Array(count);
  let seed = 7;
  const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
  for (let i = 0; i < count; i++) values[i] = (random() - 0.5) * 2 * 10 ** Math.floor(random() * 84 - 46);
  values.set([0, -0, 1, -1, 0.1, 1e-7, 3.4028234663852886e38, -3.4028234663852886e38, 1.401298464324817e-45, 1.1754943508222875e-38, 123456789, 0.999999940395355], 0);
  return values;
}

describe("embeddings wire", () => {
  it("the float format reads back, through JSON, as exactly the float32 values base64 carries", () => {
    const vector = float32Spread(100_000);
    const asFloat = JSON.parse(JSON.stringify(embeddingsObject("m", [vector], "float", 1).data[0]!.embedding)) as number[];
    const asBase64 = embeddingsObject("m", [vector], "base64", 1).data[0]!.embedding as string;
    const bytes = Buffer.from(asBase64, "base64");
    const decoded = new Float32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4);
    assert.deepEqual(Array.from(decoded), Array.from(vector));
    // JSON has no negative zero (neither did the widened doubles): -0 reads back as 0.
    assert.deepEqual(Array.from(Float32Array.from(asFloat)), Array.from(vector, (x) => (x === 0 ? 0 : x)));
  });

  it("writes each float32 in at most 9 significant digits, not as the 17-digit double it widens to", () => {
    const widened = Math.fround(0.0123456789);
    assert.equal(String(widened), "0.012345679104328156");
    assert.equal(String(float32Decimal(widened)), "0.0123456791");
    // A unit vector's components, as the API returns them: about a third fewer characters.
    const unit = float32Spread(384).map((x) => Math.max(-1, Math.min(1, x)));
    const compact = JSON.stringify(embeddingsObject("m", [unit], "float", 1)).length;
    const widenedJson = JSON.stringify(Array.from(unit)).length;
    assert.ok(compact < widenedJson * 0.8, `${compact} vs ${widenedJson}`);
    for (const x of unit) assert.ok(String(float32Decimal(x)).replace(/^-?0\.0*|e.*$|[.-]/g, "").length <= 9, String(float32Decimal(x)));
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
