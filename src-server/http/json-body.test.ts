import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ServiceError } from "../errors.js";
import { jsonNestingDepth, MAX_JSON_DEPTH, refuseDeepJson } from "./json-body.js";

describe("JSON nesting depth", () => {
  it("counts arrays and objects, not brackets inside strings or escapes", () => {
    assert.equal(jsonNestingDepth("1"), 0);
    assert.equal(jsonNestingDepth("{}"), 1);
    assert.equal(jsonNestingDepth('{"a":[{"b":[]}],"c":{}}'), 4);
    assert.equal(jsonNestingDepth('{"a":"[[[[{{{{"}'), 1);
    assert.equal(jsonNestingDepth('{"a":"\\"[[[[","b":[1]}'), 2);
    assert.equal(jsonNestingDepth('["\\\\",[[]]]'), 3);
  });

  it("stops early once past the limit", () => {
    assert.equal(jsonNestingDepth("[".repeat(1_000_000), 10), 11);
  });

  it("lets the limit through and refuses one deeper, as an invalid request", () => {
    const nested = (n: number) => Buffer.from("[".repeat(n) + "]".repeat(n));
    assert.doesNotThrow(() => refuseDeepJson(null, null, nested(MAX_JSON_DEPTH)));
    assert.throws(
      () => refuseDeepJson(null, null, nested(MAX_JSON_DEPTH + 1)),
      (error: unknown) => error instanceof ServiceError && error.kind === "invalid_request" && error.code === "json_too_deep",
    );
  });
});
