import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ServiceError } from "../../errors.js";
import type { ChatGenerationInput, ChatMessage, ToolDefinition } from "../types.js";
import { primed } from "./primed.js";
import { chatAffinity, textAffinity, toServiceError } from "./remote-engine.js";
import { estimateChatTokens, estimateTextTokens } from "./token-estimate.js";
import { UpstreamFailure } from "./upstream-client.js";

const SYSTEM: ChatMessage = { role: "system", content: "Anda pembantu perpustakaan yang ringkas." };
const ASK: ChatMessage = { role: "user", content: "Bilakah perpustakaan dibuka pada hari Sabtu?" };
const REPLY: ChatMessage = { role: "assistant", content: "Jam 9 pagi hingga 5 petang.", toolCalls: [] };
const FOLLOW_UP: ChatMessage = { role: "user", content: "Dan pada hari Ahad?" };
const SEARCH_TOOL: ToolDefinition = { name: "search_catalogue", description: "Search the catalogue", parameters: { type: "object", properties: { q: { type: "string" } } } };

function chat(messages: ChatMessage[], tools: ToolDefinition[] = []): Pick<ChatGenerationInput, "messages" | "tools"> {
  return { messages, tools };
}

/** What `toServiceError` gives for a failure described by the client as `upstream r1 (url) …`. */
function serviceError(message: string, kind: ConstructorParameters<typeof UpstreamFailure>[1], options: ConstructorParameters<typeof UpstreamFailure>[2] = {}): ServiceError {
  const error = toServiceError(new UpstreamFailure(message, kind, options), "svc-chat");
  assert.ok(error instanceof ServiceError);
  return error;
}

const URL_PART = "upstream r1 (http://gpu1.internal:8080/v1/chat/completions)";

describe("chatAffinity", () => {
  it("starts keys at the first user message, one per message from there, most specific first", () => {
    assert.deepEqual(chatAffinity(chat([SYSTEM])), [], "no user turn, no key");
    const one = chatAffinity(chat([SYSTEM, ASK]));
    assert.equal(one.length, 1);
    const three = chatAffinity(chat([SYSTEM, ASK, REPLY, FOLLOW_UP]));
    assert.equal(three.length, 3);
    assert.equal(new Set(three).size, 3);
    assert.ok(three.every((key) => /^[A-Za-z0-9_-]{22}$/.test(key)), three.join(","));
    assert.equal(three[2], one[0], "the least specific key is the first user turn's prefix");
  });

  it("gives a conversation's next turn the previous request's keys", () => {
    const first = chatAffinity(chat([SYSTEM, ASK]));
    const second = chatAffinity(chat([SYSTEM, ASK, REPLY, FOLLOW_UP]));
    assert.ok(second.includes(first[0]!), "the next turn finds the replica that served this one");
    assert.notEqual(second[0], first[0], "yet its own most specific key is new");
    const third = chatAffinity(chat([SYSTEM, ASK, REPLY, FOLLOW_UP, { role: "assistant", content: "Tutup.", toolCalls: [] }, { role: "user", content: "Terima kasih." }]));
    assert.deepEqual(third.slice(-second.length), second);
  });

  it("shares no key between different conversations", () => {
    const a = chatAffinity(chat([SYSTEM, ASK, REPLY, FOLLOW_UP]));
    const b = chatAffinity(chat([SYSTEM, { role: "user", content: "Berapa yuran keahlian?" }, REPLY, FOLLOW_UP]));
    assert.deepEqual(
      a.filter((key) => b.includes(key)),
      [],
    );
  });

  it("counts the tools as part of the conversation", () => {
    const plain = chatAffinity(chat([SYSTEM, ASK, REPLY, FOLLOW_UP]));
    const withTools = chatAffinity(chat([SYSTEM, ASK, REPLY, FOLLOW_UP], [SEARCH_TOOL]));
    assert.equal(withTools.length, plain.length);
    assert.deepEqual(
      plain.filter((key) => withTools.includes(key)),
      [],
    );
    assert.deepEqual(chatAffinity(chat([SYSTEM, ASK], [SEARCH_TOOL])), withTools.slice(-1), "the same tools: the same keys");
  });
});

