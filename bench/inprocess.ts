/**
 * Reference: node-llama-cpp called directly (no HTTP), in its own long-lived process,
 * with the same GGUF and thread count as the server. It reads one JSON request per
 * line on stdin and answers one JSON line on stdout, so the benchmark can alternate
 * reference and API runs and the machine's drift hits both alike.
 *
 *   {"op":"chat","prompt":"...","maxTokens":128,"fresh":true} → {"ttftMs","decodeMs","tokens"}
 *   {"op":"embed","inputs":["..."]}               → {"count","ms"}
 */
import { createInterface } from "node:readline";
import { getLlama, LlamaChat, resolveChatWrapper, type LlamaEmbeddingContext } from "node-llama-cpp";
import { installedLlamaOptions } from "../src-server/engine/llama-binary.js";

const options = JSON.parse(process.argv[2] ?? "{}") as { model: string; threads: number; contextSize: number; embed?: boolean };
const llama = await getLlama(installedLlamaOptions());
const model = await llama.loadModel({ modelPath: options.model });
const context = options.embed ? null : await model.createContext({ contextSize: options.contextSize, sequences: 1, threads: options.threads });
const sequence = context?.getSequence();
const wrapper = resolveChatWrapper(model);
const embedders: LlamaEmbeddingContext[] = [];

async function chat(prompt: string, maxTokens: number, fresh: boolean) {
  // fresh: the whole prompt is evaluated, none of it reused from the previous run.
  if (fresh) await sequence!.clearHistory();
  const session = new LlamaChat({ contextSequence: sequence!, chatWrapper: wrapper });
  const started = performance.now();
  let first = 0;
  let last = 0;
  let tokens = 0;
  await session.generateResponse([{ type: "user", text: prompt }, { type: "model", response: [] }], {
    maxTokens,
    temperature: 0,
    repeatPenalty: false,
    onToken: (t) => {
      tokens += t.length;
      last = performance.now();
      if (!first) first = last;
    },
  });
  session.dispose();
  return { ttftMs: first - started, decodeMs: last - first, tokens };
}

async function embed(inputs: string[]) {
  if (embedders.length === 0) embedders.push(await model.createEmbeddingContext({ threads: options.threads, contextSize: Math.min(model.trainContextSize, 8192) }));
  const embedder = embedders[0]!;
  const started = performance.now();
  for (const input of inputs) await embedder.getEmbeddingFor(input);
  return { count: inputs.length, ms: performance.now() - started };
}

process.stdout.write(`${JSON.stringify({ ready: true })}\n`);
for await (const line of createInterface({ input: process.stdin })) {
  const request = JSON.parse(line) as { op: "chat"; prompt: string; maxTokens: number; fresh?: boolean } | { op: "embed"; inputs: string[] };
  const result = request.op === "chat" ? await chat(request.prompt, request.maxTokens, request.fresh === true) : await embed(request.inputs);
  process.stdout.write(`${JSON.stringify(result)}\n`);
}
for (const embedder of embedders) await embedder.dispose();
await context?.dispose();
await model.dispose();
await llama.dispose();
