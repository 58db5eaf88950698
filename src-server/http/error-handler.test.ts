import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ServiceError } from "../errors.js";
import { openAiParam, toWireError } from "./error-handler.js";

describe("toWireError", () => {
  const table: [ServiceError, number, string][] = [
    [new ServiceError("invalid_request", "m", { code: "c" }), 400, "invalid_request_error"],
    [new ServiceError("payload_too_large", "m", { code: "c" }), 413, "invalid_request_error"],
    [new ServiceError("unsupported_media_type", "m", { code: "c" }), 415, "invalid_request_error"],
    [new ServiceError("authentication", "m", { code: "c" }), 401, "authentication_error"],
    [new ServiceError("permission", "m", { code: "c" }), 403, "permission_error"],
    [new ServiceError("not_found", "m", { code: "c" }), 404, "not_found_error"],
    [new ServiceError("conflict", "m", { code: "c" }), 409, "conflict_error"],
    [new ServiceError("rate_limit", "m", { code: "c", retryAfterSeconds: 3 }), 429, "rate_limit_error"],
    [new ServiceError("unavailable", "m", { code: "c" }), 503, "service_unavailable_error"],
  ];
  for (const [error, status, type] of table) {
    it(`maps ${error.kind} to ${status} ${type}`, () => {
      const wire = toWireError(error);
      assert.equal(wire.status, status);
      assert.deepEqual(wire.body, { error: { message: "m", type, param: null, code: "c" } });
    });
  }

  it("names an input located below HTTP the way OpenAI does", () => {
    const cases: [Parameters<typeof openAiParam>[0], string][] = [
      [{ in: "messages" }, "messages"],
      [{ in: "messages", message: 2, field: "toolCallId" }, "messages.2.tool_call_id"],
      [{ in: "messages", message: 0, toolCall: 1, field: "arguments" }, "messages.0.tool_calls.1.function.arguments"],
      [{ in: "maxTokens" }, "max_tokens"],
      [{ in: "responseFormat", schema: true }, "response_format.json_schema.schema"],
      [{ in: "tools", tool: 3 }, "tools.3.function.parameters"],
      [{ in: "inputs", index: 0, count: 1 }, "input"],
      [{ in: "inputs", index: 4, count: 9 }, "input.4"],
    ];
    for (const [location, param] of cases) assert.equal(openAiParam(location), param);
    const wire = toWireError(new ServiceError("invalid_request", "too long", { code: "context_length_exceeded", location: { in: "inputs", index: 1, count: 2 } }));
    assert.equal(wire.body.error.param, "input.1");
  });

  it("keeps Retry-After for rate limits", () => {
    assert.equal(toWireError(new ServiceError("rate_limit", "slow", { code: "rate_limit_exceeded", retryAfterSeconds: 7 })).retryAfter, 7);
  });

  it("maps body-parser failures to 400/413 with stable codes", () => {
    assert.equal(toWireError({ type: "entity.parse.failed" }).body.error.code, "invalid_json");
    const big = toWireError({ type: "entity.too.large", limit: 10 });
    assert.equal(big.status, 413);
    assert.equal(big.body.error.code, "request_too_large");
  });

  it("hides unexpected errors behind a generic 500 without internals", () => {
    const wire = toWireError(new TypeError("secret internal detail at /home/x.ts:12"));
    assert.equal(wire.status, 500);
    assert.equal(wire.body.error.type, "server_error");
    assert.doesNotMatch(JSON.stringify(wire.body), /secret|home/);
  });
});
