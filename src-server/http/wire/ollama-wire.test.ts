import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { ChatEvent } from "../../engine/types.js";
import { notFound, ServiceError } from "../../errors.js";
import type { ModelEntry } from "../../models/model-registry.js";
import type { GgufSummary } from "../../models/gguf-summary.js";
import { toWireError } from "../error-handler.js";
import { zodToServiceError } from "../validate.js";
import { ollamaCapabilities, ollamaDigest, ollamaName, resolveOllamaModel, showObject, tagObject } from "./ollama-models-wire.js";
import { collectChat, collectGenerate, ollamaChatChunks, ollamaGenerateChunks, ollamaMetrics, ollamaToolCall } from "./ollama-replies-wire.js";
import {
  imagesAt,
  keepAliveSeconds,
  ollamaError,
  OllamaChatRequestSchema,
  OllamaEmbedRequestSchema,
  OllamaGenerateRequestSchema,
  OllamaShowRequestSchema,
  refuseUnsupported,
  toGeneratePlan,
  toOllamaChatInput,
  toOllamaMessages,
} from "./ollama-wire.js";

function parse<S extends { safeParse: (v: unknown) => { success: boolean; data?: unknown; error?: unknown } }>(schema: S, body: unknown) {
  const result = schema.safeParse(body) as { success: true; data: never } | { success: false; error: Parameters<typeof zodToServiceError>[0] };
  if (!result.success) throw zodToServiceError(result.error);
  return result.data;
}

const chatRequest = (body: Record<string, unknown>) => parse(OllamaChatRequestSchema, { model: "m", ...body }) as ReturnType<typeof OllamaChatRequestSchema.parse>;
const generateRequest = (body: Record<string, unknown>) => parse(OllamaGenerateRequestSchema, { model: "m", ...body }) as ReturnType<typeof OllamaGenerateRequestSchema.parse>;

async function* events(list: ChatEvent[]): AsyncGenerator<ChatEvent, void, undefined> {
  for (const event of list) yield event;
}

/** A clock that advances 10 ms a reading. */
const ticking = (start = 100) => {
  let t = start;
  return () => (t += 10);
};

async function all<T>(source: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of source) out.push(item);
  return out;
}

describe("keep_alive", () => {
  it("reads seconds and Go durations as Ollama does", () => {
    assert.equal(keepAliveSeconds(300), 300);
    assert.equal(keepAliveSeconds(0), 0);
    assert.equal(keepAliveSeconds(-1), -1);
    assert.equal(keepAliveSeconds("0"), 0);
    assert.equal(keepAliveSeconds("300"), 300);
    assert.equal(keepAliveSeconds("5m"), 300);
    assert.equal(keepAliveSeconds("1h30m"), 5400);
    assert.equal(keepAliveSeconds("1.5s"), 1.5);
    assert.equal(keepAliveSeconds("250ms"), 0.25);
    assert.equal(keepAliveSeconds("-1s"), -1);
    assert.equal(keepAliveSeconds("-5m"), -300);
  });

  it("refuses anything else by name", () => {
    for (const bad of ["5 minutes", "m", "", "1d", "5m-", "--1s", "abc", "1e3s"]) assert.equal(keepAliveSeconds(bad), null, bad);
    assert.equal(keepAliveSeconds(Number.NaN), null);
    assert.throws(() => chatRequest({ keep_alive: "forever" }), (e: ServiceError) => e.param === "keep_alive" && /invalid duration/.test(e.message));
    assert.doesNotThrow(() => chatRequest({ keep_alive: "10m" }));
    assert.doesNotThrow(() => chatRequest({ keep_alive: -1 }));
  });
});

