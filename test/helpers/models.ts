/**
 * Where the test models are. Missing models are a loud failure, never a skip:
 * run `npm run models:test` (part of `npm test`) to materialise them.
 */
import { existsSync, readFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");

/** Tiny real GGUFs shipped beside the repository (plumbing only, no meaning). */
export const SHARED_MODELS_DIR = process.env.PUSTAKA_SHARED_MODELS ?? path.resolve(REPO_ROOT, "../shared/models");

export function tinyModel(name: "stories260K" | "llama-2-tiny-random"): string {
  const file = path.join(SHARED_MODELS_DIR, `${name}.gguf`);
  if (!existsSync(file)) throw new Error(`test model ${file} is missing (set PUSTAKA_SHARED_MODELS to the folder holding ${name}.gguf)`);
  return file;
}

export type TestModelId = "gemma3-270m" | "smollm2-135m-instruct" | "qwen2.5-coder-1.5b" | "all-minilm-l6-v2" | "multilingual-e5-small" | "embed-1024" | "rerank-random";

interface Manifest {
  models: Record<string, { path: string; sha256: string; type: string; dimensions?: number }>;
}

export const TEST_MODELS_DIR = process.env.PUSTAKA_TEST_MODELS_DIR ?? path.join(os.homedir(), ".cache", "pustaka", "test-models");

/** Path of a small real model prepared by `npm run models:test`. */
export function testModel(id: TestModelId): string {
  const manifestPath = path.join(TEST_MODELS_DIR, "manifest.json");
  if (!existsSync(manifestPath)) throw new Error(`no test model manifest at ${manifestPath}: run \`npm run models:test\` first`);
  const manifest = JSON.parse(readFileSync(manifestPath, "utf8")) as Manifest;
  const key = id === "embed-1024" ? Object.keys(manifest.models).find((k) => k.startsWith("embed-1024")) : id;
  const entry = key ? manifest.models[key] : undefined;
  if (!entry || !existsSync(entry.path)) throw new Error(`test model '${id}' is missing from ${manifestPath}: run \`npm run models:test\``);
  return entry.path;
}
