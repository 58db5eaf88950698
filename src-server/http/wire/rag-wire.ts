/** Corpora, documents, uploads and answers on the wire (guide §2). */
import { z } from "zod";
import type * as Api from "../../contract/index.js";
import type { FinishReason } from "../../engine/types.js";
import type { AnswerSentence } from "../../rag/answer/answer-support.js";
import type { AnswerCitation, Citation, RelevanceDecision, RerankChoice, Retrieval, StartedQuery } from "../../rag/answer/query-service.js";
import type { PassageInContext } from "../../rag/answer/source-service.js";
import type { CorpusEvent } from "../../rag/corpus-events.js";
import type { CorpusView } from "../../rag/corpus-service.js";
import type { FileRejection } from "../../rag/document-service.js";
import { parseSettingsOf } from "../../rag/ingest/parse-settings.js";
import type { OcrStatusView } from "../../rag/ocr-status.js";
import type { DocumentRecord } from "../../store/document-store.js";
import type { HybridFusion } from "../../rag/retrieval/score-fusion.js";
import type { SearchDefaults } from "../../domain/vocabulary.js";
import type { ScoredSetting } from "../../rag/retrieval/search-tuning.js";
import { MAX_TUNING_QUESTIONS, MIN_TUNING_QUESTIONS, type TuningResult } from "../../rag/search-tuning-service.js";
import type { TombstoneRecord } from "../../store/tombstone-catalog.js";
import { ListQuerySchema } from "./list-wire.js";
import { tombstoneObject } from "./tombstone-wire.js";

const Metadata = z.record(z.string().min(1).max(64), z.string().max(1024)).refine((m) => Object.keys(m).length <= 32, "at most 32 metadata keys");

/** Hybrid search's fusion for one request (Weaviate's `alpha` is `vector_weight` here). */
const FusionSchema = z
  .object({
    method: z.enum(["convex", "dbsf", "rrf"]).optional(),
    vector_weight: z.number().min(0).max(1).optional(),
    keyword_trust: z.enum(["auto", "squared", "linear", "language", "fixed"]).optional(),
  })
  .strict();

/**
 * A corpus's own search settings (`search_defaults`), used when a request does not say:
 * the mode and, for hybrid search, the fusion fields that replace the server's.
 */
const SearchDefaultsSchema = z
  .object({
    search: z.enum(["hybrid", "vector", "keyword"]).default("hybrid"),
    fusion: FusionSchema.optional(),
  })
  .strict()
  .refine((d) => d.search === "hybrid" || d.fusion === undefined, { message: "fusion applies to hybrid search only", path: ["fusion"] });

/** OCR languages: one to eight Tesseract codes (checked against the engine by the service). */
const OcrLanguagesSchema = z.array(z.string().min(1).max(32)).min(1).max(8);

export const CreateCorpusSchema = z
  .object({
    name: z.string().trim().min(1).max(200),
    chunking: z.enum(["semantic", "fixed", "paragraph"]).default("semantic"),
    embedding_model: z.string().min(1).max(256).optional(),
    /** Overrides what the model wants before queries and passages (default: from the catalog or the model family). */
    embedding_prompts: z.object({ query: z.string().max(500), document: z.string().max(500) }).strict().optional(),
    /** A rerank model its queries use by default. */
    rerank_model: z.string().min(1).max(256).nullable().optional(),
    /** How its searches run when a request does not say (absent or null: the server's defaults). */
    search_defaults: SearchDefaultsSchema.nullable().optional(),
    /** Languages its scans and images are read in by OCR (default eng + msa). */
    ocr_languages: OcrLanguagesSchema.optional(),
    retention_days: z.number().int().min(0).max(3650).default(30),
    metadata: Metadata.default({}),
  })
  .strict();

export const PatchCorpusSchema = z
  .object({
    name: z.string().trim().min(1).max(200).optional(),
    retention_days: z.number().int().min(0).max(3650).optional(),
    metadata: Metadata.optional(),
    /** A rerank model, or null for none. */
    rerank_model: z.string().min(1).max(256).nullable().optional(),
    /** Its search settings, or null for the server's defaults. */
    search_defaults: SearchDefaultsSchema.nullable().optional(),
    /** OCR languages for documents indexed from now on. */
    ocr_languages: OcrLanguagesSchema.optional(),
  })
  .strict()
  .refine((p) => Object.keys(p).length > 0, "send at least one of name, retention_days, metadata, rerank_model, search_defaults, ocr_languages");

/** The upload's `metadata` part: a JSON object applied to every file. */
export const UploadMetadataSchema = z.record(z.string().min(1).max(64), z.union([z.string().max(1024), z.number(), z.boolean(), z.null()])).refine((m) => Object.keys(m).length <= 32, "at most 32 metadata keys");