describe("Ollama chat requests", () => {
  it("maps options onto sampling with Ollama's defaults, ignoring the options this engine lacks", () => {
    const plain = toOllamaChatInput(chatRequest({ messages: [{ role: "user", content: "hi" }] }));
    assert.deepEqual(plain.sampling, { temperature: 0.8, topP: 0.9, topK: 40, minP: undefined, seed: undefined, repeatPenalty: undefined, presencePenalty: undefined, frequencyPenalty: undefined });
    assert.equal(plain.maxTokens, undefined);
    assert.deepEqual(plain.responseFormat, { type: "text" });
    const tuned = toOllamaChatInput(
      chatRequest({
        messages: [{ role: "user", content: "hi" }],
        options: { temperature: 0, top_p: 0.5, top_k: 7, seed: 42, num_predict: 12, stop: ["\n", ""], repeat_penalty: 1.2, num_ctx: 4096, mirostat: 2, num_gpu: 99, made_up: "x" },
      }),
    );
    assert.deepEqual(tuned.sampling, { temperature: 0, topP: 0.5, topK: 7, minP: undefined, seed: 42, repeatPenalty: 1.2, presencePenalty: undefined, frequencyPenalty: undefined });
    assert.equal(tuned.maxTokens, 12);
    assert.deepEqual(tuned.stop, ["\n"], "an empty stop string stops nothing");
    // -1 (no limit) and -2 (fill the context): until the context is full; seed -1: random.
    for (const n of [-1, -2, 0]) assert.equal(toOllamaChatInput(chatRequest({ messages: [], options: { num_predict: n, seed: -1 } })).maxTokens, undefined);
    assert.equal(toOllamaChatInput(chatRequest({ messages: [], options: { seed: -1 } })).sampling.seed, undefined);
    assert.deepEqual(toOllamaChatInput(chatRequest({ messages: [], options: { stop: "END" } })).stop, ["END"]);
  });

  it("refuses a known option of the wrong type, naming it", () => {
    assert.throws(() => chatRequest({ options: { temperature: "hot" } }), (e: ServiceError) => e.param === "options.temperature");
    assert.throws(() => chatRequest({ options: { num_predict: 1.5 } }), (e: ServiceError) => e.param === "options.num_predict");
    assert.throws(() => chatRequest({ options: { stop: [1] } }), (e: ServiceError) => e.param === "options.stop");
  });

  it("maps format onto structured output: json mode or a JSON Schema", () => {
    const schema = { type: "object", properties: { age: { type: "integer" } }, required: ["age"] };
    assert.deepEqual(toOllamaChatInput(chatRequest({ format: "json" })).responseFormat, { type: "json_object" });
    assert.deepEqual(toOllamaChatInput(chatRequest({ format: schema })).responseFormat, { type: "json_schema", name: "format", schema });
    assert.deepEqual(toOllamaChatInput(chatRequest({ format: "" })).responseFormat, { type: "text" });
    assert.throws(() => chatRequest({ format: "yaml" }), (e: ServiceError) => e.param === "format");
  });

  it("ignores fields Ollama does not know, as Ollama does", () => {
    assert.doesNotThrow(() => chatRequest({ messages: [{ role: "user", content: "hi", extra: 1 }], surprise: true }));
    assert.throws(() => chatRequest({ messages: [{ role: "robot", content: "hi" }] }), (e: ServiceError) => e.param === "messages.0.role");
  });

  it("gives Ollama's id-less tool calls ids and pairs each tool result with its call", () => {
    const messages = toOllamaMessages(
      chatRequest({
        messages: [
          { role: "system", content: "Be brief." },
          { role: "user", content: "Weather and time in Ipoh?" },
          {
            role: "assistant",
            content: "",
            tool_calls: [
              { function: { name: "get_weather", arguments: { city: "Ipoh" } } },
              { function: { name: "get_time", arguments: '{"tz":"Asia/Kuala_Lumpur"}' } },
            ],
          },
          { role: "tool", tool_name: "get_time", content: "14:05" },
          { role: "tool", content: "Hujan" },
          { role: "user", content: "Thanks" },
        ],
      }).messages!,
    );
    assert.deepEqual(messages, [
      { role: "system", content: "Be brief." },
      { role: "user", content: "Weather and time in Ipoh?" },
      {
        role: "assistant",
        content: null,
        toolCalls: [
          { id: "call_2_0", name: "get_weather", arguments: '{"city":"Ipoh"}' },
          { id: "call_2_1", name: "get_time", arguments: '{"tz":"Asia/Kuala_Lumpur"}' },
        ],
      },
      { role: "tool", toolCallId: "call_2_1", content: "14:05" },
      { role: "tool", toolCallId: "call_2_0", content: "Hujan" },
      { role: "user", content: "Thanks" },
    ]);
    // Ids a client sent are kept and matched; a result answering no call keeps an id none has (the engine refuses it).
    const withIds = toOllamaMessages(chatRequest({ messages: [{ role: "assistant", tool_calls: [{ id: "c1", function: { name: "f", arguments: {} } }] }, { role: "tool", tool_call_id: "c1", content: "r" }, { role: "tool", content: "stray" }] }).messages!);
    assert.deepEqual(withIds.slice(1), [
      { role: "tool", toolCallId: "c1", content: "r" },
      { role: "tool", toolCallId: "unanswered_2", content: "stray" },
    ]);
  });

  it("passes tools through, refusing duplicates, and takes Pustaka's tool_choice extension", () => {
    const tool = (name: string) => ({ type: "function", function: { name, description: "d", parameters: { type: "object", properties: {} } } });
    const input = toOllamaChatInput(chatRequest({ messages: [], tools: [tool("a"), tool("b")] }));
    assert.deepEqual(input.tools.map((t) => t.name), ["a", "b"]);
    assert.equal(input.toolChoice, "auto");
    assert.deepEqual(toOllamaChatInput(chatRequest({ tools: [tool("a")], tool_choice: { type: "function", function: { name: "a" } } })).toolChoice, { name: "a" });
    assert.equal(toOllamaChatInput(chatRequest({ tools: [tool("a")], tool_choice: "required" })).toolChoice, "required");
    assert.throws(() => toOllamaChatInput(chatRequest({ tools: [tool("a"), tool("a")] })), (e: ServiceError) => e.param === "tools");
    assert.throws(() => chatRequest({ tools: [tool("no spaces allowed")] }), (e: ServiceError) => e.param === "tools.0.function.name");
  });

  it("refuses thinking, log probabilities and images, naming where they are", () => {
    assert.throws(() => refuseUnsupported({ think: true }, "m"), (e: ServiceError) => e.param === "think");
    assert.throws(() => refuseUnsupported({ think: "high" }, "m"), (e: ServiceError) => e.param === "think");
    assert.doesNotThrow(() => refuseUnsupported({ think: false, logprobs: false, top_logprobs: 0 }, "m"));
    assert.throws(() => refuseUnsupported({ logprobs: true }, "m"), (e: ServiceError) => e.param === "logprobs");
    assert.equal(imagesAt({ messages: [{ images: [] }, { images: ["aGk="] }] }), "messages.1.images");
    assert.equal(imagesAt({ images: ["aGk="] }), "images");
    assert.equal(imagesAt({ images: [], messages: [{ images: null }] }), null);
  });
});

