/**
 * Contract tests with the official `openai` npm client pointed at the server: what the
 * SDK sends, the server must accept, and what the server returns, the SDK must parse. The
 * same tests run twice: with the models in Pustaka's own engine, and with the same models
 * served by llama.cpp's llama-server behind Pustaka (remote models).
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import OpenAI from "openai";
import { startLlamaServer, type LlamaServer } from "../helpers/llama-server.js";
import { testModel, tinyModel } from "../helpers/models.js";
import { startTestServer, type TestServer } from "../helpers/test-server.js";

for (const backing of ["local", "remote"] as const) {
describe(`official openai client (${backing} models)`, () => {
  let t: TestServer;
  let client: OpenAI;
  const upstreams: LlamaServer[] = [];
  before(async () => {
    if (backing === "local") {
      t = await startTestServer({
        bindings: { "svc-merlion-13b": tinyModel("stories260K"), "svc-embed-1024": testModel("embed-1024") },
        config: { chat: { contextSize: 512 } },
      });
    } else {
      const [chat, embed] = await Promise.all([
        startLlamaServer({ model: tinyModel("stories260K"), alias: "stories", parallel: 2, contextSize: 1024 }),
        startLlamaServer({ model: testModel("embed-1024"), alias: "embed", kind: "embedding", parallel: 2, contextSize: 1024 }),
      ]);
      upstreams.push(chat, embed);
      t = await startTestServer({
        bindings: {},
        config: { models: { remote: { "svc-merlion-13b": { upstreams: [{ url: chat.url, model: "stories" }] }, "svc-embed-1024": { upstreams: [{ url: embed.url, model: "embed" }] } } } },
      });
    }
    client = new OpenAI({ apiKey: t.key, baseURL: `${t.url}/v1`, maxRetries: 0 });
  });
  after(async () => {
    await t?.close();
    await Promise.all(upstreams.map((u) => u.stop()));
  });

  it("chat.completions.create without stream", async () => {
    const completion = await client.chat.completions.create({ model: "svc-merlion-13b", messages: [{ role: "user", content: "Once upon a time" }], max_tokens: 8, temperature: 0 });
    assert.equal(completion.object, "chat.completion");
    assert.match(completion.id, /^chatcmpl-/);
    assert.equal(completion.model, "svc-merlion-13b");
    assert.equal(completion.choices[0]?.finish_reason, "length");
    assert.ok((completion.choices[0]?.message.content ?? "").length > 0);
    assert.equal(completion.usage?.completion_tokens, 8);
    assert.equal(completion.usage?.total_tokens, (completion.usage?.prompt_tokens ?? 0) + 8);
  });

  it("chat.completions.create with stream and include_usage", async () => {
    const stream = await client.chat.completions.create({
      model: "svc-merlion-13b",
      messages: [{ role: "user", content: "Once upon a time" }],
      max_tokens: 6,
      temperature: 0,
      stream: true,
      stream_options: { include_usage: true },
    });
    const ids = new Set<string>();
    let text = "";
    let finish: string | null = null;
    let usage: OpenAI.CompletionUsage | null | undefined;
    let first = true;
    for await (const chunk of stream) {
      ids.add(chunk.id);
      if (first) assert.equal(chunk.choices[0]?.delta.role, "assistant");
      first = false;
      text += chunk.choices[0]?.delta.content ?? "";
      finish = chunk.choices[0]?.finish_reason ?? finish;
      if (chunk.usage) usage = chunk.usage;
    }
    assert.equal(ids.size, 1, "one id for the whole stream");
    assert.ok(text.length > 0);
    assert.equal(finish, "length");
    assert.equal(usage?.completion_tokens, 6);
    // The same request without streaming gives the same text at temperature 0.
    const whole = await client.chat.completions.create({ model: "svc-merlion-13b", messages: [{ role: "user", content: "Once upon a time" }], max_tokens: 6, temperature: 0 });
    assert.equal(text, whole.choices[0]?.message.content);
  });

  it("embeddings.create through its default base64 path, and float", async () => {
    const viaBase64 = await client.embeddings.create({ model: "svc-embed-1024", input: ["Selamat pagi", "Good morning"] });
    assert.equal(viaBase64.data.length, 2);
    assert.equal(viaBase64.data[0]?.embedding.length, 1024, "svc-embed-1024 gives 1024 dimensions");
    const viaFloat = await client.embeddings.create({ model: "svc-embed-1024", input: ["Selamat pagi", "Good morning"], encoding_format: "float" });
    viaFloat.data.forEach((item, i) => {
      const other = viaBase64.data[i]!.embedding;
      item.embedding.forEach((v, j) => assert.ok(Math.abs(v - other[j]!) < 1e-6));
    });
    assert.ok(viaFloat.usage.prompt_tokens > 0);
  });

  it("models.list and models.retrieve", async () => {
    const ids: string[] = [];
    for await (const model of client.models.list()) ids.push(model.id);
    assert.ok(ids.includes("svc-merlion-13b") && ids.includes("svc-embed-1024"), ids.join(","));
    const model = (await client.models.retrieve("svc-embed-1024")) as OpenAI.Model & { type: string; dimensions: number; backing: { kind: string; file?: string; upstreams?: { model: string }[] } };
    assert.equal(model.type, "embedding");
    if (backing === "local") {
      assert.equal(model.dimensions, 1024);
      assert.equal(model.backing.file, testModel("embed-1024"));
    } else {
      // The width is learnt from the upstream's first answer (the embeddings test above).
      assert.equal(model.dimensions, 1024);
      assert.equal(model.backing.kind, "remote");
      assert.equal(model.backing.upstreams?.[0]?.model, "embed");
    }
  });

  it("surfaces errors as the SDK's typed errors", async () => {
    await assert.rejects(client.chat.completions.create({ model: "no-such-model", messages: [{ role: "user", content: "x" }] }), (e: unknown) => {
      assert.ok(e instanceof OpenAI.NotFoundError);
      assert.equal(e.status, 404);
      assert.equal(e.code, "model_not_found");
      assert.equal(e.param, "model");
      assert.match(e.requestID ?? "", /^req_/);
      return true;
    });
    await assert.rejects(client.chat.completions.create({ model: "svc-merlion-13b", messages: [], max_tokens: 1 }), OpenAI.BadRequestError);
    const anonymous = new OpenAI({ apiKey: "psk-not-a-real-key-xxxxxxxx", baseURL: `${t.url}/v1`, maxRetries: 0 });
    await assert.rejects(anonymous.models.list(), OpenAI.AuthenticationError);
  });
});
}