describe("textAffinity", () => {
  const kib = (seed: string) => seed.repeat(Math.ceil(1024 / seed.length)).slice(0, 1024);

  it("keys each 1 KiB prefix, most specific first, for the first 64 KiB", () => {
    assert.deepEqual(textAffinity(""), []);
    assert.equal(textAffinity("short prompt").length, 1);
    assert.equal(textAffinity(kib("a")).length, 1);
    assert.equal(textAffinity(kib("a") + "b").length, 2);
    assert.equal(textAffinity("x".repeat(100 * 1024)).length, 64);
  });

  it("gives prompts that share their first KiB the same last key", () => {
    const shared = kib("Dahulu kala, di sebuah kampung di tepi sungai, ");
    const a = textAffinity(`${shared}tinggal seorang nelayan tua.`);
    const b = textAffinity(`${shared}hiduplah seekor sang kancil yang cerdik.`);
    assert.equal(a.at(-1), b.at(-1));
    assert.notEqual(a[0], b[0]);
    const longer = textAffinity(`${shared}${kib("lagi ")}and more`);
    assert.deepEqual(longer.slice(-1), a.slice(-1));
    assert.equal(longer.length, 3);
  });

  it("shares nothing when the first KiB differs", () => {
    const a = textAffinity(`${kib("Once upon a time ")}${kib("the end ")}`);
    const b = textAffinity(`${kib("Once upon a tim3 ")}${kib("the end ")}`);
    assert.deepEqual(
      a.filter((key) => b.includes(key)),
      [],
    );
  });
});

