/** Answers that depend on meaning, from a real instruction-tuned model (SmolLM2-135M-Instruct, ChatML). */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import OpenAI from "openai";
import { testModel } from "../helpers/models.js";
import { startTestServer, type TestServer } from "../helpers/test-server.js";

describe("chat with an instruction-tuned model", () => {
  let t: TestServer;
  let client: OpenAI;
  before(async () => {
    t = await startTestServer({ bindings: { "svc-merlion-13b": testModel("smollm2-135m-instruct") }, config: { chat: { contextSize: 2048, sequences: 2 } } });
    client = new OpenAI({ apiKey: t.key, baseURL: `${t.url}/v1`, maxRetries: 0 });
  });
  after(() => t.close());

  it("answers a factual question through the model's own chat template", async () => {
    const reply = await client.chat.completions.create({
      model: "svc-merlion-13b",
      messages: [{ role: "user", content: "What is the capital of France?" }],
      temperature: 0,
      max_tokens: 30,
    });
    assert.match(reply.choices[0]?.message.content ?? "", /Paris/);
    assert.equal(reply.choices[0]?.finish_reason, "stop", "an instruct model ends its turn by itself");
  });

  it("does simple arithmetic asked in a follow-up turn", async () => {
    const reply = await client.chat.completions.create({
      model: "svc-merlion-13b",
      messages: [
        { role: "system", content: "You are a helpful assistant." },
        { role: "user", content: "Hello!" },
        { role: "assistant", content: "Hello! How can I help you today?" },
        { role: "user", content: "What is 2 + 2? Answer with just the number." },
      ],
      temperature: 0,
      max_tokens: 20,
    });
    assert.match(reply.choices[0]?.message.content ?? "", /\b4\b/);
  });

  it("streams the same answer, token by token", async () => {
    const stream = await client.chat.completions.create({ model: "svc-merlion-13b", messages: [{ role: "user", content: "What is the capital of France?" }], temperature: 0, max_tokens: 30, stream: true });
    const parts: string[] = [];
    for await (const chunk of stream) if (chunk.choices[0]?.delta.content) parts.push(chunk.choices[0].delta.content);
    assert.ok(parts.length > 3, "the answer should arrive in several deltas");
    assert.match(parts.join(""), /Paris/);
  });
});