describe("Ollama generate requests", () => {
  it("runs the prompt in the chat template, with the system message", () => {
    const plan = toGeneratePlan(generateRequest({ prompt: "Why?", system: "Be brief.", format: "json", options: { num_predict: 5 } }));
    assert.equal(plan.kind, "chat");
    assert.ok(plan.kind === "chat");
    assert.deepEqual(plan.input.messages, [
      { role: "system", content: "Be brief." },
      { role: "user", content: "Why?" },
    ]);
    assert.deepEqual(plan.input.responseFormat, { type: "json_object" });
    assert.equal(plan.input.maxTokens, 5);
  });

  it("continues a raw prompt or fills in the middle without a template", () => {
    const raw = toGeneratePlan(generateRequest({ prompt: "<s>[INST] hi [/INST]", raw: true }));
    assert.deepEqual(raw.kind === "completion" && raw.input.prompt, "<s>[INST] hi [/INST]");
    const fim = toGeneratePlan(generateRequest({ prompt: "def f(a, b):", suffix: "    return c" }));
    assert.ok(fim.kind === "completion");
    assert.equal(fim.input.suffix, "    return c");
    assert.throws(() => toGeneratePlan(generateRequest({ prompt: "x", raw: true, format: "json" })), (e: ServiceError) => e.param === "format");
    assert.throws(() => toGeneratePlan(generateRequest({ prompt: "x", raw: true, system: "s" })), (e: ServiceError) => e.param === "system");
  });

  it("refuses a template override and a conversation context by name", () => {
    assert.throws(() => toGeneratePlan(generateRequest({ prompt: "x", template: "{{ .Prompt }}" })), (e: ServiceError) => e.param === "template");
    assert.throws(() => toGeneratePlan(generateRequest({ prompt: "x", context: [1, 2, 3] })), (e: ServiceError) => e.param === "context");
    assert.doesNotThrow(() => toGeneratePlan(generateRequest({ prompt: "x", template: "", context: [] })));
  });
});

