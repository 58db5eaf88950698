/**
 * OpenAI's Files and Vector Stores on the wire: request schemas within OpenAI's limits, and
 * the objects as OpenAI writes them (`file`, `vector_store`, `vector_store.file`,
 * `vector_store.files_batch`, `vector_store.search_results.page`).
 */
import { z } from "zod";
import { invalidRequest } from "../../errors.js";
import { MAX_FILTER_DEPTH, MAX_FILTER_NODES, type AttributeFilter, type ComparisonOperator } from "../../rag/vector-stores/attribute-filter.js";
import { lastErrorCode, type AttachItem } from "../../rag/vector-stores/file-attacher.js";
import type { FileContent, BatchView } from "../../rag/vector-stores/vector-store-file-service.js";
import type { VectorStoreSearchResult } from "../../rag/vector-stores/vector-store-search.js";
import type { VectorStoreView } from "../../rag/vector-stores/vector-store-service.js";
import type { OpenAiFileRecord } from "../../store/openai-file-store.js";
import type { AttachmentView, FileChunking, FileCounts } from "../../store/vector-store-store.js";
import { ListQuerySchema } from "./list-wire.js";

const MAX_PAIRS = 16;
const tooMany = (what: string) => `too many properties: ${what} takes at most ${MAX_PAIRS} key-value pairs`;

/** OpenAI's `metadata`: at most 16 pairs, keys up to 64 characters, string values up to 512. */
const MetadataSchema = z.record(z.string().min(1).max(64), z.string().max(512)).refine((m) => Object.keys(m).length <= MAX_PAIRS, tooMany("metadata"));

/** A file's `attributes`: at most 16 pairs, values strings (up to 512 characters), numbers or booleans. */
const AttributesSchema = z
  .record(z.string().min(1).max(64), z.union([z.string().max(512), z.number().finite(), z.boolean()]))
  .refine((m) => Object.keys(m).length <= MAX_PAIRS, tooMany("attributes"));

/** `auto` (Pustaka's own chunking) or fixed windows within OpenAI's limits (100–4096 tokens, overlap at most half). */
const ChunkingStrategySchema = z.discriminatedUnion("type", [
  z.object({ type: z.literal("auto") }).strict(),
  z
    .object({
      type: z.literal("static"),
      static: z
        .object({
          max_chunk_size_tokens: z.number().int().min(100).max(4096),
          chunk_overlap_tokens: z.number().int().min(0),
        })
        .strict()
        .refine((s) => s.chunk_overlap_tokens <= s.max_chunk_size_tokens / 2, { message: "chunk_overlap_tokens must not exceed half of max_chunk_size_tokens", path: ["chunk_overlap_tokens"] }),
    })
    .strict(),
]);

const ExpiresAfterSchema = z.object({ anchor: z.literal("last_active_at"), days: z.number().int().min(1).max(365) }).strict();

const FileId = z.string().min(1).max(128);

export const FileListQuerySchema = ListQuerySchema.extend({
  // OpenAI's files list pages by up to 10,000.
  limit: z.coerce.number().int().min(1).max(10_000).default(10_000),
  purpose: z.string().min(1).max(64).optional(),
}).strict();

export const CreateVectorStoreSchema = z
  .object({
    name: z.string().max(256).optional(),
    description: z.string().max(512).optional(),
    file_ids: z.array(FileId).max(500).optional(),
    chunking_strategy: ChunkingStrategySchema.optional(),
    expires_after: ExpiresAfterSchema.optional(),
    metadata: MetadataSchema.nullable().optional(),
  })
  .strict()
  .refine((b) => b.chunking_strategy === undefined || (b.file_ids?.length ?? 0) > 0, { message: "chunking_strategy is only applicable if file_ids is non-empty", path: ["chunking_strategy"] });

export const UpdateVectorStoreSchema = z
  .object({
    name: z.string().max(256).nullable().optional(),
    expires_after: ExpiresAfterSchema.nullable().optional(),
    metadata: MetadataSchema.nullable().optional(),
  })
  .strict();

export const VectorStoreFileListQuerySchema = ListQuerySchema.extend({ filter: z.enum(["in_progress", "completed", "failed", "cancelled"]).optional() }).strict();

export const CreateVectorStoreFileSchema = z
  .object({
    file_id: FileId,
    attributes: AttributesSchema.nullable().optional(),
    chunking_strategy: ChunkingStrategySchema.optional(),
  })
  .strict();

export const UpdateVectorStoreFileSchema = z.object({ attributes: AttributesSchema.nullable() }).strict();

