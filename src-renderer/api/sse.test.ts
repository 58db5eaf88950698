import { describe, expect, it } from "vitest";
import { fakeFetch, sseResponse } from "../test-utils/render.js";
import { ApiError } from "./api-error.js";
import { streamChat, streamQuery } from "./chat-api.js";
import { ApiClient } from "./client.js";
import { readSse } from "./sse.js";

const bodyOf = (pieces: (string | Uint8Array)[]) =>
  new ReadableStream<Uint8Array>({
    start(c) {
      for (const p of pieces) c.enqueue(typeof p === "string" ? new TextEncoder().encode(p) : p);
      c.close();
    },
  });

describe("readSse", () => {
  it("reassembles events split at awkward places, CRLF and multi-line data", async () => {
    const events: string[] = [];
    await readSse(bodyOf(["da", "ta: {\"a\"", ":1}\r", "\n\r\n: keep-alive\n\ndata: line1\nda", "ta: line2\n", "\n"]), (d) => {
      events.push(d);
    });
    expect(events).toEqual(['{"a":1}', "line1\nline2"]);
  });

  it("decodes a multi-byte character split across reads", async () => {
    const bytes = new TextEncoder().encode("data: Selamat “datang” — 日本\n\n");
    const cut = bytes.indexOf(0xe2) + 1; // inside the first curly quote
    const events: string[] = [];
    await readSse(bodyOf([bytes.slice(0, cut), bytes.slice(cut)]), (d) => {
      events.push(d);
    });
    expect(events).toEqual(["Selamat “datang” — 日本"]);
  });

  it("stops reading when the handler says so", async () => {
    const events: string[] = [];
    await readSse(bodyOf(["data: 1\n\ndata: [DONE]\n\ndata: after\n\n"]), (d) => {
      events.push(d);
      return d === "[DONE]" ? "stop" : undefined;
    });
    expect(events).toEqual(["1", "[DONE]"]);
  });
});

const chunk = (content: string) => `data: ${JSON.stringify({ id: "chatcmpl-1", object: "chat.completion.chunk", created: 1, model: "chat", choices: [{ index: 0, delta: { content }, finish_reason: null }] })}\n\n`;

describe("streamed answers", () => {
  it("collects chat deltas until [DONE]", async () => {
    const text = chunk("Hel") + chunk("lo") + "data: [DONE]\n\n";
    const server = fakeFetch({ "POST /v1/chat/completions": () => sseResponse([text.slice(0, 50), text.slice(50, 51), text.slice(51)]) });
    const client = new ApiClient({ origin: "", credential: null, fetch: server.fetch });
    let out = "";
    const result = await streamChat(client, { messages: [{ role: "user", content: "hi" }] }, (d) => (out += d), new AbortController().signal);
    expect(out).toBe("Hello");
    expect(result.model).toBe("chat");
    expect(server.calls[0]!.body).toMatchObject({ stream: true });
  });

  it("returns the citations event that ends a grounded answer", async () => {
    const events = [
      { object: "rag.answer.delta", id: "ans_1", delta: "Banjir [1]" },
      { object: "rag.answer.citations", id: "ans_1", grounded: true, citations: [{ index: 1, chunk_id: "chk_1" }], usage: {}, finish_reason: "stop" },
    ];
    const server = fakeFetch({ "POST /v1/rag/corpora/corp_1/query": () => sseResponse(events.map((e) => `data: ${JSON.stringify(e)}\n\n`)) });
    const client = new ApiClient({ origin: "", credential: null, fetch: server.fetch });
    let out = "";
    const end = await streamQuery(client, "corp_1", { question: "q" }, (d) => (out += d), new AbortController().signal);
    expect(out).toBe("Banjir [1]");
    expect(end.grounded).toBe(true);
    expect(end.citations[0]!.chunk_id).toBe("chk_1");
  });

  it("throws an error sent inside the stream as an ApiError", async () => {
    const server = fakeFetch({
      "POST /v1/rag/corpora/corp_1/query": () => sseResponse([`data: ${JSON.stringify({ error: { message: "too long", type: "invalid_request_error", param: null, code: "context_length_exceeded" } })}\n\n`]),
    });
    const client = new ApiClient({ origin: "", credential: null, fetch: server.fetch });
    const e = await streamQuery(client, "corp_1", { question: "q" }, () => undefined, new AbortController().signal).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(ApiError);
    expect((e as ApiError).code).toBe("context_length_exceeded");
  });

  it("rejects with AbortError when stopped", async () => {
    const controller = new AbortController();
    const fetchImpl = ((_: unknown, init?: RequestInit) =>
      new Promise<Response>((_resolve, reject) => {
        init?.signal?.addEventListener("abort", () => reject(new DOMException("aborted", "AbortError")));
      })) as typeof fetch;
    const client = new ApiClient({ origin: "", credential: null, fetch: fetchImpl });
    const pending = streamChat(client, { messages: [] }, () => undefined, controller.signal);
    controller.abort();
    await expect(pending).rejects.toMatchObject({ name: "AbortError" });
  });
});
