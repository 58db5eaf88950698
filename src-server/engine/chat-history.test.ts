import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ServiceError } from "../errors.js";
import { isDeepStrictEqual } from "node:util";
import { toLlamaHistory } from "./chat-history.js";

describe("toLlamaHistory", () => {
  it("maps roles, merges consecutive messages and opens a model turn", () => {
    const history = toLlamaHistory([
      { role: "system", content: "Be brief." },
      { role: "user", content: "Hi" },
      { role: "user", content: "there" },
    ]);
    assert.deepEqual(history, [
      { type: "system", text: "Be brief." },
      { type: "user", text: "Hi\n\nthere" },
      { type: "model", response: [] },
    ]);
  });

  it("attaches tool results to the calls they answer", () => {
    const history = toLlamaHistory([
      { role: "user", content: "Weather in Ipoh?" },
      { role: "assistant", content: null, toolCalls: [{ id: "c1", name: "weather", arguments: '{"city":"Ipoh"}' }] },
      { role: "tool", toolCallId: "c1", content: "31C, sunny" },
    ]);
    const model = history[1];
    assert.equal(model?.type, "model");
    assert.deepEqual((model as { response: unknown[] }).response[0], {
      type: "functionCall",
      name: "weather",
      params: { city: "Ipoh" },
      result: "31C, sunny",
      startsNewChunk: true,
    });
    // The history ends in the model's turn that holds the call, so generation continues it.
    assert.equal(history.length, 2);
  });

  it("continues a final assistant message instead of opening a new turn", () => {
    const history = toLlamaHistory([
      { role: "user", content: "Count" },
      { role: "assistant", content: "1, 2,", toolCalls: [] },
    ]);
    assert.deepEqual(history.at(-1), { type: "model", response: ["1, 2,"] });
  });

  it("rejects tool messages without a matching call, and calls without results", () => {
    assert.throws(
      () => toLlamaHistory([{ role: "user", content: "x" }, { role: "tool", toolCallId: "nope", content: "r" }]),
      (e: unknown) => e instanceof ServiceError && e.code === "invalid_tool_message" && isDeepStrictEqual(e.location, { in: "messages", message: 1, field: "toolCallId" }),
    );
    assert.throws(
      () => toLlamaHistory([{ role: "user", content: "x" }, { role: "assistant", content: null, toolCalls: [{ id: "c", name: "f", arguments: "{}" }] }]),
      (e: unknown) => e instanceof ServiceError && e.code === "invalid_tool_message",
    );
  });

  it("rejects tool-call arguments that are not JSON, naming the field", () => {
    assert.throws(
      () => toLlamaHistory([{ role: "assistant", content: null, toolCalls: [{ id: "c", name: "f", arguments: "{oops" }] }, { role: "tool", toolCallId: "c", content: "" }]),
      (e: unknown) => e instanceof ServiceError && isDeepStrictEqual(e.location, { in: "messages", message: 0, toolCall: 0, field: "arguments" }),
    );
  });
});
