/**
 * Decode chaining as the server ships it (`engine.decodeChain`, default `on`; see
 * test/integration/decode-ahead.test.ts for the mechanism itself): a greedy chat reply streamed
 * through the API is chained in llama.cpp's decode thread, and the same reply with `off` is
 * token for token the same. The contexts' counters are read through node-llama-cpp's internals
 * (the server runs in this process).
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { LlamaContext } from "node-llama-cpp";
import { testModel } from "../helpers/models.js";
import { readSse, startTestServer } from "../helpers/test-server.js";

interface ContextInternals {
  _decodeChainStats: { chained: number; drained: number };
  _applyDecodeChainArm: (this: ContextInternals) => void;
}
const proto = LlamaContext.prototype as unknown as ContextInternals;

/** Collects the contexts that consider chaining until `restore`, to read their counters. */
function watchContexts(): { chainStats: () => { chained: number; drained: number }; restore: () => void } {
  const contexts = new Set<ContextInternals>();
  const original = proto._applyDecodeChainArm;
  proto._applyDecodeChainArm = function (this: ContextInternals) {
    contexts.add(this);
    return original.call(this);
  };
  return {
    chainStats: () => {
      const total = { chained: 0, drained: 0 };
      for (const context of contexts) {
        total.chained += context._decodeChainStats.chained;
        total.drained += context._decodeChainStats.drained;
      }
      return total;
    },
    restore: () => {
      proto._applyDecodeChainArm = original;
    },
  };
}

/** Streams one greedy reply from a server with `decodeChain`, and counts the decodes it chained. */
async function streamedReply(decodeChain: "on" | "off"): Promise<{ text: string; completionTokens: number; chained: number }> {
  const watch = watchContexts();
  const t = await startTestServer({ bindings: { "svc-merlion-13b": testModel("smollm2-135m-instruct") }, config: { engine: { decodeChain: decodeChain }, chat: { contextSize: 1024, sequences: 2 } } });
  try {
    const response = await fetch(`${t.url}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${t.key}`, "content-type": "application/json" },
      body: JSON.stringify({ messages: [{ role: "user", content: "Tell me a long story about the Straits of Malacca." }], temperature: 0, max_tokens: 48, stream: true, stream_options: { include_usage: true } }),
    });
    assert.equal(response.status, 200);
    const events = (await readSse(response)) as { choices: { delta?: { content?: string } }[]; usage?: { completion_tokens: number } }[];
    const text = events.slice(0, -1).map((e) => e.choices[0]?.delta?.content ?? "").join("");
    const completionTokens = events.at(-2)!.usage!.completion_tokens;
    return { text, completionTokens, chained: watch.chainStats().chained };
  } finally {
    watch.restore();
    await t.close();
  }
}

/** A small deterministic generator (mulberry32): the storm is the same every run. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe("decode chaining in the server (engine.decodeChain)", () => {
  it("chains a lone greedy reply by default, and gives the same reply with it off", async () => {
    const on = await streamedReply("on");
    const off = await streamedReply("off");
    assert.equal(on.completionTokens, 48);
    assert.ok(on.chained >= 40, `most of the 48 tokens were decoded by a chained decode (${on.chained})`);
    assert.equal(off.chained, 0, "engine.decodeChain off chains nothing");
    assert.equal(on.text, off.text);
    assert.equal(on.completionTokens, off.completionTokens);
  });

  it("survives clients cutting chained and batched streams at random points: every finished reply is its reference, and the server answers the same after", async () => {
    const prompts = [
      "Tell me a long story about the Straits of Malacca.",
      "Terangkan sejarah Kesultanan Melayu Melaka dengan panjang.",
      "Describe a day at a night market in Penang.",
      "Write a poem about the monsoon in Kelantan.",
    ];
    const watch = watchContexts();
    const t = await startTestServer({ bindings: { "svc-merlion-13b": testModel("smollm2-135m-instruct") }, config: { chat: { contextSize: 1024, sequences: 2, maxQueued: 64 } } });
    const body = (content: string, stream: boolean) => JSON.stringify({ messages: [{ role: "user", content }], temperature: 0, max_tokens: 32, cache_prompt: false, stream });
    const post = (content: string, stream: boolean, signal?: AbortSignal) =>
      fetch(`${t.url}/v1/chat/completions`, { method: "POST", headers: { authorization: `Bearer ${t.key}`, "content-type": "application/json" }, body: body(content, stream), signal });
    const whole = async (content: string) => {
      const response = await post(content, false);
      assert.equal(response.status, 200);
      return ((await response.json()) as { choices: { message: { content: string } }[] }).choices[0]!.message.content;
    };
    try {
      const references: string[] = [];
      for (const prompt of prompts) references.push(await whole(prompt));
      const next = random(36);
      let cut = 0;
      const storm = Array.from({ length: 24 }, async (_, i) => {
        const which = Math.floor(next() * prompts.length);
        // the first half one after another (alone: chained), the rest at once (batched)
        const delay = i < 12 ? i * 450 + Math.floor(next() * 100) : 5400 + Math.floor(next() * 400);
        const cutAfter = next() < 0.4 ? 1 + Math.floor(next() * 20) : 0;
        await new Promise((resolve) => setTimeout(resolve, delay));
        if (cutAfter === 0 && i % 2 === 0) return { which, text: await whole(prompts[which]!) };
        const controller = new AbortController();
        const response = await post(prompts[which]!, true, controller.signal);
        assert.equal(response.status, 200);
        const reader = response.body!.getReader();
        const decoder = new TextDecoder();
        let raw = "";
        let chunks = 0;
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          raw += decoder.decode(value, { stream: true });
          chunks = raw.split("\n\n").length - 1;
          if (cutAfter > 0 && chunks >= cutAfter) {
            controller.abort();
            cut++;
            return { which, text: undefined };
          }
        }
        const events = raw.split("\n\n").filter((block) => block.startsWith("data: ") && block !== "data: [DONE]").map((block) => JSON.parse(block.slice(6)) as { choices: { delta?: { content?: string } }[] });
        return { which, text: events.map((e) => e.choices[0]?.delta?.content ?? "").join("") };
      });
      const before = watch.chainStats();
      const results = await Promise.all(storm);
      const during = watch.chainStats();
      assert.ok(cut >= 5, `clients cut ${cut} streams`);
      assert.ok(during.chained - before.chained >= 100, `replies running alone were chained (${during.chained - before.chained} decodes)`);
      for (const { which, text } of results) if (text !== undefined) assert.equal(text, references[which], `prompt ${which}`);
      // every sequence the cut streams held answers as before
      const after = await Promise.all(prompts.map((prompt) => whole(prompt)));
      assert.deepEqual(after, references);
    } finally {
      watch.restore();
      await t.close();
    }
  });
});
