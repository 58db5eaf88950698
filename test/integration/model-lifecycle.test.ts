/** Models load on first use, unload after the idle time, and load again when needed. */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { tinyModel } from "../helpers/models.js";
import { startTestServer, type TestServer } from "../helpers/test-server.js";

describe("model lifecycle", () => {
  let t: TestServer;
  before(async () => {
    t = await startTestServer({ bindings: { "svc-merlion-13b": tinyModel("stories260K") }, config: { engine: { idleUnloadSeconds: 1 }, chat: { contextSize: 256 } } });
  });
  after(() => t.close());

  const loaded = async () => (await t.call("GET", "/healthz", undefined, null)).json.engine.loadedModels as { id: string; kinds: string[]; activeLeases: number }[];
  const waitFor = async (predicate: () => Promise<boolean>, ms: number) => {
    const deadline = Date.now() + ms;
    while (Date.now() < deadline) {
      if (await predicate()) return true;
      await new Promise((r) => setTimeout(r, 100));
    }
    return false;
  };

  it("loads lazily, reports what is loaded, unloads when idle and reloads on demand", async () => {
    assert.deepEqual(await loaded(), [], "nothing is loaded before the first request");
    const body = { messages: [{ role: "user", content: "Once upon a time" }], max_tokens: 5, temperature: 0 };
    const first = await t.call("POST", "/v1/chat/completions", body);
    assert.equal(first.status, 200);
    const now = await loaded();
    assert.equal(now.length, 1);
    assert.deepEqual(now[0]!.kinds, ["chat"]);
    assert.equal(now[0]!.activeLeases, 0);
    assert.ok(await waitFor(async () => (await loaded()).length === 0, 5000), "the idle model was not unloaded");
    const again = await t.call("POST", "/v1/chat/completions", body);
    assert.equal(again.status, 200);
    assert.equal(again.json.choices[0].message.content, first.json.choices[0].message.content, "the reloaded model answers the same");
  });
});