describe("toServiceError", () => {
  it("maps a request the upstream refused for its length to 400 context_length_exceeded", () => {
    const error = serviceError(`${URL_PART} answered HTTP 400: This model's maximum context length is 4096 tokens. However, you requested 5000 tokens.`, "status", { status: 400, clientFault: true, upstreamCode: "bad_request" });
    assert.equal(error.kind, "invalid_request");
    assert.equal(error.code, "context_length_exceeded");
    assert.match(error.message, /'svc-chat' refused the request/);
    assert.equal(serviceError(`${URL_PART} answered HTTP 400: the request exceeds the available context size`, "status", { status: 400, clientFault: true }).code, "context_length_exceeded");
  });

  it("keeps the upstream's own code for other refusals", () => {
    assert.equal(serviceError(`${URL_PART} answered HTTP 422: temperature must be at most 2`, "status", { status: 422, clientFault: true, upstreamCode: "invalid_value" }).code, "invalid_value");
    assert.equal(serviceError(`${URL_PART} answered HTTP 400: unknown field`, "status", { status: 400, clientFault: true }).code, "invalid_request");
    const openAiType = serviceError(`${URL_PART} answered HTTP 400: unknown field`, "status", { status: 400, clientFault: true, upstreamCode: "invalid_request_error" });
    assert.equal(openAiType.kind, "invalid_request");
    assert.equal(openAiType.code, "invalid_request");
  });

  it("maps a timeout to 504 upstream_timeout", () => {
    const failure = new UpstreamFailure(`${URL_PART} sent no answer within 30 s`, "timeout");
    const error = toServiceError(failure, "svc-chat");
    assert.equal(error.kind, "gateway_timeout");
    assert.equal(error.code, "upstream_timeout");
    assert.equal(error.cause, failure);
  });

  it("maps unreachable and overloaded upstreams to 503 upstream_unavailable with a Retry-After", () => {
    const connect = serviceError(`${URL_PART} could not be reached: ECONNREFUSED`, "connect");
    assert.equal(connect.kind, "unavailable");
    assert.equal(connect.code, "upstream_unavailable");
    assert.equal(connect.retryAfterSeconds, 1);
    const busy = serviceError(`${URL_PART} answered HTTP 429: slow down`, "status", { status: 429, retryAfterSeconds: 7 });
    assert.equal(busy.kind, "unavailable");
    assert.equal(busy.code, "upstream_unavailable");
    assert.equal(busy.retryAfterSeconds, 7);
    const down = serviceError(`${URL_PART} answered HTTP 503: loading model`, "status", { status: 503 });
    assert.equal(down.kind, "unavailable");
    assert.equal(down.code, "upstream_unavailable");
    assert.equal(down.retryAfterSeconds, 1);
  });

  it("maps a refusal of Pustaka's credentials to 502, naming the credentials", () => {
    for (const status of [401, 403]) {
      const error = serviceError(`${URL_PART} answered HTTP ${status}: invalid api key`, "status", { status });
      assert.equal(error.kind, "bad_gateway");
      assert.equal(error.code, "upstream_error");
      assert.match(error.message, new RegExp(`refused Pustaka's credentials \\(HTTP ${status}\\)`));
    }
  });

  it("maps other failures to 502 upstream_error", () => {
    const server = serviceError(`${URL_PART} answered HTTP 500: CUDA out of memory`, "status", { status: 500 });
    assert.equal(server.kind, "bad_gateway");
    assert.equal(server.code, "upstream_error");
    assert.match(server.message, /CUDA out of memory/);
    const protocol = serviceError(`${URL_PART} answered something that is not JSON`, "protocol");
    assert.equal(protocol.kind, "bad_gateway");
    assert.equal(protocol.code, "upstream_error");
    assert.equal(serviceError(`${URL_PART} answered HTTP 404: no such model`, "status", { status: 404 }).kind, "bad_gateway");
  });

  it("never tells the client the upstream's URL", () => {
    for (const error of [
      serviceError(`${URL_PART} answered HTTP 500: boom`, "status", { status: 500 }),
      serviceError(`${URL_PART} sent no answer within 30 s`, "timeout"),
      serviceError(`${URL_PART} could not be reached: ECONNREFUSED`, "connect"),
      serviceError(`${URL_PART} answered HTTP 400: bad temperature`, "status", { status: 400, clientFault: true }),
    ]) {
      assert.doesNotMatch(error.message, /gpu1\.internal|http:\/\//, error.message);
      assert.match(error.message, /upstream r1 /, error.message);
    }
    assert.match(serviceError(`${URL_PART} answered HTTP 500: boom`, "status", { status: 500 }).message, /upstream r1 answered HTTP 500: boom$/);
  });

  it("decides context_length_exceeded from the upstream's message, not from its URL", () => {
    const error = serviceError("upstream r1 (http://context-cache.internal:8080/v1/chat/completions) answered HTTP 400: temperature must be at most 2", "status", { status: 400, clientFault: true, upstreamCode: "invalid_value" });
    assert.equal(error.code, "invalid_value");
  });
});

describe("primed", () => {
  /** A source that records how far it was pulled and whether it was closed. */
  function source(items: string[], failAt = -1): { generator: AsyncGenerator<string, void, undefined>; pulled: () => number; closed: () => boolean } {
    let pulled = 0;
    let closed = false;
    async function* generate(): AsyncGenerator<string, void, undefined> {
      try {
        for (const [i, item] of items.entries()) {
          pulled++;
          if (i === failAt) throw new Error(`upstream refused item ${i}`);
          yield item;
        }
      } finally {
        closed = true;
      }
    }
    return { generator: generate(), pulled: () => pulled, closed: () => closed };
  }

  async function collect(events: AsyncGenerator<string, void, undefined>): Promise<string[]> {
    const out: string[] = [];
    for await (const event of events) out.push(event);
    return out;
  }

  it("pulls the first item ahead once, then yields it first and the rest in order", async () => {
    const s = source(["a", "b", "c"]);
    const { events, prime } = primed(s.generator);
    assert.equal(s.pulled(), 0, "nothing happens before prime");
    await prime();
    await prime();
    assert.equal(s.pulled(), 1, "prime pulls the first item, once");
    assert.deepEqual(await collect(events), ["a", "b", "c"]);
    assert.equal(s.closed(), true);
  });

  it("yields everything without prime", async () => {
    const s = source(["a", "b"]);
    assert.deepEqual(await collect(primed(s.generator).events), ["a", "b"]);
  });

  it("ends at once when the source was empty", async () => {
    const s = source([]);
    const { events, prime } = primed(s.generator);
    await prime();
    assert.deepEqual(await collect(events), []);
  });

  it("rejects prime with the first item's failure, and the events with it too", async () => {
    const s = source(["a", "b"], 0);
    const { events, prime } = primed(s.generator);
    await assert.rejects(prime(), /upstream refused item 0/);
    await assert.rejects(collect(events), /upstream refused item 0/);
  });

  it("closes the source when the consumer stops early", async () => {
    const s = source(["a", "b", "c", "d"]);
    const { events, prime } = primed(s.generator);
    await prime();
    for await (const event of events) {
      assert.equal(event, "a");
      break;
    }
    assert.equal(s.closed(), true);
    assert.equal(s.pulled(), 1, "nothing more was pulled from the upstream");
  });
});

describe("token estimates", () => {
  const sentences = [
    "The library opens at nine in the morning and closes at five in the afternoon on Saturdays.",
    "Please return borrowed books within fourteen days, or a small fine will be charged per day.",
    "Perpustakaan dibuka pada pukul sembilan pagi dan ditutup pada pukul lima petang pada hari Sabtu.",
    "Sila pulangkan buku yang dipinjam dalam tempoh empat belas hari, atau denda kecil akan dikenakan.",
    "Kerajaan negeri telah meluluskan peruntukan tambahan untuk menaik taraf kemudahan awam di kawasan luar bandar.",
  ];

  it("is at least one token per word and at most one per byte for English and Malay prose", () => {
    for (const sentence of sentences) {
      const words = sentence.split(/\s+/).filter(Boolean).length;
      const bytes = Buffer.byteLength(sentence, "utf8");
      const estimate = estimateTextTokens(sentence);
      assert.ok(estimate >= words, `${estimate} < ${words} words: ${sentence}`);
      assert.ok(estimate <= bytes, `${estimate} > ${bytes} bytes: ${sentence}`);
    }
  });

  it("counts UTF-8 bytes, not characters", () => {
    assert.equal(estimateTextTokens(""), 0);
    assert.ok(estimateTextTokens("ééééééééé") > estimateTextTokens("eeeeeeeee"));
    assert.ok(estimateTextTokens("图书馆开放时间") > estimateTextTokens("abcdefg"));
  });

  it("adds the chat template's tokens to the messages' own", () => {
    const input = { messages: [SYSTEM, ASK, REPLY, FOLLOW_UP], tools: [], toolChoice: "auto" as const };
    const contents = [SYSTEM, ASK, REPLY, FOLLOW_UP].reduce((n, m) => n + estimateTextTokens(m.content ?? ""), 0);
    const estimate = estimateChatTokens(input);
    assert.ok(estimate > contents, `${estimate} <= ${contents}`);
    assert.ok(estimate > estimateChatTokens({ ...input, messages: [SYSTEM, ASK] }), "more messages, more tokens");
    assert.ok(estimateChatTokens({ messages: [], tools: [], toolChoice: "auto" }) > 0, "the template's start alone");
  });

  it("counts the tools unless toolChoice is none, and the assistant's tool calls", () => {
    const base = { messages: [SYSTEM, ASK], tools: [], toolChoice: "auto" as const };
    const withTools = estimateChatTokens({ ...base, tools: [SEARCH_TOOL] });
    assert.ok(withTools >= estimateChatTokens(base) + estimateTextTokens(JSON.stringify([SEARCH_TOOL])), `${withTools}`);
    assert.equal(estimateChatTokens({ ...base, tools: [SEARCH_TOOL], toolChoice: "none" }), estimateChatTokens(base));
    const call: ChatMessage = { role: "assistant", content: null, toolCalls: [{ id: "call_1", name: "search_catalogue", arguments: '{"q":"sejarah Melaka abad ke-15"}' }] };
    const noCall: ChatMessage = { role: "assistant", content: null, toolCalls: [] };
    assert.ok(estimateChatTokens({ ...base, messages: [SYSTEM, ASK, call] }) > estimateChatTokens({ ...base, messages: [SYSTEM, ASK, noCall] }));
  });
});
