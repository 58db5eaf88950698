/**
 * Batched embeddings with real models: many inputs share one llama.cpp evaluation (one
 * sequence each, read back through the patched addon built at install), and each vector is
 * the one the input gets alone (cosine ≥ 0.9999 on F16 weights, see `floors` for Q4_0), for
 * every test embedding model, in English and Malay, short and long, and through the HTTP API
 * under concurrent requests.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { getLlama, type Llama } from "node-llama-cpp";
import { EmbedBatcher } from "../../src-server/engine/embed-batcher.js";
import { normalize } from "../../src-server/engine/embed-inputs.js";
import { LlamaEmbedWorker } from "../../src-server/engine/llama-embed-worker.js";
import path from "node:path";
import { REPO_ROOT, testModel } from "../helpers/models.js";
import { startTestServer, type TestServer } from "../helpers/test-server.js";
import { installedLlamaOptions } from "../../src-server/engine/llama-binary.js";

const SENTENCES = [
  "Heavy rain caused floods in Kelantan.",
  "Banjir besar melanda Kota Bharu selepas hujan lebat selama tiga hari.",
  "Quarterly revenue rose four percent on stronger exports of palm oil.",
  "Mangsa banjir dipindahkan ke pusat pemindahan sementara di sekolah.",
  "The train to Penang leaves at nine.",
  "Apa?",
  "OK",
  "Kerajaan negeri mengumumkan bantuan segera RM500 kepada setiap keluarga yang terjejas.",
];

/** Inputs of many lengths: single words, sentences, and paragraphs of a few hundred tokens. */
function inputs(): string[] {
  const out: string[] = [];
  for (let i = 0; i < 40; i++) {
    const base = SENTENCES[i % SENTENCES.length]!;
    out.push(i % 10 === 9 ? Array.from({ length: 12 }, (_, k) => `${SENTENCES[(i + k) % SENTENCES.length]}`).join(" ") : `${base} (${i})`);
  }
  return out;
}

const cosine = (a: ArrayLike<number>, b: ArrayLike<number>) => {
  let dot = 0;
  for (let i = 0; i < a.length; i++) dot += a[i]! * b[i]!;
  return dot;
};

