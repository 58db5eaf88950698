/**
 * The llama.cpp self-test: a tiny model (resources/self-test) decoded and embedded through
 * the engine's own code paths (prompt evaluation, greedy decoding with decode-ahead, two
 * sequences generating together, embeddings batched across sequences), so a build that
 * crashes on this CPU, or computes wrong results, is found before it serves anyone.
 *
 * `runLlamaSelfTest` runs in a child process (a crash must not take the caller down) and
 * `judgeSelfTest` compares a candidate build with a reference run (the prebuilt binaries).
 */
import pino from "pino";
import type { ModelEntry } from "../models/model-registry.js";
import { readGgufSummary } from "../models/gguf-summary.js";
import { LlamaEngine } from "./llama-engine.js";
import type { LlamaBuildChoice, LlamaBuildRecord } from "./llama-binary.js";

export interface SelfTestRun {
  build: "local" | "prebuilt";
  variant: string | null;
  /** Greedy continuation of the prompt, generated alone. */
  text: string;
  /** The same prompt generated twice at once on two sequences (continuous batching). */
  pairTexts: [string, string];
  completionTokens: number;
  /** Each input embedded together in one call (batched when the build can), then alone. */
  together: number[][];
  alone: number[][];
  batchedEmbeddings: boolean;
  ms: number;
}

export const SELF_TEST_PROMPT = "Once upon a time";
export const SELF_TEST_INPUTS = ["Once upon a time there was a little girl.", "The dog ran to the park.", "Lily and Tom played with a ball.", "Selamat pagi, apa khabar?"];
const TOKENS = 24;

/** Runs the self-test on one build. Throws when llama.cpp fails; a crash kills the process. */
export async function runLlamaSelfTest(modelPath: string, build: LlamaBuildChoice, buildRecord: LlamaBuildRecord | null): Promise<SelfTestRun> {
  const started = Date.now();
  const engine = new LlamaEngine(
    {
      gpu: "cpu",
      threads: 1,
      idleUnloadSeconds: 0,
      build,
      buildRecord,
      chat: { contextSize: 256, sequences: 2, maxQueued: 4, promptCache: true },
      embeddings: { contexts: 1, batchSequences: 4, batchTokens: 256 },
      rerank: { contexts: 1 },
    },
    pino({ level: "silent" }),
  );
  try {
    const gguf = await readGgufSummary(modelPath);
    const entry: ModelEntry = { id: "self-test", type: "chat", aliases: [], gguf, remote: null, catalog: null, origin: "binding" };
    const complete = async () => {
      const run = await engine.startCompletion(entry, { prompt: SELF_TEST_PROMPT, maxTokens: TOKENS, stop: [], sampling: { temperature: 0 }, promptCache: false }, AbortSignal.timeout(60_000));
      let text = "";
      let tokens = 0;
      for await (const event of run.events) {
        if (event.type === "text") text += event.text;
        else tokens = event.completionTokens;
      }
      return { text, tokens };
    };
    const alone = await complete();
    const pair = await Promise.all([complete(), complete()]);
    const together = await engine.embed({ ...entry, type: "embedding" }, SELF_TEST_INPUTS, AbortSignal.timeout(60_000));
    const single: number[][] = [];
    for (const input of SELF_TEST_INPUTS) single.push([...(await engine.embed({ ...entry, type: "embedding" }, [input], AbortSignal.timeout(60_000))).vectors[0]!]);
    const status = engine.status();
    return {
      build: status.build?.type ?? "prebuilt",
      variant: status.build?.variant ?? null,
      text: alone.text,
      pairTexts: [pair[0].text, pair[1].text],
      completionTokens: alone.tokens,
      together: together.vectors.map((v) => [...v]),
      alone: single,
      batchedEmbeddings: await engine.embedderBatches({ ...entry, type: "embedding" }),
      ms: Date.now() - started,
    };
  } finally {
    await engine.close();
  }
}

const cosine = (a: number[], b: number[]) => {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i]! * b[i]!;
    na += a[i]! * a[i]!;
    nb += b[i]! * b[i]!;
  }
  return dot / Math.sqrt(na * nb || 1);
};

/** Lowest cosine between paired vectors (1 = identical directions); -1 when the shapes differ. */
export function minCosine(a: number[][], b: number[][]): number {
  if (a.length !== b.length || a.some((v, i) => v.length !== b[i]!.length || v.length === 0)) return -1;
  return Math.min(...a.map((v, i) => cosine(v, b[i]!)));
}

/**
 * Whether `run` is right: its own results agree (two sequences generate what one does;
 * batched vectors equal lone ones) and, when a reference run exists, it generates the same
 * text and vectors as the reference. Null when it passes, else why, in words.
 */
export function judgeSelfTest(run: SelfTestRun, reference: SelfTestRun | null): string | null {
  if (run.completionTokens < 4 || run.text.trim().length === 0) return `it generated ${run.completionTokens} tokens ("${run.text.slice(0, 40)}") for a prompt that continues for ${TOKENS}`;
  if (run.pairTexts.some((t) => t !== run.text)) return "two sequences generating together gave other text than one alone (continuous batching is wrong)";
  const values = run.together.flat();
  if (values.length === 0 || values.some((x) => !Number.isFinite(x))) return "its embeddings are empty or not finite";
  // The install's build carries the patched addon: it must evaluate the inputs together.
  if (run.build === "local" && !run.batchedEmbeddings) return "it does not batch embeddings (the addon lacks Pustaka's patch: patches/node-llama-cpp+*.patch)";
  const selfAgreement = minCosine(run.together, run.alone);
  if (selfAgreement < 0.999) return `embedding inputs together gave other vectors than one at a time (cosine ${selfAgreement.toFixed(4)})`;
  if (!reference) return null;
  if (run.text !== reference.text) return `it generated "${run.text.slice(0, 60)}" where the prebuilt binaries generate "${reference.text.slice(0, 60)}"`;
  const agreement = minCosine(run.alone, reference.alone);
  if (agreement < 0.999) return `its embeddings differ from the prebuilt binaries' (cosine ${agreement.toFixed(4)})`;
  return null;
}