/**
 * `GET …/documents`: the list's paging, `status` to list only documents in one state
 * (`?status=failed`), `parent_document_id` to list the documents that came out of one (an
 * e-mail's attachments, a mailbox's messages, in their order in it), or `none` for only the
 * uploaded ones.
 */
export const DocumentListQuerySchema = ListQuerySchema.extend({
  status: z.enum(["queued", "processing", "indexed", "failed"]).optional(),
  parent_document_id: z.string().min(1).max(64).optional(),
}).strict();

/** `GET …/events`: `until=ready` ends the stream once nothing is queued or processing. */
export const CorpusEventsQuerySchema = z.object({ until: z.literal("ready").optional() }).strict();

/**
 * Reranking for one request: `true` uses the corpus's reranker, an object names a model
 * and how many fused candidates it rescores, `false` turns the corpus's reranker off.
 */
const RerankOptionSchema = z.union([
  z.boolean(),
  z
    .object({
      model: z.string().min(1).max(256).optional(),
      candidates: z.number().int().min(1).max(200).optional(),
    })
    .strict(),
]);

const QuestionText = z.string().trim().min(1, "must not be empty").max(8000);

/**
 * `/query` names its text `question` and `/search` names it `query`; each accepts the
 * other name as an alias, so one request body works on both. Sending both is refused.
 */
function questionOrQuery<T extends { question?: string | undefined; query?: string | undefined }>(body: T, ctx: z.RefinementCtx, primary: "question" | "query"): void {
  const alias = primary === "question" ? "query" : "question";
  if (body.question === undefined && body.query === undefined) ctx.addIssue({ code: "custom", path: [primary], message: `is required (${alias} is accepted as its alias)` });
  else if (body.question !== undefined && body.query !== undefined) ctx.addIssue({ code: "custom", path: [alias], message: `send either ${primary} or its alias ${alias}, not both` });
}

export const QuerySchema = z
  .object({
    question: QuestionText.optional(),
    query: QuestionText.optional(),
    top_k: z.number().int().min(1).max(50).default(5),
    include_citations: z.boolean().optional(),
    stream: z.boolean().default(false),
    model: z.string().min(1).max(256).optional(),
    temperature: z.number().min(0).max(2).optional(),
    max_tokens: z.number().int().min(1).optional(),
    filter: z.record(z.string().min(1).max(64), z.union([z.string(), z.number(), z.boolean()])).optional(),
    /** Default: the corpus's `search_defaults`, else hybrid. */
    search: z.enum(["hybrid", "vector", "keyword"]).optional(),
    fusion: FusionSchema.optional(),
    rerank: RerankOptionSchema.optional(),
  })
  .strict()
  .superRefine((body, ctx) => questionOrQuery(body, ctx, "question"))
  .transform(({ query, ...body }) => ({ ...body, question: (body.question ?? query)! }));

export const SearchSchema = z
  .object({
    query: QuestionText.optional(),
    question: QuestionText.optional(),
    top_k: z.number().int().min(1).max(100).default(5),
    filter: z.record(z.string().min(1).max(64), z.union([z.string(), z.number(), z.boolean()])).optional(),
    /** Default: the corpus's `search_defaults`, else hybrid. */
    search: z.enum(["hybrid", "vector", "keyword"]).optional(),
    fusion: FusionSchema.optional(),
    rerank: RerankOptionSchema.optional(),
  })
  .strict()
  .superRefine((body, ctx) => questionOrQuery(body, ctx, "query"))
  .transform(({ question, ...body }) => ({ ...body, query: (body.query ?? question)! }));

/** `POST …/search/tune`: questions with the documents that answer them (ids or filenames), and whether to store the best setting. */
export const TuneSearchSchema = z
  .object({
    questions: z
      .array(
        z
          .object({
            question: QuestionText,
            relevant: z.array(z.string().min(1).max(512)).min(1, "name at least one document that answers the question").max(100),
          })
          .strict(),
      )
      .min(MIN_TUNING_QUESTIONS, `at least ${MIN_TUNING_QUESTIONS} questions (two per half of the cross-validation; 20 or more give a steadier choice)`)
      .max(MAX_TUNING_QUESTIONS),
    apply: z.boolean().default(false),
  })
  .strict();

const settingObject = (s: ScoredSetting): Api.TunedSetting => ({
  search: s.search,
  fusion: s.fusion && fusionObject(s.fusion),
  ndcg_at_10: round4(s.ndcg),
  recall_at_10: round4(s.recall),
});
const round4 = (x: number) => Math.round(x * 1e4) / 1e4;

