/**
 * The Anthropic Messages API (`/v1/messages`, `/v1/messages/count_tokens`) through the
 * official `@anthropic-ai/sdk` against a real model: text, streaming, tools and tool
 * results, stop sequences, token counting, and Anthropic's error shape. Run twice: the model
 * in Pustaka's own engine, and the same model served by llama.cpp's llama-server behind
 * Pustaka (a remote model).
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import Anthropic from "@anthropic-ai/sdk";
import { startLlamaServer, type LlamaServer } from "../helpers/llama-server.js";
import { testModel } from "../helpers/models.js";
import { startTestServer, type TestServer } from "../helpers/test-server.js";

const WEATHER = {
  name: "get_weather",
  description: "The weather in a Malaysian city",
  input_schema: { type: "object" as const, properties: { city: { type: "string", enum: ["Ipoh", "Kuantan", "Kota Bharu"] } }, required: ["city"] },
};

/** Greedy sampling: this SDK's types no longer carry sampling parameters, which the API still takes. */
const greedy = { temperature: 0 } as object;

for (const backing of ["local", "remote"] as const) {
describe(`the Anthropic Messages API with the official SDK (${backing} model)`, () => {
  let t: TestServer;
  let client: Anthropic;
  let upstream: LlamaServer | undefined;
  before(async () => {
    if (backing === "local") {
      t = await startTestServer({ bindings: { chat: testModel("smollm2-135m-instruct") }, config: { chat: { contextSize: 2048, sequences: 2 } } });
    } else {
      upstream = await startLlamaServer({ model: testModel("smollm2-135m-instruct"), alias: "smol", parallel: 2 });
      t = await startTestServer({ bindings: {}, config: { models: { remote: { chat: { upstreams: [{ url: upstream.url, model: "smol" }] } } } } });
    }
    // The SDK sends the key as x-api-key.
    client = new Anthropic({ apiKey: t.key, baseURL: t.url, maxRetries: 0 });
  });
  after(async () => {
    await t?.close();
    await upstream?.stop();
  });

  it("answers a message, and the stream carries the same text and usage", async () => {
    const request = { model: "chat", max_tokens: 24, ...greedy, system: "You are a helpful assistant.", messages: [{ role: "user" as const, content: "Name a city in Malaysia." }] };
    const message = await client.messages.create(request);
    assert.equal(message.type, "message");
    assert.equal(message.role, "assistant");
    assert.match(message.id, /^msg_/);
    assert.equal(message.content[0]?.type, "text");
    assert.ok(["end_turn", "max_tokens"].includes(message.stop_reason!));
    assert.ok(message.usage.input_tokens > 5 && message.usage.output_tokens > 0);

    const stream = client.messages.stream(request);
    const kinds: string[] = [];
    stream.on("streamEvent", (event) => kinds.push(event.type));
    const final = await stream.finalMessage();
    assert.equal(final.content[0]?.type === "text" && final.content[0].text, message.content[0]?.type === "text" && message.content[0].text);
    assert.deepEqual(final.usage.output_tokens, message.usage.output_tokens);
    assert.equal(kinds[0], "message_start");
    assert.equal(kinds.at(-1), "message_stop");
    assert.ok(kinds.includes("content_block_delta") && kinds.includes("message_delta"));
  });

  it("reports the stop sequence that ended the message", async () => {
    const free = await client.messages.create({ model: "chat", max_tokens: 40, ...greedy, messages: [{ role: "user", content: "Tell me about Penang." }] });
    const text = free.content[0]?.type === "text" ? free.content[0].text : "";
    const word = text.split(/\s+/).filter((w) => w.length > 3)[2]!;
    const cut = await client.messages.create({ model: "chat", max_tokens: 40, ...greedy, stop_sequences: [word], messages: [{ role: "user", content: "Tell me about Penang." }] });
    const cutText = cut.content[0]?.type === "text" ? cut.content[0].text : "";
    assert.ok(!cutText.includes(word) && text.startsWith(cutText.trimEnd()), "the answer stops before the sequence");
    if (backing === "local") {
      assert.equal(cut.stop_reason, "stop_sequence");
      assert.equal(cut.stop_sequence, word);
    } else {
      // llama-server's OpenAI answers do not say which stop sequence matched (vLLM's do): the stop is honoured, not named.
      assert.ok(["stop_sequence", "end_turn"].includes(cut.stop_reason!));
    }
  });

  it("calls a tool when told to, and continues from its result", async () => {
    const first = await client.messages.create({
      model: "chat",
      max_tokens: 60,
      ...greedy,
      tools: [WEATHER],
      tool_choice: { type: "tool", name: "get_weather" },
      messages: [{ role: "user", content: "What is the weather in Ipoh?" }],
    });
    assert.equal(first.stop_reason, "tool_use");
    const use = first.content.find((b) => b.type === "tool_use");
    assert.ok(use && use.type === "tool_use");
    assert.equal(use.name, "get_weather");
    assert.ok(["Ipoh", "Kuantan", "Kota Bharu"].includes((use.input as { city: string }).city));

    const streamed = await client.messages.stream({ model: "chat", max_tokens: 60, ...greedy, tools: [WEATHER], tool_choice: { type: "any" }, messages: [{ role: "user", content: "What is the weather in Ipoh?" }] }).finalMessage();
    const streamedUse = streamed.content.find((b) => b.type === "tool_use");
    assert.ok(streamedUse && streamedUse.type === "tool_use" && typeof (streamedUse.input as { city?: unknown }).city === "string", JSON.stringify(streamed.content));

    const second = await client.messages.create({
      model: "chat",
      max_tokens: 30,
      ...greedy,
      tools: [WEATHER],
      messages: [
        { role: "user", content: "What is the weather in Ipoh?" },
        { role: "assistant", content: first.content },
        { role: "user", content: [{ type: "tool_result", tool_use_id: use.id, content: "32°C, thunderstorms in the afternoon" }] },
      ],
    });
    assert.equal(second.type, "message");
    assert.ok(second.content.length > 0);
  });

  it("counts input tokens exactly as a message would use them", async () => {
    const request = { model: "chat", system: "Jawab dalam Bahasa Melayu.", messages: [{ role: "user" as const, content: "Apakah ibu negeri Perak?" }] };
    const counted = await client.messages.countTokens(request);
    const message = await client.messages.create({ ...request, max_tokens: 1 });
    assert.equal(counted.input_tokens, message.usage.input_tokens);
    const withTools = await client.messages.countTokens({ ...request, tools: [WEATHER] });
    if (backing === "local") assert.ok(withTools.input_tokens > counted.input_tokens, "tools are part of the prompt");
    // Upstream, the count is the upstream's own template with the tools (llama-server leaves them out of SmolLM2's): exact either way.
    else assert.equal(withTools.input_tokens, (await client.messages.create({ ...request, tools: [WEATHER], max_tokens: 1 })).usage.input_tokens);
  });

  it("answers errors in Anthropic's shape, and accepts the key in either header", async () => {
    await assert.rejects(
      client.messages.create({ model: "chat", max_tokens: 10, messages: [{ role: "user", content: [{ type: "image", source: { type: "base64", media_type: "image/png", data: "iVBORw0KGgo=" } }] }] }),
      (e: unknown) => e instanceof Anthropic.BadRequestError && (e.error as { type: string; error: { type: string; message: string } }).error.type === "invalid_request_error" && /image/.test((e.error as { error: { message: string } }).error.message),
    );
    await assert.rejects(client.messages.create({ model: "no-such-model", max_tokens: 10, messages: [{ role: "user", content: "hi" }] }), (e: unknown) => e instanceof Anthropic.NotFoundError);
    const noKey = new Anthropic({ apiKey: "psk-wrongwrongwrongwrongwrong", baseURL: t.url, maxRetries: 0 });
    await assert.rejects(noKey.messages.create({ model: "chat", max_tokens: 5, messages: [{ role: "user", content: "hi" }] }), (e: unknown) => e instanceof Anthropic.AuthenticationError && (e.error as { type: string }).type === "error");
    const missing = await fetch(`${t.url}/v1/messages`, { method: "POST", headers: { "x-api-key": t.key, "content-type": "application/json" }, body: JSON.stringify({ model: "chat", messages: [{ role: "user", content: "hi" }] }) });
    assert.equal(missing.status, 400);
    const body = (await missing.json()) as { type: string; error: { type: string; message: string } };
    assert.equal(body.type, "error");
    assert.match(body.error.message, /max_tokens/);
    const bearer = await fetch(`${t.url}/v1/messages`, { method: "POST", headers: { authorization: `Bearer ${t.key}`, "content-type": "application/json" }, body: JSON.stringify({ model: "chat", max_tokens: 3, messages: [{ role: "user", content: "hi" }] }) });
    assert.equal(bearer.status, 200);
  });
});
}
