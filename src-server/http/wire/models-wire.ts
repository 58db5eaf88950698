/** Model objects: OpenAI's `model` plus what serves it. */
import path from "node:path";
import { z } from "zod";
import type { PullView } from "../../admin/model-pull-service.js";
import type * as Api from "../../contract/index.js";
import { MODEL_TYPES, type CatalogModel } from "../../models/catalog.js";
import { formatParameterCount } from "../../models/gguf-summary.js";
import { modelFacts, type ModelEntry } from "../../models/model-registry.js";

/**
 * One object per name: the canonical id and each alias, all describing the same file.
 * `context_length` is what one request gets here; `max_context_length` what the model was trained with.
 * `backing.file` is the absolute path only for whoever administers the machine
 * (`fullPath`, the `workspaces.manage` scope); anyone else sees the file's name alone.
 */
export function modelObject(name: string, entry: ModelEntry, created: number, isDefault: boolean, servedContext: number | null, fullPath: boolean, health: readonly UpstreamHealthView[] | null): Api.Model {
  const facts = modelFacts(entry);
  return {
    id: name,
    object: "model",
    created,
    owned_by: "pustaka",
    type: entry.type,
    root: entry.id,
    aliases: entry.aliases,
    context_length: servedContext,
    max_context_length: facts.contextLength,
    ...(entry.type === "embedding" ? { dimensions: facts.embeddingLength } : {}),
    languages: entry.catalog?.languages ?? [],
    license: entry.catalog?.license ?? null,
    is_default: isDefault,
    backing: entry.gguf
      ? {
          kind: "local",
          file: fullPath ? entry.gguf.path : path.basename(entry.gguf.path),
          bytes: entry.gguf.bytes,
          name: entry.gguf.name,
          architecture: entry.gguf.architecture,
          parameters: formatParameterCount(entry.gguf.parameters),
          quantization: entry.gguf.quantization,
          origin: entry.origin === "remote" ? "binding" : entry.origin,
          sha256: entry.catalog?.source.sha256 ?? null,
        }
      : {
          kind: "remote",
          architecture: "remote",
          upstreams: (entry.remote?.upstreams ?? []).map((upstream) => {
            const seen = health?.find((h) => h.id === upstream.id);
            return {
              id: upstream.id,
              url: fullPath ? upstream.baseUrl : null,
              model: upstream.model,
              health: seen?.state ?? "unknown",
              in_flight: seen?.inFlight ?? 0,
              last_error: fullPath ? (seen?.lastError ?? null) : null,
            };
          }),
        },
  };
}

/** What the remote engine says of one replica, for model objects. */
export interface UpstreamHealthView {
  id: string;
  state: Api.UpstreamHealth;
  inFlight: number;
  lastError: string | null;
}

/** Every available name, canonical ids first, sorted within each group. */
export function modelNames(entries: readonly ModelEntry[]): { name: string; entry: ModelEntry }[] {
  const canonical = entries.map((entry) => ({ name: entry.id, entry })).sort((a, b) => a.name.localeCompare(b.name));
  const aliases = entries.flatMap((entry) => entry.aliases.map((name) => ({ name, entry }))).sort((a, b) => a.name.localeCompare(b.name));
  return [...aliases, ...canonical];
}

export const catalogModelObject = (c: { model: CatalogModel; aliases: string[]; installed: boolean }): Api.CatalogModel => ({
  id: c.model.id,
  object: "catalog.model",
  type: c.model.type,
  name: c.model.name,
  description: c.model.description,
  languages: c.model.languages,
  license: c.model.license,
  architecture: c.model.architecture,
  parameters: c.model.parameters,
  quantization: c.model.quantization,
  context_length: c.model.context_length,
  dimensions: c.model.dimensions ?? null,
  aliases: c.aliases,
  source: "pip" in c.model.source ? "pip" : "url",
  starter: c.model.starter,
  bytes: c.model.source.bytes,
  installed: c.installed,
});

export const pullObject = (p: PullView): Api.ModelPull => ({
  id: p.id,
  object: "model.pull",
  models: p.models,
  source: p.source,
  status: p.status,
  stage: p.stage,
  received_bytes: p.received,
  total_bytes: p.total,
  error: p.error,
  created_at: p.createdAt,
  finished_at: p.finishedAt,
});

export const CreatePullSchema = z.union([z.object({ model: z.string().min(1).max(256) }).strict(), z.object({ starter: z.literal(true) }).strict()]);

export const RegisterFileSchema = z
  .object({
    path: z.string().min(1).max(4096),
    id: z.string().regex(/^[a-z0-9][a-z0-9._:-]{0,127}$/, "ids are lowercase letters, digits and . _ : -").optional(),
    /** What the file is meant to be; checked against the file (`model_type_mismatch`). */
    type: z.enum(MODEL_TYPES).optional(),
  })
  .strict();
