/**
 * Ollama's model objects (`/api/tags`, `/api/show`, `/api/ps`) from what the registry and
 * the GGUF headers know, and Ollama's model names (`name:tag`) mapped onto the registry's.
 */
import { createHash } from "node:crypto";
import path from "node:path";
import { notFound } from "../../errors.js";
import { formatParameterCount } from "../../models/gguf-summary.js";
import { modelFacts, type ModelEntry } from "../../models/model-registry.js";

/**
 * The registry entry an Ollama client names: a registry id or alias as it is, or with
 * Ollama's default tag (`svc-merlion-13b:latest`), in any case. 404 in Ollama's words
 * otherwise. `name` is the registry's name for it (what the services resolve).
 */
export function resolveOllamaModel(find: (name: string) => ModelEntry | undefined, requested: string): { name: string; entry: ModelEntry } {
  const lower = requested.toLowerCase();
  for (const name of [requested, lower, lower.replace(/:latest$/, "")]) {
    const entry = find(name);
    if (entry) return { name, entry };
  }
  throw notFound(`model '${requested}' not found`, "model_not_found", "model");
}

/** A registry name as Ollama writes names: with a tag (`:latest` when it has none). */
export const ollamaName = (name: string) => (name.includes(":") ? name : `${name}:latest`);

/** What the server knows of a model's file beyond its header (read by the route). */
export interface FileFacts {
  /** The file's modification time (a remote model: when the server started). */
  modifiedAt: Date;
}

export interface OllamaDetails {
  parent_model: string;
  format: string;
  family: string;
  families: string[];
  parameter_size: string;
  quantization_level: string;
}

export function ollamaDetails(entry: ModelEntry): OllamaDetails {
  const facts = modelFacts(entry);
  return {
    parent_model: "",
    format: entry.gguf ? "gguf" : "remote",
    family: facts.architecture,
    families: [facts.architecture],
    parameter_size: facts.parameters ? formatParameterCount(facts.parameters) : "",
    quantization_level: facts.quantization ?? "",
  };
}

/**
 * A digest that changes when the model does: the catalog's SHA-256 of the file when the
 * model is a catalog one (the real bytes), else a SHA-256 of the file's identity (name,
 * size, modification time) or of a remote model's upstreams. Ollama's own digest is its
 * manifest's hash, not the weights', so clients treat it as an opaque version.
 */
export function ollamaDigest(entry: ModelEntry, file: FileFacts): string {
  const known = entry.catalog?.source.sha256;
  if (known) return known;
  const identity = entry.gguf
    ? `gguf\0${path.basename(entry.gguf.path)}\0${entry.gguf.bytes}\0${file.modifiedAt.getTime()}`
    : `remote\0${entry.id}\0${(entry.remote?.upstreams ?? []).map((u) => `${u.id}=${u.model}`).join("\0")}`;
  return createHash("sha256").update(identity).digest("hex");
}

/** One model of `/api/tags`. */
export function tagObject(name: string, entry: ModelEntry, file: FileFacts) {
  const ollama = ollamaName(name);
  return { name: ollama, model: ollama, modified_at: file.modifiedAt.toISOString(), size: entry.gguf?.bytes ?? 0, digest: ollamaDigest(entry, file), details: ollamaDetails(entry) };
}

/**
 * `completion` or `embedding`; `tools` where the GGUF's chat template takes tools (the
 * engine calls functions with any chat model, but only such templates were trained to) or
 * the model is remote (its upstream's OpenAI API takes tools).
 */
export function ollamaCapabilities(entry: ModelEntry): string[] {
  if (entry.type !== "chat") return ["embedding"];
  const template = entry.gguf?.chatTemplate ?? "";
  return entry.remote || /\btools\b/.test(template) ? ["completion", "tools"] : ["completion"];
}

/** `/api/show`'s `model_info`: the GGUF metadata keys Ollama reports, where the header says them. */
function modelInfo(entry: ModelEntry): Record<string, string | number> {
  const facts = modelFacts(entry);
  const info: Record<string, string | number> = { "general.architecture": facts.architecture };
  if (facts.name) info["general.name"] = facts.name;
  if (facts.parameters) info["general.parameter_count"] = facts.parameters;
  if (facts.contextLength !== null) info[`${facts.architecture}.context_length`] = facts.contextLength;
  if (facts.embeddingLength !== null) info[`${facts.architecture}.embedding_length`] = facts.embeddingLength;
  return info;
}

/** Ollama's `parameters` text: a name padded to a column, then its value. */
const parameterLine = (name: string, value: string | number) => `${name.padEnd(30)} ${value}`;

/**
 * `/api/show`. `servedContext` (what one request gets here) is the `num_ctx` parameter;
 * `model_info` keeps the context the model was trained with, as the GGUF says. The file's
 * full path only for whoever administers the machine (`fullPath`), as in `/v1/models`.
 */
export function showObject(entry: ModelEntry, file: FileFacts, servedContext: number | null, fullPath: boolean) {
  const template = entry.gguf?.chatTemplate ?? "";
  const from = entry.gguf ? (fullPath ? entry.gguf.path : path.basename(entry.gguf.path)) : `remote:${entry.id}`;
  const parameters = servedContext === null ? "" : parameterLine("num_ctx", servedContext);
  const modelfile = [
    "# Modelfile generated by Pustaka, for reference (Pustaka does not build models from Modelfiles)",
    `FROM ${from}`,
    ...(template ? [`TEMPLATE """${template}"""`] : []),
    ...(servedContext === null ? [] : [`PARAMETER num_ctx ${servedContext}`]),
  ].join("\n");
  return {
    license: entry.catalog?.license ?? "",
    modelfile,
    parameters,
    template,
    details: ollamaDetails(entry),
    model_info: modelInfo(entry),
    capabilities: ollamaCapabilities(entry),
    modified_at: file.modifiedAt.toISOString(),
  };
}

/** One loaded model of `/api/ps`; nothing runs on a GPU here, so `size_vram` is 0. */
export function psObject(name: string, entry: ModelEntry, file: FileFacts, expiresAt: Date, servedContext: number | null) {
  return { ...tagObject(name, entry, file), expires_at: expiresAt.toISOString(), size_vram: 0, ...(servedContext === null ? {} : { context_length: servedContext }) };
}
