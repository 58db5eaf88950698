/** Embeddings over HTTP with real embedding models (and a chat model, as Ollama allows). */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { testModel } from "../helpers/models.js";
import { startTestServer, type TestServer } from "../helpers/test-server.js";

const dot = (a: number[], b: number[]) => a.reduce((sum, v, i) => sum + v * b[i]!, 0);

describe("embeddings with real models", () => {
  let t: TestServer;
  before(async () => {
    t = await startTestServer({
      bindings: {
        minilm: testModel("all-minilm-l6-v2"),
        e5: testModel("multilingual-e5-small"),
        "svc-embed-1024": testModel("embed-1024"),
        gemma: testModel("gemma3-270m"),
      },
      config: { embeddings: { contexts: 2 } },
    });
  });
  after(() => t.close());

  async function embed(model: string, input: string[] | string, encoding_format?: string): Promise<any> {
    const res = await t.call("POST", "/v1/embeddings", { model, input, ...(encoding_format ? { encoding_format } : {}) });
    assert.equal(res.status, 200, JSON.stringify(res.json));
    return res.json;
  }

  it("scores similar sentences above unrelated ones (all-MiniLM-L6-v2)", async () => {
    const triples: [string, string, string][] = [
      ["The cat sits on the mat.", "A cat is sitting on a rug.", "Quarterly revenue rose four percent."],
      ["How do I reset my password?", "I forgot my password and need to change it.", "The train to Penang leaves at nine."],
      ["Heavy rain caused floods in Kelantan.", "Flooding hit Kelantan after storms.", "She plays the violin beautifully."],
    ];
    for (const [anchor, similar, unrelated] of triples) {
      const { data } = await embed("minilm", [anchor, similar, unrelated]);
      const [a, s, u] = data.map((d: { embedding: number[] }) => d.embedding);
      assert.ok(dot(a, s) > dot(a, u) + 0.2, `"${anchor}": similar ${dot(a, s).toFixed(3)} vs unrelated ${dot(a, u).toFixed(3)}`);
    }
  });

  it("does the same for Malay with the multilingual model", async () => {
    const { data } = await embed("e5", [
      "query: Kucing itu duduk di atas tikar.",
      "passage: Seekor kucing sedang duduk di atas permaidani.",
      "passage: Hasil syarikat meningkat empat peratus pada suku ini.",
    ]);
    const [a, s, u] = data.map((d: { embedding: number[] }) => d.embedding);
    assert.ok(dot(a, s) > dot(a, u), `similar ${dot(a, s).toFixed(3)} vs unrelated ${dot(a, u).toFixed(3)}`);
  });

  it("returns unit vectors in input order; batching gives the same vectors as one at a time", async () => {
    const inputs = Array.from({ length: 9 }, (_, i) => `Sentence number ${i} about topic ${["rice", "rain", "roads"][i % 3]}.`);
    const batch = (await embed("minilm", inputs)).data;
    assert.deepEqual(batch.map((d: { index: number }) => d.index), [...inputs.keys()]);
    for (const [i, text] of inputs.entries()) {
      const alone = (await embed("minilm", text)).data[0].embedding;
      assert.ok(Math.abs(dot(alone, alone) - 1) < 1e-4, "not unit length");
      assert.ok(dot(alone, batch[i].embedding) > 0.9999, `input ${i} differs between batch and single`);
    }
  });

  it("agrees between float and base64 encodings", async () => {
    const asFloat = (await embed("minilm", ["Selamat pagi"], "float")).data[0].embedding as number[];
    const asBase64 = (await embed("minilm", ["Selamat pagi"], "base64")).data[0].embedding as string;
    const bytes = Buffer.from(asBase64, "base64");
    const decoded = new Float32Array(bytes.buffer, bytes.byteOffset, bytes.length / 4);
    assert.equal(decoded.length, 384);
    decoded.forEach((v, i) => assert.equal(v, Math.fround(asFloat[i]!)));
  });

  it("gives svc-embed-1024 vectors of 1024 dimensions and counts tokens", async () => {
    const result = await embed("svc-embed-1024", ["one", "two words"]);
    assert.equal(result.model, "svc-embed-1024");
    assert.ok(result.data.every((d: { embedding: number[] }) => d.embedding.length === 1024));
    assert.ok(result.usage.prompt_tokens >= 4);
    assert.equal(result.usage.total_tokens, result.usage.prompt_tokens);
  });

  it("embeds with a chat model too, and the model list types each model from its GGUF", async () => {
    const result = await embed("gemma", "hello");
    assert.equal(result.data[0].embedding.length, 640);
    const models = (await t.call("GET", "/v1/models")).json.data as { id: string; type: string; dimensions?: number }[];
    const byId = Object.fromEntries(models.map((m) => [m.id, m]));
    assert.equal(byId.gemma?.type, "chat");
    assert.equal(byId.minilm?.type, "embedding");
    assert.equal(byId.minilm?.dimensions, 384);
    assert.equal(byId["svc-embed-1024"]?.dimensions, 1024);
  });

  it("refuses an input that tokenizes to nothing, naming it, instead of returning an empty vector", async () => {
    for (const model of ["minilm", "e5"]) {
      for (const blank of [" ", "\u200b"]) {
        const res = await t.call("POST", "/v1/embeddings", { model, input: ["banjir", blank] });
        if (res.status === 200) {
          // Some tokenizers keep a space as a token: then the vector must be a real one.
          assert.ok(res.json.data[1].embedding.length > 0, `${model} ${JSON.stringify(blank)}`);
          continue;
        }
        assert.equal(res.status, 400, JSON.stringify(res.json));
        assert.equal(res.json.error.code, "empty_input");
        assert.equal(res.json.error.param, "input.1");
      }
    }
    const res = await t.call("POST", "/v1/embeddings", { model: "minilm", input: " " });
    assert.equal(res.status, 400, "all-MiniLM-L6-v2's WordPiece drops white space entirely");
    assert.equal(res.json.error.param, "input");
  });
});
