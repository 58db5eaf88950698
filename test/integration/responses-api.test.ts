/**
 * The OpenAI Responses API (`/v1/responses`) through the official `openai` client against
 * a real model: text and message input, instructions, streaming with the typed events,
 * function tools and their outputs, json_schema output, `previous_response_id` with
 * responses stored sealed per workspace, `store: false`, retrieval, deletion, retention.
 */
import assert from "node:assert/strict";
import { readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import OpenAI from "openai";
import { testModel } from "../helpers/models.js";
import { startTestServer, type TestServer } from "../helpers/test-server.js";

const DAY_MS = 86_400_000;

describe("the Responses API with the official openai client", () => {
  let t: TestServer;
  let client: OpenAI;
  let now = Date.now();
  before(async () => {
    t = await startTestServer({
      bindings: { chat: testModel("smollm2-135m-instruct") },
      config: { chat: { contextSize: 2048, sequences: 2 }, responses: { retentionDays: 30 } },
      clock: { now: () => now },
    });
    client = new OpenAI({ apiKey: t.key, baseURL: `${t.url}/v1`, maxRetries: 0 });
  });
  after(() => t.close());

  it("answers text input with instructions, and streams the same text with the typed events", async () => {
    const request = { model: "chat", instructions: "Answer in one short sentence.", input: "What is the capital of Malaysia?", temperature: 0, max_output_tokens: 24 };
    const response = await client.responses.create(request);
    assert.match(response.id, /^resp_/);
    assert.equal(response.object, "response");
    assert.ok(["completed", "incomplete"].includes(response.status!));
    assert.ok(response.output_text.length > 0);
    assert.equal(response.output[0]?.type, "message");
    assert.ok(response.usage!.input_tokens > 10 && response.usage!.output_tokens > 0);

    const stream = await client.responses.create({ ...request, stream: true });
    const types: string[] = [];
    let deltas = "";
    let final: OpenAI.Responses.Response | undefined;
    for await (const event of stream) {
      types.push(event.type);
      if (event.type === "response.output_text.delta") deltas += event.delta;
      if (event.type === "response.completed" || event.type === "response.incomplete") final = event.response;
    }
    assert.equal(types[0], "response.created");
    assert.equal(types[1], "response.in_progress");
    assert.ok(types.includes("response.output_item.added") && types.includes("response.content_part.added") && types.includes("response.output_text.done"));
    assert.equal(deltas, response.output_text);
    assert.equal(final?.output_text ?? (final?.output[0] as { content: { text: string }[] }).content[0]!.text, response.output_text);
  });

  it("continues a conversation from a stored response, and forgets nothing it was told", async () => {
    const first = await client.responses.create({ model: "chat", input: [{ role: "user", content: "My name is Aminah. Remember it." }], temperature: 0, max_output_tokens: 20 });
    const second = await client.responses.create({ model: "chat", previous_response_id: first.id, input: "What is my name?", temperature: 0, max_output_tokens: 20 });
    assert.equal(second.previous_response_id, first.id);
    // The earlier turns are part of the prompt: it is longer than the question alone would be.
    const alone = await client.responses.create({ model: "chat", input: "What is my name?", temperature: 0, max_output_tokens: 20, store: false });
    assert.ok(second.usage!.input_tokens > alone.usage!.input_tokens + first.usage!.output_tokens, `${second.usage!.input_tokens} vs ${alone.usage!.input_tokens}`);

    const fetched = await client.responses.retrieve(second.id);
    assert.equal(fetched.id, second.id);
    assert.equal(fetched.output_text, second.output_text);
    const items = await client.responses.inputItems.list(second.id);
    assert.equal(items.data.length, 1);
    assert.equal((items.data[0] as { content: { text: string }[] }).content[0]!.text, "What is my name?");

    // store: false is honoured: nothing to retrieve or continue from.
    await assert.rejects(client.responses.retrieve(alone.id), (e: unknown) => e instanceof OpenAI.NotFoundError);
    await assert.rejects(client.responses.create({ model: "chat", previous_response_id: alone.id, input: "again", max_output_tokens: 5 }), (e: unknown) => e instanceof OpenAI.NotFoundError && (e as { param?: string }).param === "previous_response_id");
  });

  it("keeps stored responses sealed on disk, per workspace, until deleted or expired", async () => {
    const secret = "Nombor rahsia pesakit ialah 8817-KLX";
    const stored = await client.responses.create({ model: "chat", input: secret, temperature: 0, max_output_tokens: 4 });
    const files = (dir: string): string[] => readdirSync(dir).flatMap((name) => (statSync(path.join(dir, name)).isDirectory() ? files(path.join(dir, name)) : [path.join(dir, name)]));
    for (const file of files(t.dataDir)) assert.ok(!readFileSync(file).includes(Buffer.from("8817-KLX")), `plaintext in ${file}`);

    const me = (await t.call("GET", "/v1/me")).json;
    const ws = (await t.call("POST", "/v1/admin/workspaces", { name: "Other team" })).json;
    const other = (await t.call("POST", `/v1/admin/workspaces/${ws.id}/api_keys`, { name: "other", scopes: ["inference"] })).json;
    assert.notEqual(ws.id, me.workspace_id);
    assert.equal((await t.call("GET", `/v1/responses/${stored.id}`, undefined, other.secret)).status, 404);

    const deleted: unknown = await client.responses.delete(stored.id);
    assert.deepEqual(deleted, { id: stored.id, object: "response", deleted: true });
    assert.equal((await t.call("GET", `/v1/responses/${stored.id}`)).status, 404);
    assert.equal((await t.call("DELETE", `/v1/responses/${stored.id}`)).status, 404);

    const old = await client.responses.create({ model: "chat", input: "Hello", max_output_tokens: 2 });
    now += 31 * DAY_MS;
    assert.equal((await t.call("GET", `/v1/responses/${old.id}`)).status, 404, "past its retention");
  });

  it("calls a function tool, and continues from its output", async () => {
    const tools = [{ type: "function" as const, name: "get_weather", description: "Weather in a city", parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"], additionalProperties: false }, strict: true }];
    const first = await client.responses.create({ model: "chat", input: "What is the weather in Ipoh?", tools, tool_choice: { type: "function", name: "get_weather" }, temperature: 0, max_output_tokens: 40 });
    const call = first.output.find((item) => item.type === "function_call");
    assert.ok(call && call.type === "function_call", JSON.stringify(first.output));
    assert.equal(call.name, "get_weather");
    assert.equal(typeof JSON.parse(call.arguments).city, "string");

    const streamed = await client.responses.create({ model: "chat", input: "What is the weather in Ipoh?", tools, tool_choice: "required", temperature: 0, max_output_tokens: 40, stream: true });
    let args = "";
    for await (const event of streamed) if (event.type === "response.function_call_arguments.done") args = event.arguments;
    assert.equal(typeof JSON.parse(args).city, "string");

    const second = await client.responses.create({
      model: "chat",
      previous_response_id: first.id,
      input: [{ type: "function_call_output", call_id: call.call_id, output: "32°C and thunderstorms" }],
      tools,
      temperature: 0,
      max_output_tokens: 30,
    });
    assert.equal(second.status === "completed" || second.status === "incomplete", true);
  });

  it("produces JSON valid against a text.format json_schema", async () => {
    const schema = { type: "object", properties: { city: { type: "string", maxLength: 20 }, population: { type: "integer", minimum: 0 } }, required: ["city", "population"], additionalProperties: false };
    const response = await client.responses.create({ model: "chat", input: "A city in Malaysia as JSON.", text: { format: { type: "json_schema", name: "city", schema, strict: true } }, temperature: 0, max_output_tokens: 40 });
    const value = JSON.parse(response.output_text) as { city: string; population: number };
    assert.equal(typeof value.city, "string");
    assert.ok(Number.isInteger(value.population) && value.population >= 0);
  });

  it("refuses what it cannot do, by name", async () => {
    for (const [body, param] of [
      [{ input: [{ role: "user", content: [{ type: "input_image", image_url: "data:image/png;base64,AAAA" }] }] }, "input.0.content.0.type"],
      [{ input: "hi", tools: [{ type: "web_search" }] }, "tools.0.type"],
      [{ input: "hi", reasoning: { effort: "high" } }, "reasoning"],
      [{ input: "hi", background: true }, "background"],
      [{ input: [{ type: "item_reference", id: "msg_1" }] }, "input.0.type"],
      [{ input: "hi", truncation: "auto" }, "truncation"],
    ] as const) {
      const res = await t.call("POST", "/v1/responses", { model: "chat", max_output_tokens: 4, ...body });
      assert.equal(res.status, 400, JSON.stringify(body));
      assert.equal(res.json.error.param, param, JSON.stringify(res.json));
    }
  });
});
