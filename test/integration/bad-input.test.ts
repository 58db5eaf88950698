/** Every malformed request gets a 4xx in the error shape, and the server stays up. */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { tinyModel } from "../helpers/models.js";
import { startTestServer, type TestServer } from "../helpers/test-server.js";

describe("bad input", () => {
  let t: TestServer;
  before(async () => {
    t = await startTestServer({
      bindings: { "svc-merlion-13b": tinyModel("stories260K"), tiny: tinyModel("llama-2-tiny-random") },
      config: { limits: { maxJsonBodyBytes: 64 * 1024 }, chat: { contextSize: 512 } },
    });
  });
  after(() => t.close());

  const user = [{ role: "user", content: "Once upon a time" }];
  const cases: { name: string; route: string; body: unknown; status: number; code: string; param?: string }[] = [
    { name: "malformed JSON", route: "/v1/chat/completions", body: '{"messages": [', status: 400, code: "invalid_json" },
    { name: "an array nested 20,000 deep", route: "/v1/chat/completions", body: "[".repeat(20_000) + "]".repeat(20_000), status: 400, code: "json_too_deep" },
    { name: "messages nested 5,000 deep", route: "/v1/embeddings", body: `{"input":${"[".repeat(5000)}${"]".repeat(5000)}}`, status: 400, code: "json_too_deep" },
    { name: "input nested 127 deep (within the limit, still not an input)", route: "/v1/embeddings", body: `{"input":${"[".repeat(127)}${"]".repeat(127)}}`, status: 400, code: "invalid_parameter", param: "input" },
    { name: "a JSON array body", route: "/v1/chat/completions", body: "[1,2]", status: 400, code: "invalid_body" },
    { name: "no body", route: "/v1/chat/completions", body: undefined, status: 400, code: "missing_body" },
    { name: "messages of the wrong type", route: "/v1/chat/completions", body: { messages: "hi" }, status: 400, code: "invalid_parameter", param: "messages" },
    { name: "content of the wrong type", route: "/v1/chat/completions", body: { messages: [{ role: "user", content: 5 }] }, status: 400, code: "invalid_parameter", param: "messages.0.content" },
    { name: "empty messages", route: "/v1/chat/completions", body: { messages: [] }, status: 400, code: "invalid_parameter", param: "messages" },
    { name: "an unknown model", route: "/v1/chat/completions", body: { model: "gpt-9", messages: user }, status: 404, code: "model_not_found", param: "model" },
    { name: "an embedding model for chat", route: "/v1/chat/completions", body: { model: "svc-embed-1024", messages: user }, status: 404, code: "model_not_found", param: "model" },
    { name: "huge max_tokens", route: "/v1/chat/completions", body: { messages: user, max_tokens: 10_000_000 }, status: 400, code: "context_length_exceeded", param: "max_tokens" },
    { name: "negative temperature", route: "/v1/chat/completions", body: { messages: user, temperature: -0.5 }, status: 400, code: "invalid_parameter", param: "temperature" },
    { name: "an unknown parameter", route: "/v1/chat/completions", body: { messages: user, temprature: 1 }, status: 400, code: "unknown_parameter", param: "temprature" },
    { name: "stream_options without stream", route: "/v1/chat/completions", body: { messages: user, stream_options: { include_usage: true } }, status: 400, code: "invalid_parameter", param: "stream_options" },
    { name: "an invalid JSON schema", route: "/v1/chat/completions", body: { messages: user, response_format: { type: "json_schema", json_schema: { name: "x", schema: { type: "frobnicate" } } } }, status: 400, code: "unsupported_json_schema" },
    { name: "a prompt longer than the context", route: "/v1/chat/completions", body: { messages: [{ role: "user", content: "tale ".repeat(3000) }] }, status: 400, code: "context_length_exceeded", param: "messages" },
    { name: "an oversized body", route: "/v1/chat/completions", body: { messages: [{ role: "user", content: "x".repeat(100 * 1024) }] }, status: 413, code: "request_too_large" },
    { name: "embeddings without input", route: "/v1/embeddings", body: { model: "tiny" }, status: 400, code: "invalid_parameter", param: "input" },
    { name: "embeddings with token ids", route: "/v1/embeddings", body: { model: "tiny", input: [[1, 2, 3]] }, status: 400, code: "unsupported_input_type", param: "input.0" },
    { name: "embeddings with a bad encoding", route: "/v1/embeddings", body: { model: "tiny", input: "x", encoding_format: "hex" }, status: 400, code: "invalid_parameter", param: "encoding_format" },
    { name: "embeddings with other dimensions", route: "/v1/embeddings", body: { model: "tiny", input: "x", dimensions: 3 }, status: 400, code: "unsupported_dimensions", param: "dimensions" },
    { name: "an embeddings input longer than the model takes", route: "/v1/embeddings", body: { model: "tiny", input: ["ok", "word ".repeat(5000)] }, status: 400, code: "context_length_exceeded", param: "input.1" },
  ];

  for (const c of cases) {
    it(`answers ${c.name} with ${c.status} ${c.code}`, async () => {
      const res = await t.call("POST", c.route, c.body);
      assert.equal(res.status, c.status, JSON.stringify(res.json));
      assert.equal(res.json.error.code, c.code);
      assert.equal(typeof res.json.error.message, "string");
      assert.equal(typeof res.json.error.type, "string");
      if (c.param) assert.equal(res.json.error.param, c.param);
    });
  }

  it("answers malformed percent-encoding in a path with 400, not 500", async () => {
    for (const route of ["/v1/rag/corpora/%ff", "/v1/models/%", "/v1/models/%E0%A4%A"]) {
      const res = await t.call("GET", route);
      assert.equal(res.status, 400, `${route}: ${JSON.stringify(res.json)}`);
      assert.equal(res.json.error.code, "invalid_url");
    }
  });

  it("answers a body that does not match its Content-Encoding with 400", async () => {
    for (const encoding of ["gzip", "deflate", "br"]) {
      const res = await fetch(`${t.url}/v1/embeddings`, { method: "POST", headers: { authorization: `Bearer ${t.key}`, "content-type": "application/json", "content-encoding": encoding }, body: "certainly not compressed" });
      const body = (await res.json()) as any;
      assert.equal(res.status, 400, `${encoding}: ${JSON.stringify(body)}`);
      assert.equal(body.error.code, "invalid_content_encoding");
    }
  });

  it("shows strangers no file paths on /healthz", async () => {
    await t.call("POST", "/v1/embeddings", { model: "tiny", input: "load it" });
    const health = (await t.call("GET", "/healthz", undefined, null)).json;
    assert.ok(health.engine.loadedModels.length > 0);
    assert.doesNotMatch(JSON.stringify(health), /\.gguf|\/shared\//);
  });

  it("answers a non-JSON content type with 415", async () => {
    const res = await fetch(`${t.url}/v1/chat/completions`, { method: "POST", headers: { authorization: `Bearer ${t.key}`, "content-type": "text/plain" }, body: "hello" });
    assert.equal(res.status, 415);
  });

  it("is still up and serving after all of that", async () => {
    const res = await t.call("POST", "/v1/chat/completions", { messages: user, max_tokens: 3, temperature: 0 });
    assert.equal(res.status, 200);
    assert.equal(res.json.choices[0].finish_reason, "length");
  });
});
