/** Corpora, documents, uploads and answers on the wire (guide §2). */
import { z } from "zod";
import type { Citation } from "../../rag/answer/query-service.js";
import type { CorpusView } from "../../rag/corpus-service.js";
import type { FileRejection } from "../../rag/document-service.js";
import type { DocumentRecord } from "../../store/document-store.js";

const Metadata = z.record(z.string().min(1).max(64), z.string().max(1024)).refine((m) => Object.keys(m).length <= 32, "at most 32 metadata keys");

export const CreateCorpusSchema = z
  .object({
    name: z.string().trim().min(1).max(200),
    chunking: z.enum(["semantic", "fixed", "paragraph"]).default("semantic"),
    embedding_model: z.string().min(1).max(256).default("svc-embed-1024"),
    retention_days: z.number().int().min(0).max(3650).default(30),
    metadata: Metadata.default({}),
  })
  .strict();

export const PatchCorpusSchema = z
  .object({
    name: z.string().trim().min(1).max(200).optional(),
    retention_days: z.number().int().min(0).max(3650).optional(),
    metadata: Metadata.optional(),
  })
  .strict()
  .refine((p) => Object.keys(p).length > 0, "send at least one of name, retention_days, metadata");

/** The upload's `metadata` part: a JSON object applied to every file. */
export const UploadMetadataSchema = z.record(z.string().min(1).max(64), z.union([z.string().max(1024), z.number(), z.boolean(), z.null()])).refine((m) => Object.keys(m).length <= 32, "at most 32 metadata keys");

export const QuerySchema = z
  .object({
    question: z.string().trim().min(1, "question must not be empty").max(8000),
    top_k: z.number().int().min(1).max(50).default(5),
    include_citations: z.boolean().optional(),
    stream: z.boolean().default(false),
    model: z.string().min(1).max(256).optional(),
    temperature: z.number().min(0).max(2).optional(),
    max_tokens: z.number().int().min(1).optional(),
    filter: z.record(z.string().min(1).max(64), z.union([z.string(), z.number(), z.boolean()])).optional(),
    search: z.enum(["hybrid", "vector", "keyword"]).default("hybrid"),
  })
  .strict();

export const SearchSchema = z
  .object({
    query: z.string().trim().min(1, "query must not be empty").max(8000),
    top_k: z.number().int().min(1).max(50).default(5),
    filter: z.record(z.string().min(1).max(64), z.union([z.string(), z.number(), z.boolean()])).optional(),
    search: z.enum(["hybrid", "vector", "keyword"]).default("hybrid"),
  })
  .strict();

export const corpusObject = (c: CorpusView) => ({
  id: c.id,
  object: "rag.corpus" as const,
  name: c.name,
  chunking: c.chunking,
  embedding_model: c.embeddingModel,
  dimensions: c.dimensions,
  status: c.status,
  document_counts: c.counts,
  chunk_count: c.chunkCount,
  retention_days: c.retentionDays,
  metadata: c.metadata,
  created_at: c.createdAt,
  updated_at: c.updatedAt,
});

export const documentObject = (d: DocumentRecord) => ({
  id: d.id,
  object: "rag.document" as const,
  corpus_id: d.corpusId,
  filename: d.filename,
  content_type: d.contentType,
  bytes: d.bytes,
  sha256: d.sha256,
  status: d.status,
  error: d.error,
  page_count: d.pageCount,
  chunk_count: d.chunkCount,
  metadata: d.metadata,
  created_at: d.createdAt,
  indexed_at: d.indexedAt,
});

export const uploadObject = (corpusId: string, documents: DocumentRecord[], rejected: FileRejection[]) => ({
  object: "rag.upload" as const,
  corpus_id: corpusId,
  documents: documents.map(documentObject),
  rejected,
});

export const citationObject = (c: Citation, cited: boolean) => ({
  index: c.index,
  document_id: c.documentId,
  chunk_id: c.chunkId,
  filename: c.filename,
  text: c.text,
  score: c.score,
  page: c.page,
  metadata: c.metadata,
  cited,
});