export const CreateFileBatchSchema = z
  .object({
    file_ids: z.array(FileId).min(1).max(2000).optional(),
    files: z
      .array(z.object({ file_id: FileId, attributes: AttributesSchema.nullable().optional(), chunking_strategy: ChunkingStrategySchema.optional() }).strict())
      .min(1)
      .max(2000)
      .optional(),
    attributes: AttributesSchema.nullable().optional(),
    chunking_strategy: ChunkingStrategySchema.optional(),
  })
  .strict()
  .refine((b) => (b.file_ids === undefined) !== (b.files === undefined), { message: "send exactly one of file_ids and files" })
  .refine((b) => b.files === undefined || (b.attributes === undefined && b.chunking_strategy === undefined), { message: "with files, attributes and chunking_strategy are given per file", path: ["files"] });

export const SearchSchema = z
  .object({
    query: z.union([z.string().trim().min(1).max(4096), z.array(z.string().trim().min(1).max(4096)).min(1).max(10)]),
    max_num_results: z.number().int().min(1).max(50).default(10),
    // Checked by `parseFilters` (recursive, with OpenAI's own messages).
    filters: z.record(z.string(), z.unknown()).optional(),
    ranking_options: z
      .object({
        ranker: z.enum(["none", "auto", "default-2024-11-15"]).optional(),
        score_threshold: z.number().min(0).max(1).optional(),
      })
      .strict()
      .optional(),
    rewrite_query: z.boolean().optional(),
  })
  .strict();

/** The multipart fields of an upload besides the file (`expires_after` as the SDKs send objects in forms). */
export const UploadFieldsSchema = z
  .object({
    purpose: z.string({ error: "purpose is required: 'assistants' or 'user_data'" }),
    "expires_after[anchor]": z.literal("created_at").optional(),
    "expires_after[seconds]": z.coerce.number().int().min(3600).max(2_592_000).optional(),
  })
  .strict()
  .refine((f) => (f["expires_after[anchor]"] === undefined) === (f["expires_after[seconds]"] === undefined), { message: "expires_after needs both anchor and seconds", path: ["expires_after"] });

// ── filters ──

const COMPARISONS: ReadonlySet<string> = new Set(["eq", "ne", "gt", "gte", "lt", "lte", "in", "nin"]);

/**
 * OpenAI's `filters` as a filter, or a 400 naming the place at fault (`filters.filters.1.key`).
 * Comparison values are strings, numbers or booleans; `in`/`nin` take a list of strings or numbers.
 */
export function parseFilters(value: unknown, param = "filters"): AttributeFilter {
  let nodes = 0;
  const parse = (node: unknown, at: string, depth: number): AttributeFilter => {
    if (++nodes > MAX_FILTER_NODES) throw invalidRequest(`Invalid '${param}': more than ${MAX_FILTER_NODES} filters.`, "invalid_filter", param);
    if (depth > MAX_FILTER_DEPTH) throw invalidRequest(`Invalid '${at}': filters nest at most ${MAX_FILTER_DEPTH} levels deep.`, "invalid_filter", at);
    if (typeof node !== "object" || node === null || Array.isArray(node)) throw invalidRequest(`Invalid '${at}': expected an object (a comparison or a compound filter).`, "invalid_filter", at);
    const { type, ...rest } = node as Record<string, unknown>;
    if (type === "and" || type === "or") {
      const extra = Object.keys(rest).filter((k) => k !== "filters");
      if (extra.length > 0) throw invalidRequest(`Invalid '${at}': unknown parameter '${extra[0]}' in a compound filter.`, "invalid_filter", `${at}.${extra[0]}`);
      if (!Array.isArray(rest.filters) || rest.filters.length === 0) throw invalidRequest(`Invalid '${at}.filters': expected a non-empty array of filters.`, "invalid_filter", `${at}.filters`);
      return { type, filters: rest.filters.map((f, i) => parse(f, `${at}.filters.${i}`, depth + 1)) };
    }
    if (typeof type !== "string" || !COMPARISONS.has(type)) {
      throw invalidRequest(`Invalid '${at}.type': expected one of 'eq', 'ne', 'gt', 'gte', 'lt', 'lte', 'in', 'nin', 'and', 'or'.`, "invalid_filter", `${at}.type`);
    }
    const extra = Object.keys(rest).filter((k) => k !== "key" && k !== "value");
    if (extra.length > 0) throw invalidRequest(`Invalid '${at}': unknown parameter '${extra[0]}' in a comparison filter.`, "invalid_filter", `${at}.${extra[0]}`);
    if (typeof rest.key !== "string" || rest.key.length === 0 || rest.key.length > 64) throw invalidRequest(`Invalid '${at}.key': expected a string of 1 to 64 characters.`, "invalid_filter", `${at}.key`);
    const v = rest.value;
    const scalar = (x: unknown): x is string | number | boolean => typeof x === "string" || typeof x === "boolean" || (typeof x === "number" && Number.isFinite(x));
    if (type === "in" || type === "nin") {
      if (!Array.isArray(v) || v.length === 0 || v.length > 1000 || !v.every((x) => typeof x === "string" || (typeof x === "number" && Number.isFinite(x)))) {
        throw invalidRequest(`Invalid '${at}.value': '${type}' takes a non-empty array of strings or numbers.`, "invalid_filter", `${at}.value`);
      }
      return { type, key: rest.key, value: v as (string | number)[] };
    }
    if (!scalar(v)) throw invalidRequest(`Invalid '${at}.value': expected a string, a number or a boolean.`, "invalid_filter", `${at}.value`);
    return { type: type as ComparisonOperator, key: rest.key, value: v };
  };
  return parse(value, param, 1);
}