export const searchTuningObject = (r: TuningResult): Api.SearchTuning => ({
  object: "rag.search_tuning",
  corpus_id: r.corpus.id,
  questions: r.questions,
  current: settingObject(r.current),
  best: settingObject(r.best),
  held_out: { tuned_ndcg_at_10: round4(r.heldOut.tuned), current_ndcg_at_10: round4(r.heldOut.current) },
  settings: r.settings.map(settingObject),
  applied: r.applied,
  not_applied_reason: r.notApplied,
  search_defaults: r.corpus.searchDefaults && searchDefaultsObject(r.corpus.searchDefaults),
});

export const corpusObject = (c: CorpusView): Api.Corpus => ({
  id: c.id,
  object: "rag.corpus",
  name: c.name,
  chunking: c.chunking,
  embedding_model: c.embeddingModel,
  dimensions: c.dimensions,
  embedding_prompts: { query: c.embeddingPrompts.query, document: c.embeddingPrompts.document },
  rerank_model: c.rerankModel,
  search_defaults: c.searchDefaults && searchDefaultsObject(c.searchDefaults),
  ocr_languages: parseSettingsOf(c).ocrLanguages,
  status: c.status,
  document_counts: c.counts,
  chunk_count: c.chunkCount,
  retention_days: c.retentionDays,
  metadata: c.metadata,
  created_at: c.createdAt,
  updated_at: c.updatedAt,
});

export const ocrStatusObject = (s: OcrStatusView): Api.OcrStatus => ({
  object: "rag.ocr",
  available: s.available,
  engine: s.engine,
  version: s.version,
  languages: s.languages,
  default_languages: s.defaultLanguages,
  reason: s.reason,
  language_data: s.languageData.map((l) => ({ language: l.language, name: l.name, state: l.state, received: l.received, bytes: l.bytes })),
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
  parent_document_id: d.parentDocumentId ?? null,
  relation: d.parentDocumentId ? (d.relation ?? null) : null,
  position: d.parentDocumentId ? (d.position ?? null) : null,
  children: d.children ?? { attachments: 0, messages: 0 },
  ocr: d.ocr ? { engine: d.ocr.engine, languages: d.ocr.languages, pages: d.ocr.pages.map((p) => ({ ...p, reason: p.reason as OcrReason })) } : null,
});

type OcrReason = Api.DocumentOcr["pages"][number]["reason"];

export const uploadObject = (corpusId: string, documents: DocumentRecord[], rejected: FileRejection[]): Api.UploadResult => ({
  object: "rag.upload",
  corpus_id: corpusId,
  documents: documents.map(documentObject),
  rejected: rejected.map((r) => ({ filename: r.filename, error: r.error })),
});

/**
 * A retrieved passage on the wire; `cited` says whether the answer used it, `support` where
 * it supports the answer. `page` is the supporting passage's page when there is one, else
 * the first page (older clients open `page`).
 */
export const citationObject = (c: Citation, cited = false, support: AnswerCitation["support"] = null): Api.Citation => ({
  index: c.index,
  document_id: c.documentId,
  chunk_id: c.chunkId,
  filename: c.filename,
  text: c.text,
  score: c.score,
  page: support?.page ?? c.pageStart,
  page_start: c.pageStart,
  page_end: c.pageEnd,
  heading_path: c.headingPath,
  metadata: c.metadata,
  cited,
  support: support && { page: support.page, start: support.start, end: support.end },
});

const answerCitation = (c: AnswerCitation): Api.Citation => citationObject(c, c.cited, c.support);

const sentenceObject = (s: AnswerSentence): Api.AnswerSentence => ({ start: s.start, end: s.end, citations: s.citations, supported: s.supported });

export const corpusDeletedObject = (id: string, tombstone: TombstoneRecord): Api.CorpusDeleted => ({
  id,
  object: "rag.corpus.deleted",
  deleted: true,
  tombstone_expires_at: tombstone.expiresAt,
  tombstone: tombstoneObject(tombstone),
});

export const documentDeletedObject = (id: string, tombstone: TombstoneRecord): Api.DocumentDeleted => ({ id, object: "rag.document.deleted", deleted: true, tombstone: tombstoneObject(tombstone) });

/** What a finished answer adds to its text: citations marked cited or not, its sentences' sources, usage, why it ended. */
export interface AnswerEnding {
  citations: AnswerCitation[];
  sentences: AnswerSentence[];
  promptTokens: number;
  completionTokens: number;
  finishReason: FinishReason;
}

const relevanceObject = (r: RelevanceDecision): Api.AnswerRelevance => ({ decided_by: r.decidedBy, score: r.score, threshold: r.threshold, judge: r.judge });

const usageOf = (e: AnswerEnding) => ({ prompt_tokens: e.promptTokens, completion_tokens: e.completionTokens, total_tokens: e.promptTokens + e.completionTokens });

