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

/** Streams one greedy reply from a server with `decodeChain`, and counts the decodes it chained. */
async function streamedReply(decodeChain: "on" | "off"): Promise<{ text: string; completionTokens: number; chained: number }> {
  const contexts = new Set<ContextInternals>();
  const original = proto._applyDecodeChainArm;
  proto._applyDecodeChainArm = function (this: ContextInternals) {
    contexts.add(this);
    return original.call(this);
  };
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
    let chained = 0;
    for (const context of contexts) chained += context._decodeChainStats.chained;
    return { text, completionTokens, chained };
  } finally {
    proto._applyDecodeChainArm = original;
    await t.close();
  }
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
});
