import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { ChatEvent } from "../../engine/types.js";
import { ServiceError } from "../../errors.js";
import { zodToServiceError } from "../validate.js";
import { ChatRequestSchema, chatChunks, chatCompletionObject, toChatInput } from "./chat-wire.js";

function parse(body: unknown) {
  const result = ChatRequestSchema.safeParse(body);
  if (!result.success) throw zodToServiceError(result.error);
  return result.data;
}

const user = [{ role: "user", content: "hi" }];

describe("chat request schema", () => {
  it("translates an OpenAI request into engine input", () => {
    const input = toChatInput(
      parse({
        model: "m",
        messages: [
          { role: "developer", content: [{ type: "text", text: "Be " }, { type: "text", text: "kind" }] },
          { role: "user", content: "hi" },
        ],
        temperature: 0,
        max_completion_tokens: 7,
        stop: "END",
        seed: 3,
        response_format: { type: "json_schema", json_schema: { name: "x", schema: { type: "object" } } },
      }),
    );
    assert.deepEqual(input.messages, [
      { role: "system", content: "Be kind" },
      { role: "user", content: "hi" },
    ]);
    assert.equal(input.maxTokens, 7);
    assert.deepEqual(input.stop, ["END"]);
    assert.equal(input.sampling.temperature, 0);
    assert.equal(input.sampling.seed, 3);
    assert.deepEqual(input.responseFormat, { type: "json_schema", name: "x", schema: { type: "object" } });
  });

  const rejected: [string, unknown, string, string][] = [
    ["unknown parameter", { messages: user, foo: 1 }, "unknown_parameter", "foo"],
    ["empty messages", { messages: [] }, "invalid_parameter", "messages"],
    ["wrong type", { messages: user, temperature: "hot" }, "invalid_parameter", "temperature"],
    ["negative temperature", { messages: user, temperature: -1 }, "invalid_parameter", "temperature"],
    ["n > 1", { messages: user, n: 2 }, "invalid_parameter", "n"],
    ["logit_bias", { messages: user, logit_bias: { "1": 5 } }, "invalid_parameter", "logit_bias"],
    ["legacy functions", { messages: user, functions: [] }, "invalid_parameter", "functions"],
    ["unknown role", { messages: [{ role: "wizard", content: "x" }] }, "invalid_parameter", "messages.0.role"],
    ["zero max_tokens", { messages: user, max_tokens: 0 }, "invalid_parameter", "max_tokens"],
  ];
  for (const [name, body, code, param] of rejected) {
    it(`refuses ${name} with a 400 naming '${param}'`, () => {
      assert.throws(
        () => parse(body),
        (e: unknown) => e instanceof ServiceError && e.kind === "invalid_request" && e.code === code && e.param === param,
      );
    });
  }

  it("refuses image parts when translating", () => {
    const image = parse({ messages: [{ role: "user", content: [{ type: "image_url", image_url: { url: "x" } }] }] });
    assert.throws(() => toChatInput(image), (e: unknown) => e instanceof ServiceError && e.code === "unsupported_content_type");
  });

  it("passes tool_choice through: required, named, auto and none", () => {
    const tools = [{ type: "function", function: { name: "f" } }];
    assert.equal(toChatInput(parse({ messages: user, tools, tool_choice: "required" })).toolChoice, "required");
    assert.deepEqual(toChatInput(parse({ messages: user, tools, tool_choice: { type: "function", function: { name: "f" } } })).toolChoice, { name: "f" });
    assert.equal(toChatInput(parse({ messages: user, tools })).toolChoice, "auto");
  });
});

describe("chat response objects", () => {
  const meta = { id: "chatcmpl-1", created: 5, model: "m" };

  it("builds a chat.completion with tool calls and null content", () => {
    const obj = chatCompletionObject(meta, {
      content: "",
      toolCalls: [{ id: "call_1", name: "f", arguments: "{}" }],
      finishReason: "tool_calls",
      usage: { promptTokens: 3, completionTokens: 4 },
    });
    assert.equal(obj.choices[0]?.message.content, null);
    assert.deepEqual(obj.choices[0]?.message.tool_calls, [{ id: "call_1", type: "function", function: { name: "f", arguments: "{}" } }]);
    assert.deepEqual(obj.usage, { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 });
  });

  it("streams role first, one id, finish reason, then usage when asked", async () => {
    async function* events(): AsyncGenerator<ChatEvent> {
      yield { type: "text", text: "Hel" };
      yield { type: "text", text: "lo" };
      yield { type: "end", finishReason: "stop", toolCalls: [], completionTokens: 2, cachedTokens: 4 };
    }
    const chunks = [] as Record<string, any>[];
    for await (const c of chatChunks(meta, events(), 9, true)) chunks.push(c as Record<string, any>);
    assert.deepEqual(
      chunks.map((c) => c.choices[0]?.delta ?? null),
      [{ role: "assistant", content: "", refusal: null }, { content: "Hel" }, { content: "lo" }, {}, null],
    );
    assert.ok(chunks.every((c) => c.id === "chatcmpl-1" && c.object === "chat.completion.chunk"));
    assert.equal(chunks[3]?.choices[0].finish_reason, "stop");
    assert.deepEqual(chunks[4]?.usage, { prompt_tokens: 9, completion_tokens: 2, total_tokens: 11, prompt_tokens_details: { cached_tokens: 4 } });
    assert.ok(chunks.slice(0, 4).every((c) => c.usage === null));
  });
});