export const answerObject = (id: string, started: StartedQuery, answer: string, ending: AnswerEnding, createdAt: number): Api.Answer => ({
  id,
  object: "rag.answer",
  corpus_id: started.corpusId,
  model: started.model,
  answer,
  grounded: started.run !== null,
  relevance: relevanceObject(started.relevance),
  citations: ending.citations.map(answerCitation),
  sentences: ending.sentences.map(sentenceObject),
  usage: usageOf(ending),
  finish_reason: ending.finishReason,
  created_at: createdAt,
});

export const answerDeltaEvent = (id: string, delta: string): Api.AnswerStreamEvent => ({ object: "rag.answer.delta", id, delta });

export const answerCitationsEvent = (id: string, started: StartedQuery, ending: AnswerEnding): Api.AnswerStreamEvent => ({
  object: "rag.answer.citations",
  id,
  grounded: started.run !== null,
  relevance: relevanceObject(started.relevance),
  citations: ending.citations.map(answerCitation),
  sentences: ending.sentences.map(sentenceObject),
  usage: usageOf(ending),
  finish_reason: ending.finishReason,
});

export const searchResultObject = (found: Retrieval): Api.SearchResult => ({
  object: "list",
  data: found.citations.map((c) => citationObject(c)),
  relevant: found.relevant,
  best_similarity: found.bestSimilarity,
  evidence: {
    best_similarity: found.evidence.bestSimilarity,
    similarity_gap: found.evidence.similarityGap,
    keyword_coverage: found.evidence.keywordCoverage,
    unknown_term_share: found.evidence.unknownTermShare,
    missing_max_idf: found.evidence.missingMaxIdf,
    rerank_score: found.evidence.rerankScore,
  },
  reranked_by: found.reranked,
  search: found.search,
  fusion: found.fusion && fusionObject(found.fusion),
});

/** An indexing event for the `/events` stream (snapshots are sent by the route). */
export function corpusEventObject(corpusId: string, event: CorpusEvent): Api.CorpusEvent {
  if (event.type === "corpus.deleted") return { object: "rag.corpus.deleted", id: corpusId };
  if (event.type === "document.progress") return { object: "rag.document.progress", document_id: event.documentId, stage: event.stage, done: event.done, total: event.total, ocr: event.ocr === true };
  const timings = event.timings && {
    parse_ms: Math.round(event.timings.parseMs),
    chunk_ms: Math.round(event.timings.chunkMs),
    embed_ms: Math.round(event.timings.embedMs),
    embed_tokens: Math.round(event.timings.embedTokens),
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

/** The request's reranking, in the service's terms (undefined: the corpus's setting). */
export function rerankOf(rerank: z.infer<typeof RerankOptionSchema> | undefined): RerankChoice | undefined {
  if (rerank === undefined || rerank === true) return rerank === true ? { use: "corpus" } : undefined;
  if (rerank === false) return { use: "none" };
  return { use: rerank.model ? "model" : "corpus", ...(rerank.model ? { model: rerank.model } : {}), ...(rerank.candidates ? { candidates: rerank.candidates } : {}) };
}

/** The request's fusion, in the service's terms. */
/** A corpus's search settings on the wire (only the fusion fields it sets). */
export const searchDefaultsObject = (d: SearchDefaults): Api.SearchDefaults => ({
  search: d.search,
  ...(d.fusion ? { fusion: fusionObject(d.fusion) } : {}),
});

/** A fusion on the wire, with the fields it sets. */
export const fusionObject = (f: Partial<HybridFusion>): Api.FusionOption => ({
  ...(f.method ? { method: f.method } : {}),
  ...(f.vectorWeight !== undefined ? { vector_weight: f.vectorWeight } : {}),
  ...(f.keywordTrust ? { keyword_trust: f.keywordTrust } : {}),
});

/** `search_defaults` from a request: undefined (unchanged), null (the server's), or the settings. */
export function searchDefaultsOf(wire: z.infer<typeof SearchDefaultsSchema> | null | undefined): SearchDefaults | null | undefined {
  if (wire === undefined || wire === null) return wire;
  const fusion = fusionOf(wire.fusion);
  return { search: wire.search, ...(fusion && Object.keys(fusion).length > 0 ? { fusion } : {}) };
}

export function fusionOf(fusion: z.infer<typeof FusionSchema> | undefined): Partial<HybridFusion> | undefined {
  if (!fusion) return undefined;
  return {
    ...(fusion.method ? { method: fusion.method } : {}),
    ...(fusion.vector_weight !== undefined ? { vectorWeight: fusion.vector_weight } : {}),
    ...(fusion.keyword_trust ? { keywordTrust: fusion.keyword_trust } : {}),
  };
}