// ── from the wire ──

export function fileChunkingOf(strategy: z.infer<typeof ChunkingStrategySchema> | undefined): FileChunking {
  return strategy?.type === "static" ? { type: "static", maxChunkSizeTokens: strategy.static.max_chunk_size_tokens, chunkOverlapTokens: strategy.static.chunk_overlap_tokens } : { type: "auto" };
}

/** The files a batch request names, each with its attributes and chunking. */
export function batchItemsOf(body: z.infer<typeof CreateFileBatchSchema>): AttachItem[] {
  if (body.files) return body.files.map((f) => ({ fileId: f.file_id, attributes: f.attributes ?? {}, chunking: fileChunkingOf(f.chunking_strategy) }));
  return (body.file_ids ?? []).map((fileId) => ({ fileId, attributes: body.attributes ?? {}, chunking: fileChunkingOf(body.chunking_strategy) }));
}

// ── to the wire ──

export function fileObject(f: OpenAiFileRecord) {
  return { id: f.id, object: "file" as const, bytes: f.bytes, created_at: f.createdAt, filename: f.filename, purpose: f.purpose, status: "processed" as const, expires_at: f.expiresAt, status_details: null };
}

export function fileDeletedObject(id: string) {
  return { id, object: "file" as const, deleted: true };
}

const fileCountsObject = (c: FileCounts) => ({ in_progress: c.in_progress, completed: c.completed, failed: c.failed, cancelled: c.cancelled, total: c.total });

export function vectorStoreObject(v: VectorStoreView) {
  return {
    id: v.id,
    object: "vector_store" as const,
    created_at: v.corpus.createdAt,
    name: v.corpus.name,
    usage_bytes: v.usageBytes,
    file_counts: fileCountsObject(v.fileCounts),
    status: v.status,
    ...(v.expiresAfterDays !== null ? { expires_after: { anchor: "last_active_at" as const, days: v.expiresAfterDays } } : {}),
    expires_at: v.expiresAt,
    last_active_at: v.lastActiveAt,
    metadata: v.corpus.metadata,
  };
}

export function vectorStoreDeletedObject(id: string) {
  return { id, object: "vector_store.deleted" as const, deleted: true };
}

/** Pustaka's own chunking is reported as OpenAI's `other` (not fixed windows); static as asked. */
function chunkingStrategyObject(c: FileChunking) {
  return c.type === "static" ? { type: "static" as const, static: { max_chunk_size_tokens: c.maxChunkSizeTokens, chunk_overlap_tokens: c.chunkOverlapTokens } } : { type: "other" as const };
}

export function vectorStoreFileObject(vectorStoreId: string, a: AttachmentView) {
  const error = a.status === "failed" ? (a.error ?? (a.documentError ? { code: lastErrorCode(a.documentError.code), message: a.documentError.message } : { code: "server_error", message: "The file's document is gone." })) : null;
  return {
    id: a.fileId,
    object: "vector_store.file" as const,
    usage_bytes: a.usageBytes,
    created_at: a.createdAt,
    vector_store_id: vectorStoreId,
    status: a.status,
    last_error: error,
    chunking_strategy: chunkingStrategyObject(a.chunking),
    attributes: a.attributes,
  };
}

export function vectorStoreFileDeletedObject(id: string) {
  return { id, object: "vector_store.file.deleted" as const, deleted: true };
}

export function fileBatchObject(b: BatchView) {
  return { id: b.id, object: "vector_store.files_batch" as const, created_at: b.createdAt, vector_store_id: b.vectorStoreId, status: b.status, file_counts: fileCountsObject(b.fileCounts) };
}

export function searchResultsPage(result: VectorStoreSearchResult) {
  return {
    object: "vector_store.search_results.page" as const,
    search_query: result.searchQuery,
    data: result.hits.map((h) => ({ file_id: h.fileId, filename: h.filename, score: h.score, attributes: h.attributes, content: [{ type: "text" as const, text: h.text }] })),
    has_more: false,
    next_page: null,
  };
}

export function fileContentPage(content: FileContent) {
  return { object: "vector_store.file_content.page" as const, data: content.parts.map((text) => ({ type: "text" as const, text })), has_more: false, next_page: null };
}
