/** Model objects: OpenAI's `model` plus what serves it. */
import type * as Api from "../../contract/index.js";
import { formatParameterCount } from "../../models/gguf-summary.js";
import type { ModelEntry } from "../../models/model-registry.js";

/** One object per name: the canonical id and each alias, all describing the same file. */
export function modelObject(name: string, entry: ModelEntry, created: number, isDefault: boolean): Api.Model {
  const { gguf } = entry;
  return {
    id: name,
    object: "model",
    created,
    owned_by: "pustaka",
    type: entry.type,
    root: entry.id,
    aliases: entry.aliases,
    context_length: gguf.contextLength,
    ...(entry.type === "embedding" ? { dimensions: gguf.embeddingLength } : {}),
    languages: entry.catalog?.languages ?? [],
    license: entry.catalog?.license ?? null,
    is_default: isDefault,
    backing: {
      file: gguf.path,
      bytes: gguf.bytes,
      name: gguf.name,
      architecture: gguf.architecture,
      parameters: formatParameterCount(gguf.parameters),
      quantization: gguf.quantization,
      origin: entry.origin,
      sha256: entry.catalog?.source.sha256 ?? null,
    },
  };
}

/** Every available name, canonical ids first, sorted within each group. */
export function modelNames(entries: readonly ModelEntry[]): { name: string; entry: ModelEntry }[] {
  const canonical = entries.map((entry) => ({ name: entry.id, entry })).sort((a, b) => a.name.localeCompare(b.name));
  const aliases = entries.flatMap((entry) => entry.aliases.map((name) => ({ name, entry }))).sort((a, b) => a.name.localeCompare(b.name));
  return [...aliases, ...canonical];
}
