/**
 * The Responses API's `file_search` tool with the official `openai` npm client against the
 * real server: a vector store made of the bilingual eval documents, then `responses.create`
 * with `tools: [{type: "file_search", vector_store_ids}]`, non-streamed and streamed: the
 * output holds the `file_search_call` item (its results with `include`), and `output_text`
 * carries `file_citation` annotations naming the right file; what must be refused is.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import OpenAI, { toFile } from "openai";
import { testModel } from "../helpers/models.js";
import { EVAL_DOCS } from "../helpers/rag.js";
import { startTestServer, type TestServer } from "../helpers/test-server.js";

const FILES = ["employee-leave-policy.md", "banjir-kelantan-2022.md", "eksport-minyak-sawit-2023.md", "rice-price-policy-note.md"];
const LEAVE_QUESTION = "How many days of annual leave a year does an employee with less than 5 years of service get?";

type Annotation = { type: string; index: number; file_id: string; filename: string };

describe("Responses API file_search over vector stores (official openai client)", () => {
  let t: TestServer;
  let client: OpenAI;
  let storeId: string;
  const fileIds = new Map<string, string>();

  before(async () => {
    t = await startTestServer({
      bindings: { "svc-merlion-13b": testModel("qwen2.5-coder-1.5b"), e5: testModel("multilingual-e5-small") },
      config: { chat: { contextSize: 4096, sequences: 1 } },
    });
    client = new OpenAI({ baseURL: `${t.url}/v1`, apiKey: t.key, maxRetries: 0 });
    const store = await client.vectorStores.create({ name: "Dasar dan laporan" });
    storeId = store.id;
    for (const name of FILES) {
      const file = await client.vectorStores.files.uploadAndPoll(store.id, await toFile(readFileSync(path.join(EVAL_DOCS, name)), name), { pollIntervalMs: 200 });
      assert.equal(file.status, "completed", JSON.stringify(file.last_error));
      fileIds.set(name, file.id);
    }
  });
  after(() => t?.close());

  it("answers from the store: a file_search_call item, then text whose file_citation annotations name the right file", async () => {
    const response = await client.responses.create({
      model: "svc-merlion-13b",
      input: LEAVE_QUESTION,
      tools: [{ type: "file_search", vector_store_ids: [storeId], max_num_results: 3 }],
      include: ["file_search_call.results"],
      temperature: 0,
      max_output_tokens: 120,
    });
    assert.equal(response.status, "completed");
    const [search, message] = response.output;
    assert.equal(search?.type, "file_search_call");
    if (search?.type !== "file_search_call") return;
    assert.equal(search.status, "completed");
    assert.deepEqual(search.queries, [LEAVE_QUESTION]);
    assert.ok(search.results && search.results.length === 3);
    assert.equal(search.results[0]!.file_id, fileIds.get("employee-leave-policy.md"));
    assert.equal(search.results[0]!.filename, "employee-leave-policy.md");
    assert.match(search.results[0]!.text ?? "", /\S/);

    assert.equal(message?.type, "message");
    if (message?.type !== "message") return;
    const part = message.content[0]!;
    assert.equal(part.type, "output_text");
    if (part.type !== "output_text") return;
    assert.equal(response.output_text, part.text);
    assert.doesNotMatch(part.text, /\[\d+\]/, "citation markers become annotations");
    const annotations = part.annotations as Annotation[];
    assert.ok(annotations.length > 0, `cited: ${part.text} from ${JSON.stringify(search.results.map((r) => (r.text ?? "").slice(0, 300)))}`);
    for (const a of annotations) {
      assert.equal(a.type, "file_citation");
      assert.ok(a.index >= 0 && a.index <= part.text.length);
      assert.ok([...fileIds.values()].includes(a.file_id));
    }
    assert.ok(annotations.some((a) => a.file_id === fileIds.get("employee-leave-policy.md") && a.filename === "employee-leave-policy.md"));

    // Without include, the results are not shown; the call is.
    const plain = await client.responses.create({ model: "svc-merlion-13b", input: LEAVE_QUESTION, tools: [{ type: "file_search", vector_store_ids: [storeId] }], temperature: 0, max_output_tokens: 60 });
    const call = plain.output[0];
    assert.ok(call?.type === "file_search_call" && call.results === null);
  });

  it("streams it: the file_search_call events first, text deltas without markers, annotation events, and the same final text", async () => {
    const stream = await client.responses.create({
      model: "svc-merlion-13b",
      input: "Berapakah bilangan kemuncak mangsa di pusat pemindahan sementara semasa banjir Kelantan November 2022?",
      tools: [{ type: "file_search", vector_store_ids: [storeId], max_num_results: 3 }],
      temperature: 0,
      max_output_tokens: 120,
      stream: true,
    });
    const types: string[] = [];
    let deltas = "";
    const added: Annotation[] = [];
    let final: OpenAI.Responses.Response | undefined;
    for await (const event of stream) {
      types.push(event.type);
      if (event.type === "response.output_text.delta") deltas += event.delta;
      if (event.type === "response.output_text.annotation.added") added.push(event.annotation as Annotation);
      if (event.type === "response.completed") final = event.response;
    }
    assert.deepEqual(types.slice(0, 7), [
      "response.created",
      "response.in_progress",
      "response.output_item.added",
      "response.file_search_call.in_progress",
      "response.file_search_call.searching",
      "response.file_search_call.completed",
      "response.output_item.done",
    ]);
    assert.ok(final);
    assert.equal(final.output[0]?.type, "file_search_call");
    const message = final.output.find((o) => o.type === "message");
    const part = message?.type === "message" ? message.content[0] : undefined;
    assert.ok(part?.type === "output_text");
    assert.equal(part.text, deltas, "the deltas add up to the final text");
    assert.doesNotMatch(deltas, /\[\d+\]/);
    assert.deepEqual(part.annotations, added, "each annotation was announced once, in order");
    assert.ok(added.some((a) => a.file_id === fileIds.get("banjir-kelantan-2022.md")), JSON.stringify({ text: deltas, added }));
  });

  it("filters by attributes and continues a conversation with previous_response_id", async () => {
    const leave = fileIds.get("employee-leave-policy.md")!;
    await client.vectorStores.files.update(leave, { vector_store_id: storeId, attributes: { dept: "hr" } });
    const filtered = await client.responses.create({
      model: "svc-merlion-13b",
      input: "What does the policy say about annual leave?",
      tools: [{ type: "file_search", vector_store_ids: [storeId], filters: { type: "eq", key: "dept", value: "hr" } }],
      include: ["file_search_call.results"],
      max_output_tokens: 40,
      temperature: 0,
    });
    const call = filtered.output[0];
    assert.ok(call?.type === "file_search_call" && call.results && call.results.length > 0);
    assert.ok(call.results.every((r) => r.file_id === leave));
    const next = await client.responses.create({ model: "svc-merlion-13b", previous_response_id: filtered.id, input: "Thank you.", max_output_tokens: 8 });
    assert.equal(next.status === "completed" || next.status === "incomplete", true);
  });

  it("refuses what it cannot do, in OpenAI's error shape", async () => {
    const refuse = async (body: Record<string, unknown>, key = t.key) => {
      const res = await fetch(`${t.url}/v1/responses`, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: JSON.stringify({ model: "svc-merlion-13b", max_output_tokens: 8, ...body }) });
      const json = (await res.json()) as { error: { message: string; code: string | null; param: string | null } };
      assert.ok(res.status >= 400 && res.status < 500, `${res.status} ${JSON.stringify(json)}`);
      return { status: res.status, ...json.error };
    };
    const unknown = await refuse({ input: "x", tools: [{ type: "file_search", vector_store_ids: ["vs_doesnotexist000000000000"] }] });
    assert.equal(unknown.status, 404);
    assert.equal((await refuse({ input: "x", tools: [{ type: "file_search", vector_store_ids: [] }] })).status, 400);
    assert.match((await refuse({ input: "x", tools: [{ type: "file_search", vector_store_ids: ["corp_x"] }] })).message, /begins with 'vs_'/);
    assert.equal((await refuse({ input: "x", tools: [{ type: "file_search", vector_store_ids: [storeId], filters: { type: "eq", key: "dept" } }] })).status, 400);
    assert.equal((await refuse({ input: "x", tools: [{ type: "file_search", vector_store_ids: [storeId], max_num_results: 500 }] })).status, 400);
    assert.match((await refuse({ input: "x", include: ["message.output_text.logprobs"] })).message, /file_search_call\.results/);
    const twice = await refuse({ input: "x", tools: [{ type: "file_search", vector_store_ids: [storeId] }, { type: "file_search", vector_store_ids: [storeId] }] });
    assert.match(twice.message, /one file_search tool/);
    const chatOnly = await t.call("POST", "/v1/admin/workspaces/ws_default/api_keys", { name: "chat only", scopes: ["inference"] });
    const scoped = await refuse({ input: "x", tools: [{ type: "file_search", vector_store_ids: [storeId] }] }, chatOnly.json.secret);
    assert.equal(scoped.status, 403);
    assert.match(scoped.message, /rag\.read/);
  });
});
