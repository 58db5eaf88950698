/**
 * Reference measurements: node-llama-cpp called directly (no HTTP), in its own process,
 * with the same GGUF, thread count and prompts as the server runs.
 * Usage: node --import tsx bench/inprocess.ts '<json options>'  → JSON on stdout.
 */
import { getLlama, LlamaChat, resolveChatWrapper, type ChatHistoryItem } from "node-llama-cpp";

interface Options {
  mode: "chat" | "embed";
  model: string;
  threads: number;
  contextSize: number;
  prompts: string[];
  maxTokens: number;
  /** Embedding inputs. */
  inputs?: string[];
}

const options = JSON.parse(process.argv[2] ?? "{}") as Options;
const llama = await getLlama({ gpu: false, build: "never" });
const model = await llama.loadModel({ modelPath: options.model });

if (options.mode === "chat") {
  const context = await model.createContext({ contextSize: options.contextSize, sequences: 1, threads: options.threads });
  const sequence = context.getSequence();
  const wrapper = resolveChatWrapper(model);
  const runs = [];
  for (const prompt of options.prompts) {
    const chat = new LlamaChat({ contextSequence: sequence, chatWrapper: wrapper });
    const history: ChatHistoryItem[] = [{ type: "user", text: prompt }, { type: "model", response: [] }];
    const started = performance.now();
    let first = 0;
    let last = 0;
    let tokens = 0;
    await chat.generateResponse(history, {
      maxTokens: options.maxTokens,
      temperature: 0,
      repeatPenalty: false,
      onToken: (t) => {
        tokens += t.length;
        last = performance.now();
        if (!first) first = last;
      },
    });
    runs.push({ ttftMs: first - started, decodeMs: last - first, tokens });
    chat.dispose();
  }
  process.stdout.write(JSON.stringify({ runs }));
} else {
  const context = await model.createEmbeddingContext({ threads: options.threads, contextSize: Math.min(model.trainContextSize, 8192) });
  const inputs = options.inputs ?? [];
  await context.getEmbeddingFor("warm up");
  const started = performance.now();
  for (const input of inputs) await context.getEmbeddingFor(input);
  const ms = performance.now() - started;
  process.stdout.write(JSON.stringify({ count: inputs.length, ms }));
}
await model.dispose();
await llama.dispose();
