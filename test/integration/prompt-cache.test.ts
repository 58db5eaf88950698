/**
 * Prompt caching: two conversations taking turns on a server with two sequences each keep
 * their own sequence, so every later turn reuses the earlier turns instead of evaluating
 * them again (`usage.prompt_tokens_details.cached_tokens`, as OpenAI reports it), and the
 * replies are the same tokens as on a server with the cache off (all six, or five and one
 * that parts at a near-tie).
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { testModel } from "../helpers/models.js";
import { readSse, startTestServer, type TestServer } from "../helpers/test-server.js";

type Message = { role: string; content: string };
interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  prompt_tokens_details?: { cached_tokens: number };
}

const SYSTEM = {
  A: "You are a careful analyst of Malaysian flood reports. Answer in one short sentence, citing the state you mean.",
  B: "Anda pembantu yang ringkas. Jawab dalam satu ayat pendek dalam Bahasa Melayu, dan sebut negeri yang dimaksudkan.",
};
const QUESTIONS = ["What happened in Kelantan in December?", "Which rivers rose the most?", "How many families moved to relief centres?"];

describe("prompt caching", () => {
  let cached: TestServer;
  let uncached: TestServer;
  before(async () => {
    const bindings = { chat: testModel("smollm2-135m-instruct") };
    cached = await startTestServer({ bindings, config: { chat: { contextSize: 2048, sequences: 2 } } });
    uncached = await startTestServer({ bindings, config: { chat: { contextSize: 2048, sequences: 2, promptCache: false } } });
  });
  after(async () => {
    await cached?.close();
    await uncached?.close();
  });

  async function turn(t: TestServer, messages: Message[]): Promise<{ text: string; usage: Usage }> {
    const { status, json } = await t.call("POST", "/v1/chat/completions", { model: "chat", messages, max_tokens: 24, temperature: 0 });
    assert.equal(status, 200, JSON.stringify(json));
    return { text: json.choices[0].message.content, usage: json.usage };
  }

  it("keeps each conversation on its own sequence and reuses its earlier turns, with the same replies as without the cache", { timeout: 300_000 }, async () => {
    const conversations: Record<"A" | "B", Message[]> = { A: [{ role: "system", content: SYSTEM.A }], B: [{ role: "system", content: SYSTEM.B }] };
    const previous: Record<"A" | "B", number> = { A: 0, B: 0 };
    const parted: string[] = [];
    for (const [i, question] of QUESTIONS.entries()) {
      for (const name of ["A", "B"] as const) {
        const messages = [...conversations[name], { role: "user", content: question }];
        const withCache = await turn(cached, messages);
        const without = await turn(uncached, messages);
        // llama.cpp's logits differ in their last bits with how a prompt was split into batches;
        // with AVX-512 kernels enough for a near-tie to go the other way (A's third turn here:
        // "cyclone" for "typhoon"). A cache that reused the wrong state would change most replies
        // and from their start.
        if (withCache.text !== without.text) {
          parted.push(`${name}, turn ${i}: ${JSON.stringify(withCache.text)} cached, ${JSON.stringify(without.text)} not`);
          const start = (text: string) => text.split(/\s+/).slice(0, 2).join(" ");
          assert.equal(start(withCache.text), start(without.text), `${name}, turn ${i}: replies that part from their start`);
        }
        assert.equal(without.usage.prompt_tokens_details?.cached_tokens, 0, "nothing is reused with the cache off");
        const reused = withCache.usage.prompt_tokens_details?.cached_tokens;
        assert.equal(typeof reused, "number");
        if (i === 0) {
          assert.equal(reused, 0, `${name}: a conversation's first turn has nothing to reuse`);
        } else {
          // Everything evaluated last turn, but the end of the reply (re-rendered with its end-of-turn token).
          assert.ok(reused! >= previous[name] - 3 && reused! < withCache.usage.prompt_tokens, `${name}, turn ${i}: ${reused} of ${withCache.usage.prompt_tokens} reused; last turn held ${previous[name]}`);
        }
        previous[name] = withCache.usage.prompt_tokens + withCache.usage.completion_tokens;
        conversations[name] = [...messages, { role: "assistant", content: withCache.text }];
      }
    }
    assert.ok(parted.length <= 1, `more than one reply changed with the cache:\n${parted.join("\n")}`);
  });

  it("reports cached tokens in the stream's usage chunk too", async () => {
    const messages = [{ role: "system", content: SYSTEM.A }, { role: "user", content: QUESTIONS[0]! }];
    await turn(cached, messages);
    const response = await fetch(`${cached.url}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${cached.key}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "chat", messages, max_tokens: 8, temperature: 0, stream: true, stream_options: { include_usage: true } }),
    });
    const chunks = (await readSse(response)) as { usage?: Usage | null }[];
    const usage = chunks.find((c) => c.usage)?.usage;
    assert.ok(usage, "a usage chunk");
    // The same prompt again: all of it but the last token comes from the cache.
    assert.ok(usage.prompt_tokens_details!.cached_tokens >= usage.prompt_tokens - 2, JSON.stringify(usage));
    // A request can opt out, as llama.cpp's server allows: the whole prompt evaluated afresh.
    const fresh = await cached.call("POST", "/v1/chat/completions", { model: "chat", messages, max_tokens: 8, temperature: 0, cache_prompt: false });
    assert.equal(fresh.json.usage.prompt_tokens_details.cached_tokens, 0);
  });

  it("reports them in the Responses API's usage (input_tokens_details.cached_tokens)", async () => {
    const request = { model: "chat", instructions: SYSTEM.B, input: QUESTIONS[1], max_output_tokens: 8, temperature: 0, store: false };
    const first = await cached.call("POST", "/v1/responses", request);
    const again = await cached.call("POST", "/v1/responses", request);
    assert.equal(first.status, 200);
    const usage = again.json.usage as { input_tokens: number; input_tokens_details: { cached_tokens: number } };
    assert.ok(usage.input_tokens_details.cached_tokens >= usage.input_tokens - 2, JSON.stringify(usage));
    const off = await uncached.call("POST", "/v1/responses", request);
    assert.equal(off.json.usage.input_tokens_details.cached_tokens, 0);
  });
});