describe("batched embeddings", () => {
  let llama: Llama;
  before(async () => {
    // As the engine asks for it: never build at run time, take the local build if there is one.
    llama = await getLlama({ ...installedLlamaOptions(), logLevel: "error" as never });
  });
  after(() => llama.dispose());

  it("runs on the llama.cpp built at install, whose addon reads every sequence's embedding", async () => {
    const model = await llama.loadModel({ modelPath: testModel("all-minilm-l6-v2") });
    try {
      const worker = await LlamaEmbedWorker.create(model, { maxInputTokens: 512, sequences: 8, batchTokens: 512, threads: 1 });
      try {
        // llama.cpp gets 512 cells per sequence, not 512 × 8 per sequence (node-llama-cpp multiplies by the sequences).
        const llamaContext = (worker as unknown as { context: { _llamaContext: { contextSize: number; totalSequences: number } } }).context._llamaContext;
        assert.equal(llamaContext.contextSize, 512);
        if (process.env.PUSTAKA_LLAMA_BUILD === "prebuilt") {
          // The install skipped the build on purpose: one input per evaluation, still correct.
          assert.equal(llama.buildType, "prebuilt");
          assert.equal(worker.sequences, 1);
        } else {
          assert.equal(llama.buildType, "localBuild", "scripts/build-llama.mjs did not build llama.cpp at install; see its output");
          assert.equal(worker.sequences, 8);
        }
      } finally {
        await worker.dispose();
      }
    } finally {
      await model.dispose();
    }
  });

  // F16 weights: batched vectors equal the lone ones to ≥ 0.9999. Q4_0 weights (the e5 test
  // model): llama.cpp's CPU matmul takes a different kernel path by the number of tokens in
  // the batch, and a short input in a batch of 64 tokens moves by up to ~1e-4 (measured
  // 0.99989; the same input repeated 16 times in one batch does the same), as it does in
  // llama-server.
  // A decoder embedder (causal attention, a KV cache; mean pooling): inputs of different
  // lengths in one batch pooled over part of their tokens (cosine 0.67) until the addon gave
  // embedding contexts one KV cache stream (llama.cpp then keeps each sequence whole).
  const decoderEmbedder = path.join(REPO_ROOT, "resources", "self-test", "stories260K-mean.gguf");
  const floors: [string, () => string, number][] = [
    ["all-minilm-l6-v2", () => testModel("all-minilm-l6-v2"), 0.9999],
    ["multilingual-e5-small", () => testModel("multilingual-e5-small"), 0.9998],
    ["embed-1024", () => testModel("embed-1024"), 0.9999],
    ["decoder embedder, stories260K with mean pooling", () => decoderEmbedder, 0.9999],
  ];
  for (const [id, modelPath, floor] of floors) {
    it(`gives each input the vector it gets alone, many inputs per evaluation (${id})`, async () => {
      const model = await llama.loadModel({ modelPath: modelPath() });
      try {
        const texts = inputs();
        const single = await model.createEmbeddingContext({ contextSize: Math.min(512, model.trainContextSize), threads: 1 });
        const reference: Float32Array[] = [];
        for (const text of texts) reference.push(normalize((await single.getEmbeddingFor(text)).vector));
        await single.dispose();

        const maxInputTokens = Math.min(512, model.trainContextSize);
        const worker = await LlamaEmbedWorker.create(model, { maxInputTokens, sequences: 16, batchTokens: 512, threads: 1 });
        const batcher = new EmbedBatcher([worker], 8);
        try {
          const tokens = texts.map((text) => worker.tokenize(text));
          // Two requests at once, as two clients would send them.
          const [a, b] = await Promise.all([batcher.embed(tokens.slice(0, 25), new AbortController().signal), batcher.embed(tokens.slice(25), new AbortController().signal)]);
          const vectors = [...a, ...b];
          vectors.forEach((vector, i) => {
            assert.equal(vector.length, reference[i]!.length);
            const c = cosine(vector, reference[i]!);
            assert.ok(c >= floor, `input ${i} (${tokens[i]!.length} tokens): cosine ${c.toFixed(6)} against the input alone`);
          });
          assert.ok(batcher.stats.evaluations <= texts.length / 3, `${texts.length} inputs took ${batcher.stats.evaluations} evaluations`);
        } finally {
          batcher.close();
          await worker.dispose();
        }
      } finally {
        await model.dispose();
      }
    });
  }

  it("takes a number of sequences that does not divide its batch (12 of 512 aborted the process in llama.cpp)", async () => {
    const model = await llama.loadModel({ modelPath: testModel("all-minilm-l6-v2") });
    try {
      const texts = SENTENCES.concat(SENTENCES).slice(0, 12).map((text, i) => `${text} [${i}]`);
      const single = await model.createEmbeddingContext({ contextSize: 512, threads: 1 });
      const reference: Float32Array[] = [];
      for (const text of texts) reference.push(normalize((await single.getEmbeddingFor(text)).vector));
      await single.dispose();
      const worker = await LlamaEmbedWorker.create(model, { maxInputTokens: 512, sequences: 12, batchTokens: 256, threads: 1 });
      try {
        if (process.env.PUSTAKA_LLAMA_BUILD !== "prebuilt") assert.equal(worker.sequences, 12);
        const vectors = await worker.evaluate(texts.slice(0, worker.sequences).map((text) => worker.tokenize(text)));
        vectors.forEach((vector, i) => assert.ok(cosine(vector, reference[i]!) >= 0.9999, `input ${i}: cosine ${cosine(vector, reference[i]!).toFixed(6)}`));
      } finally {
        await worker.dispose();
      }
    } finally {
      await model.dispose();
    }
  });
});

describe("batched embeddings over HTTP", () => {
  let t: TestServer;
  before(async () => {
    t = await startTestServer({ bindings: { minilm: testModel("all-minilm-l6-v2") } });
  });
  after(() => t.close());

  it("answers concurrent requests with the vectors each input gets alone", async () => {
    const texts = inputs();
    const alone: number[][] = [];
    for (const text of texts.slice(0, 12)) {
      const res = await t.call("POST", "/v1/embeddings", { model: "minilm", input: text });
      assert.equal(res.status, 200, JSON.stringify(res.json));
      alone.push(res.json.data[0].embedding);
    }
    // Six clients at once, two inputs each, overlapping the ones embedded alone.
    const responses = await Promise.all(Array.from({ length: 6 }, (_, c) => t.call("POST", "/v1/embeddings", { model: "minilm", input: texts.slice(c * 2, c * 2 + 2) })));
    responses.forEach((res, c) => {
      assert.equal(res.status, 200, JSON.stringify(res.json));
      assert.deepEqual(
        res.json.data.map((d: { index: number }) => d.index),
        [0, 1],
      );
      res.json.data.forEach((d: { embedding: number[] }, k: number) => {
        const c2 = cosine(d.embedding, alone[c * 2 + k]!);
        assert.ok(c2 >= 0.9999, `client ${c} input ${k}: cosine ${c2.toFixed(6)}`);
      });
    });
  });
});
