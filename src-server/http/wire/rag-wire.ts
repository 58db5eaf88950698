/** Corpora, documents, uploads and answers on the wire (guide §2). */
import { z } from "zod";
import type * as Api from "../../contract/index.js";
import type { FinishReason } from "../../engine/types.js";
import type { AnswerCitation, Citation, StartedQuery } from "../../rag/answer/query-service.js";
import type { PassageInContext } from "../../rag/answer/source-service.js";
import type { CorpusEvent } from "../../rag/corpus-events.js";
import type { CorpusView } from "../../rag/corpus-service.js";
import type { FileRejection } from "../../rag/document-service.js";
import type { DocumentRecord } from "../../store/document-store.js";
import type { TombstoneRecord } from "../../store/tombstone-catalog.js";
import { tombstoneObject } from "./tombstone-wire.js";

const Metadata = z.record(z.string().min(1).max(64), z.string().max(1024)).refine((m) => Object.keys(m).length <= 32, "at most 32 metadata keys");

export const CreateCorpusSchema = z
  .object({
    name: z.string().trim().min(1).max(200),
    chunking: z.enum(["semantic", "fixed", "paragraph"]).default("semantic"),
    embedding_model: z.string().min(1).max(256).optional(),
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
    top_k: z.number().int().min(1).max(100).default(5),
    filter: z.record(z.string().min(1).max(64), z.union([z.string(), z.number(), z.boolean()])).optional(),
    search: z.enum(["hybrid", "vector", "keyword"]).default("hybrid"),
  })
  .strict();

export const corpusObject = (c: CorpusView): Api.Corpus => ({
  id: c.id,
  object: "rag.corpus",
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

export const documentObject = (d: DocumentRecord): Api.RagDocument => ({
  id: d.id,
  object: "rag.document",
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

export const uploadObject = (corpusId: string, documents: DocumentRecord[], rejected: FileRejection[]): Api.UploadResult => ({
  object: "rag.upload",
  corpus_id: corpusId,
  documents: documents.map(documentObject),
  rejected: rejected.map((r) => ({ filename: r.filename, error: r.error })),
});

/** A retrieved passage on the wire; `cited` says whether the answer used it. */
export const citationObject = (c: Citation, cited: boolean): Api.Citation => ({
  index: c.index,
  document_id: c.documentId,
  chunk_id: c.chunkId,
  filename: c.filename,
  text: c.text,
  score: c.score,
  page: c.pageStart,
  page_start: c.pageStart,
  page_end: c.pageEnd,
  metadata: c.metadata,
  cited,
});

export const corpusDeletedObject = (id: string, tombstone: TombstoneRecord): Api.CorpusDeleted => ({
  id,
  object: "rag.corpus.deleted",
  deleted: true,
  tombstone_expires_at: tombstone.expiresAt,
  tombstone: tombstoneObject(tombstone),
});

export const documentDeletedObject = (id: string, tombstone: TombstoneRecord): Api.DocumentDeleted => ({ id, object: "rag.document.deleted", deleted: true, tombstone: tombstoneObject(tombstone) });

/** What a finished answer adds to its text: citations marked cited or not, usage, why it ended. */
export interface AnswerEnding {
  citations: AnswerCitation[];
  promptTokens: number;
  completionTokens: number;
  finishReason: FinishReason;
}

const usageOf = (e: AnswerEnding) => ({ prompt_tokens: e.promptTokens, completion_tokens: e.completionTokens, total_tokens: e.promptTokens + e.completionTokens });

export const answerObject = (id: string, started: StartedQuery, answer: string, ending: AnswerEnding, createdAt: number): Api.Answer => ({
  id,
  object: "rag.answer",
  corpus_id: started.corpusId,
  model: started.model,
  answer,
  grounded: started.run !== null,
  citations: ending.citations.map((c) => citationObject(c, c.cited)),
  usage: usageOf(ending),
  finish_reason: ending.finishReason,
  created_at: createdAt,
});

export const answerDeltaEvent = (id: string, delta: string): Api.AnswerStreamEvent => ({ object: "rag.answer.delta", id, delta });

export const answerCitationsEvent = (id: string, started: StartedQuery, ending: AnswerEnding): Api.AnswerStreamEvent => ({
  object: "rag.answer.citations",
  id,
  grounded: started.run !== null,
  citations: ending.citations.map((c) => citationObject(c, c.cited)),
  usage: usageOf(ending),
  finish_reason: ending.finishReason,
});

export const searchResultObject = (found: { citations: (Citation & { headingPath: string[] })[]; relevant: boolean; bestSimilarity: number | null }): Api.SearchResult => ({
  object: "list",
  data: found.citations.map(({ headingPath, ...c }) => ({ ...citationObject(c, false), heading_path: headingPath })),
  relevant: found.relevant,
  best_similarity: found.bestSimilarity,
});

/** An indexing event for the `/events` stream (snapshots are sent by the route). */
export function corpusEventObject(corpusId: string, event: CorpusEvent): Api.CorpusEvent {
  if (event.type === "corpus.deleted") return { object: "rag.corpus.deleted", id: corpusId };
  if (event.type === "document.progress") return { object: "rag.document.progress", document_id: event.documentId, stage: event.stage, done: event.done, total: event.total };
  const timings = event.timings && {
    parse_ms: Math.round(event.timings.parseMs),
    chunk_ms: Math.round(event.timings.chunkMs),
    embed_ms: Math.round(event.timings.embedMs),
    store_ms: Math.round(event.timings.storeMs),
    pages: event.timings.pages,
  };
  return { object: "rag.document.status", document_id: event.documentId, status: event.status, error: event.error, chunk_count: event.chunkCount, ...(timings ? { timings } : {}) };
}

export const corpusSnapshotEvent = (corpus: CorpusView): Api.CorpusEvent => ({ object: "rag.corpus.snapshot", corpus: corpusObject(corpus) });

export const chunkContextObject = (p: PassageInContext): Api.ChunkContext => ({
  id: p.chunk.id,
  object: "rag.chunk",
  document_id: p.document.id,
  filename: p.document.filename,
  content_type: p.document.contentType,
  index: p.chunk.index,
  text: p.text,
  page_start: p.chunk.pageStart,
  page_end: p.chunk.pageEnd,
  heading_path: p.headingPath,
  before: p.before,
  after: p.after,
});