describe("Ollama responses", () => {
  const end = (over: Partial<Extract<ChatEvent, { type: "end" }>> = {}): ChatEvent => ({ type: "end", finishReason: "stop", toolCalls: [], completionTokens: 3, cachedTokens: 0, ...over });

  it("streams a line per delta and a final line with the timings in nanoseconds", async () => {
    const chunks = await all(ollamaChatChunks("chat:latest", events([{ type: "text", text: "Hel" }, { type: "text", text: "" }, { type: "text", text: "lo" }, end({ finishReason: "length" })]), { startedAt: 0, admittedAt: 50 }, 9, ticking(100)));
    assert.deepEqual(
      chunks.map((c) => [c.message.content, c.done]),
      [
        ["Hel", false],
        ["lo", false],
        ["", true],
      ],
    );
    const last = chunks.at(-1)!;
    assert.equal(last.model, "chat:latest");
    assert.equal(last.done_reason, "length");
    assert.match(last.created_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    // The first event read at 110 ms, the end at 120 ms (the clock ticks per reading).
    assert.deepEqual(
      { total: last.total_duration, load: last.load_duration, prompt: last.prompt_eval_duration, evalDuration: last.eval_duration, promptCount: last.prompt_eval_count, evalCount: last.eval_count },
      { total: 120e6, load: 50e6, prompt: 60e6, evalDuration: 10e6, promptCount: 9, evalCount: 3 },
    );
    for (const c of chunks.slice(0, -1)) assert.equal(c.total_duration, undefined, "timings only on the final line");
  });

  it("joins the stream into one answer, tool calls in Ollama's shape (arguments an object)", async () => {
    const call = { id: "call_1", name: "get_weather", arguments: '{"city":"Ipoh"}' };
    const answer = await collectChat(ollamaChatChunks("m", events([{ type: "text", text: "ok" }, end({ finishReason: "tool_calls", toolCalls: [call], promptTokens: 20 })]), { startedAt: 0, admittedAt: 0 }, 9, ticking()));
    assert.deepEqual(answer.message, { role: "assistant", content: "ok", tool_calls: [{ id: "call_1", function: { index: 0, name: "get_weather", arguments: { city: "Ipoh" } } }] });
    assert.equal(answer.done_reason, "stop", "Ollama ends a tool call with stop");
    assert.equal(answer.prompt_eval_count, 20, "the count the run reported at its end wins");
    assert.deepEqual(ollamaToolCall({ id: "x", name: "f", arguments: "[1]" }, 2).function, { index: 2, name: "f", arguments: { value: [1] } });
    assert.deepEqual(ollamaToolCall({ id: "x", name: "f", arguments: '{"cut' }, 0).function.arguments, { _raw: '{"cut' });
    const generated = await collectGenerate(ollamaGenerateChunks("m", events([{ type: "text", text: "a" }, { type: "text", text: "b" }, end()]), { startedAt: 0, admittedAt: 0 }, 1, ticking()));
    assert.equal(generated.response, "ab");
    assert.equal(generated.done, true);
  });

  it("refuses to pretend a cut-off run finished", async () => {
    await assert.rejects(collectChat(ollamaChatChunks("m", events([{ type: "text", text: "a" }]), { startedAt: 0, admittedAt: 0 }, 1)), (e: ServiceError) => e.code === "request_aborted");
  });

  it("counts a run without a first token as all prompt evaluation", () => {
    const m = ollamaMetrics({ startedAt: 0, admittedAt: 1, firstAt: undefined, endedAt: 3 }, 4, 0);
    assert.deepEqual([m.prompt_eval_duration, m.eval_duration], [2e6, 0]);
  });
});

describe("Ollama's error shape", () => {
  const wireBody = (error: unknown) => toWireError(error).body;
  it("is one message, naming the field at fault in Ollama's terms", () => {
    assert.deepEqual(ollamaError(wireBody(notFound("model 'x' not found", "model_not_found", "model"))), { error: "model 'x' not found" });
    assert.deepEqual(ollamaError(wireBody(new ServiceError("invalid_request", "the schema is bad", { code: "c", param: "response_format.json_schema.schema" }))), { error: "format: the schema is bad" });
    assert.deepEqual(ollamaError(wireBody(new ServiceError("invalid_request", "too long", { code: "context_length_exceeded", location: { in: "messages" } }))), { error: "messages: too long" });
    assert.deepEqual(ollamaError(wireBody(new ServiceError("permission", "this API key lacks the 'inference' scope", { code: "insufficient_scope" }))), { error: "this API key lacks the 'inference' scope" });
    assert.deepEqual(ollamaError(wireBody(new TypeError("internal /home/x"))), { error: "The server had an error while processing your request." });
  });
});

describe("Ollama model objects", () => {
  const gguf: GgufSummary = { path: "/models/Qwen2.5-Coder.gguf", bytes: 1234, name: "Qwen Coder", architecture: "qwen2", type: "chat", contextLength: 32768, embeddingLength: 1536, parameters: 1_777_088_000, quantization: "Q4_K_M", supportsRanking: false, chatTemplate: "{%- if tools %}…{%- endif %}" };
  const chat: ModelEntry = { id: "coder", type: "chat", aliases: ["svc-merlion-13b"], gguf, remote: null, catalog: null, origin: "binding" };
  const embed: ModelEntry = { ...chat, id: "minilm", type: "embedding", aliases: [], gguf: { ...gguf, architecture: "bert", type: "embedding", chatTemplate: null, quantization: "F16", parameters: 22_000_000 } };
  const file = { modifiedAt: new Date("2026-01-02T03:04:05Z") };

  it("resolves registry names with or without Ollama's tag, and says 'not found' as Ollama does", () => {
    const find = (name: string) => ({ coder: chat, "svc-merlion-13b": chat, "qwen:7b": chat })[name];
    assert.equal(resolveOllamaModel(find, "coder").name, "coder");
    assert.equal(resolveOllamaModel(find, "coder:latest").name, "coder");
    assert.equal(resolveOllamaModel(find, "SVC-Merlion-13B:latest").name, "svc-merlion-13b");
    assert.equal(resolveOllamaModel(find, "qwen:7b").name, "qwen:7b");
    assert.throws(() => resolveOllamaModel(find, "coder:7b"), (e: ServiceError) => e.kind === "not_found" && e.message === "model 'coder:7b' not found");
    assert.equal(ollamaName("coder"), "coder:latest");
    assert.equal(ollamaName("qwen:7b"), "qwen:7b");
  });

  it("lists a model with its details and a digest that follows the file", () => {
    const tag = tagObject("coder", chat, file);
    assert.deepEqual(tag, {
      name: "coder:latest",
      model: "coder:latest",
      modified_at: "2026-01-02T03:04:05.000Z",
      size: 1234,
      digest: tag.digest,
      details: { parent_model: "", format: "gguf", family: "qwen2", families: ["qwen2"], parameter_size: "1.8B", quantization_level: "Q4_K_M" },
    });
    assert.match(tag.digest, /^[0-9a-f]{64}$/);
    assert.notEqual(ollamaDigest(chat, { modifiedAt: new Date(0) }), tag.digest, "a changed file gets another digest");
    const catalogued = { ...chat, catalog: { source: { sha256: "ab".repeat(32) } } } as unknown as ModelEntry;
    assert.equal(ollamaDigest(catalogued, file), "ab".repeat(32), "a catalog model's digest is its file's SHA-256");
  });

  it("shows the template, the served context and the capabilities", () => {
    const shown = showObject(chat, file, 2048, false);
    assert.deepEqual(shown.capabilities, ["completion", "tools"]);
    assert.equal(shown.template, gguf.chatTemplate);
    assert.match(shown.parameters, /^num_ctx\s+2048$/);
    assert.deepEqual(shown.model_info, { "general.architecture": "qwen2", "general.name": "Qwen Coder", "general.parameter_count": 1_777_088_000, "qwen2.context_length": 32768, "qwen2.embedding_length": 1536 });
    assert.match(shown.modelfile, /^FROM Qwen2\.5-Coder\.gguf$/m, "only the file's name for a key that does not administer the machine");
    assert.match(showObject(chat, file, 2048, true).modelfile, /^FROM \/models\/Qwen2\.5-Coder\.gguf$/m);
    assert.deepEqual(ollamaCapabilities(embed), ["embedding"]);
    assert.deepEqual(ollamaCapabilities({ ...chat, gguf: { ...gguf, chatTemplate: null } }), ["completion"], "no template that takes tools");
  });

  it("reads show requests with the older 'name' too", () => {
    assert.equal((parse(OllamaShowRequestSchema, { name: "coder" }) as { name: string }).name, "coder");
    assert.throws(() => parse(OllamaShowRequestSchema, {}), (e: ServiceError) => e.param === "model");
    assert.throws(() => parse(OllamaEmbedRequestSchema, { model: "m", input: [1, 2] }), (e: ServiceError) => e.param === "input");
  });
});
