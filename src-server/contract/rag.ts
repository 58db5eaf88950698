/** The API contract: corpora, documents, uploads, indexing events, search and grounded answers, tombstones of deletions. Types only. */
import type { Usage } from "./common.js";
import type { FinishReason } from "./inference.js";

export type ChunkingStrategy = "semantic" | "fixed" | "paragraph";
export type CorpusStatus = "empty" | "indexing" | "ready" | "failed";
export type DocumentStatus = "queued" | "processing" | "indexed" | "failed";
export type SearchMode = "hybrid" | "vector" | "keyword";

/** A corpus's own search settings, used when a request does not say (fusion: hybrid only). */
export interface SearchDefaults {
  search: SearchMode;
  fusion?: FusionOption;
}

export interface DocumentCounts {
  queued: number;
  processing: number;
  indexed: number;
  failed: number;
  total: number;
}

export interface Corpus {
  id: string;
  object: "rag.corpus";
  name: string;
  chunking: ChunkingStrategy;
  embedding_model: string;
  dimensions: number;
  /** What the chunks were embedded with and what queries get (e.g. multilingual-e5's `query: ` / `passage: `). */
  embedding_prompts: { query: string; document: string };
  /** The reranker its queries use unless they say otherwise (null: none). */
  rerank_model: string | null;
  /** How its searches run when a request does not say (null: the server's defaults; set by hand or by `POST …/search/tune`). */
  search_defaults: SearchDefaults | null;
  /** Languages its scanned pages and images are read in by OCR (Tesseract codes, e.g. `eng`, `msa`). */
  ocr_languages: string[];
  status: CorpusStatus;
  document_counts: DocumentCounts;
  chunk_count: number;
  /** Days tombstones of deleted data are kept before their key is destroyed. */
  retention_days: number;
  metadata: Record<string, string>;
  created_at: number;
  updated_at: number;
}

export interface CreateCorpusRequest {
  name: string;
  chunking?: ChunkingStrategy;
  embedding_model?: string;
  /** Overrides the prompts the model wants (default: from the catalog or the model family). */
  embedding_prompts?: { query: string; document: string };
  rerank_model?: string | null;
  search_defaults?: SearchDefaults | null;
  /** OCR languages (default `["eng", "msa"]`); each must be installed (`GET /v1/rag/ocr`). */
  ocr_languages?: string[];
  retention_days?: number;
  metadata?: Record<string, string>;
}

export interface PatchCorpusRequest {
  name?: string;
  rerank_model?: string | null;
  search_defaults?: SearchDefaults | null;
  /** Applies to documents indexed from then on (re-upload a scan to read it again). */
  ocr_languages?: string[];
  retention_days?: number;
  metadata?: Record<string, string>;
}

export type TombstoneKind = "corpus" | "document";
/** `deleting`: being copied to cold storage (still in primary); `retained`: wiped from primary, kept cold until `expires_at`; `purging`/`purged`: being destroyed/destroyed. */
export type TombstoneStatus = "deleting" | "retained" | "purging" | "purged";

/** What a deletion left in cold storage, sealed under the corpus key, until its retention window ends. */
export interface Tombstone {
  /** The deleted corpus's or document's id. */
  id: string;
  object: "rag.tombstone";
  kind: TombstoneKind;
  workspace_id: string;
  corpus_id: string;
  document_id: string | null;
  status: TombstoneStatus;
  documents: number;
  chunks: number;
  /** Bytes of ciphertext kept: chunk text and vectors, stored originals, the sealed record manifest. */
  bytes: number;
  deleted_at: number;
  /** From then on the purge destroys the tombstone (and, for a corpus, its data key). */
  expires_at: number;
}

export interface CorpusDeleted {
  id: string;
  object: "rag.corpus.deleted";
  deleted: true;
  /** When the tombstone and the corpus key are destroyed and its data becomes unrecoverable. */
  tombstone_expires_at: number;
  tombstone: Tombstone;
}

/** `POST /v1/admin/tombstones/purge`: what the purge destroyed. */
export interface TombstonePurge {
  object: "rag.tombstone.purge";
  purged_at: number;
  /** Tombstones destroyed (status `purged`). */
  purged: Tombstone[];
  /** Deleted corpora whose wrapped data key was destroyed (crypto-shredded). */
  keys_destroyed: string[];
}

export interface ErrorDetail {
  code: string;
  message: string;
}

export interface RagDocument {
  id: string;
  object: "rag.document";
  corpus_id: string;
  filename: string;
  content_type: string;
  bytes: number;
  sha256: string;
  status: DocumentStatus;
  error: ErrorDetail | null;
  page_count: number | null;
  chunk_count: number;
  metadata: Record<string, unknown>;
  created_at: number;
  indexed_at: number | null;
  /** The document this one came out of (same corpus): the e-mail it was attached to, the mailbox it was in; null for an upload. */
  parent_document_id: string | null;
  /** How it relates to that document; null for an upload. */
  relation: "attachment" | "message" | null;
  /** Its place in that document, from 0 (a mailbox's messages in mailbox order); null for an upload. */
  position: number | null;
  /** How many documents came out of this one (`GET …/documents?parent_document_id=<id>` lists them). */
  children: { attachments: number; messages: number };
  /** Which pages OCR read (scans, images) and how sure it was; null when every page had a text layer. */
  ocr: DocumentOcr | null;
}

/** A document's OCR, without its text (the words of a page: `GET …/pages/{n}/ocr`). */
export interface DocumentOcr {
  engine: string;
  languages: string[];
  pages: {
    page: number;
    /** Why OCR read it: no text layer, too little text, a text layer of garbage, or an image file. */
    reason: "no_text_layer" | "too_little_text" | "garbled_text_layer" | "image";
    /** Mean word confidence, 0–100. */
    confidence: number;
    words: number;
    /** Degrees the page was turned to straighten it (absent: it was straight). */
    deskewed?: number;
  }[];
}

/** `GET /v1/rag/corpora/{id}/documents/{doc_id}/pages/{n}/ocr`. */
export interface OcrPage {
  object: "rag.ocr_page";
  document_id: string;
  page: number;
  /** The page image's size in pixels: the frame of the boxes. */
  width: number;
  height: number;
  confidence: number;
  /** In reading order; `box` is `[left, top, width, height]` in pixels. */
  words: { text: string; box: [number, number, number, number]; confidence: number }[];
}

/** `GET /v1/rag/ocr`: whether scans and images can be read here, and in which languages. */
export interface OcrStatus {
  object: "rag.ocr";
  available: boolean;
  /** The engine reading pages: Tesseract installed on the system, or Tesseract in WebAssembly inside Pustaka; null when none. */
  engine: "tesseract" | "tesseract-wasm" | null;
  version: string | null;
  /** Languages that can be read now. */
  languages: string[];
  /** What new corpora use. */
  default_languages: string[];
  /** Why OCR is not available, and what to install or fetch (null when it is). */
  reason: string | null;
  /** The built-in engine's language data (for machines without Tesseract): fetch one with `POST /v1/rag/ocr/languages/{language}`. */
  language_data: { language: string; name: string; state: "installed" | "missing" | "fetching"; received: number; bytes: number }[];
}

export interface DocumentDeleted {
  id: string;
  object: "rag.document.deleted";
  deleted: true;
  tombstone: Tombstone;
}

export interface FileRejection {
  filename: string;
  error: ErrorDetail;
}

/** `202` of an upload; with a 4xx `error` beside it when nothing was accepted. */
export interface UploadResult {
  object: "rag.upload";
  corpus_id: string;
  documents: RagDocument[];
  rejected: FileRejection[];
}

/** Events of `GET /v1/rag/corpora/{id}/events` (SSE `data:` payloads). */
/** The last event of `GET …/events?until=ready` (`event: end`): the corpus is ready, every document failed, or it was deleted. */
export interface CorpusEventsEnd {
  object: "rag.corpus.events.end";
  reason: "ready" | "failed" | "deleted";
}

export type CorpusEvent =
  | { object: "rag.corpus.snapshot"; corpus: Corpus }
  | { object: "rag.corpus.deleted"; id: string }
  /** `ocr`: while parsing, `done` of `total` counts the pages read by OCR (of those that need it). */
  | { object: "rag.document.progress"; document_id: string; stage: "parsing" | "chunking" | "embedding" | "storing"; done: number; total: number; ocr: boolean }
  | {
      object: "rag.document.status";
      document_id: string;
      status: DocumentStatus;
      error: ErrorDetail | null;
      chunk_count: number;
      timings?: { parse_ms: number; chunk_ms: number; embed_ms: number; embed_tokens: number; store_ms: number; pages: number | null };
    };

export interface Citation {
  /** The `[n]` the answer uses for this source. */
  index: number;
  document_id: string;
  chunk_id: string;
  filename: string;
  text: string;
  score: number;
  /**
   * The page to open (PDF): the page of the passage that supports the answer
   * (`support.page`) when there is one, else the passage's first page (`page_start`).
   */
  page: number | null;
  /** First and last page the passage spans (PDF); null for formats without pages. */
  page_start: number | null;
  page_end: number | null;
  /** Enclosing headings of the passage, outermost first. */
  heading_path: string[];
  metadata: Record<string, unknown>;
  /** Whether the answer uses this source: a `[n]` marker names it or a sentence rests on it. */
  cited: boolean;
  /** Where in `text` the source supports the answer; null when it supports nothing (and in search results). */
  support: CitationSupport | null;
}

/** The passage of a citation's text that supports the answer. */
export interface CitationSupport {
  /** Page the passage begins on (PDF); null for formats without pages. */
  page: number | null;
  /** Character offsets into the citation's `text` (UTF-16 code units, end exclusive). */
  start: number;
  end: number;
}

/** A sentence of an answer and the sources that support it. */
export interface AnswerSentence {
  /** Character offsets into `answer` (UTF-16 code units, end exclusive), the sentence's own `[n]` markers included. */
  start: number;
  end: number;
  /** `index` of each citation that supports the sentence (those its markers name when none does), ascending. */
  citations: number[];
  /** False when no cited source holds what the sentence says (flag it to the reader). */
  supported: boolean;
}

export interface QueryRequest {
  question: string;
  top_k?: number;
  include_citations?: boolean;
  stream?: boolean;
  model?: string;
  temperature?: number;
  max_tokens?: number;
  filter?: Record<string, string | number | boolean>;
  search?: SearchMode;
  fusion?: FusionOption;
  rerank?: RerankOption;
}

/** Hybrid fusion for one request: method and the vector signal's weight (0–1). */
export interface FusionOption {
  method?: "convex" | "dbsf" | "rrf";
  vector_weight?: number;
  /** How the keyword weight adapts to the question (see docs/retrieval.md, "Hybrid search"). */
  keyword_trust?: "auto" | "squared" | "linear" | "language" | "fixed";
}

/** `true`: the corpus's reranker; `false`: none; or a rerank model and how many fused candidates it rescores. */
export type RerankOption = boolean | { model?: string; candidates?: number };

export interface Answer {
  id: string;
  object: "rag.answer";
  corpus_id: string;
  model: string;
  answer: string;
  /** False when the corpus holds nothing relevant and the answer says so. */
  grounded: boolean;
  /** How `grounded` was decided. */
  relevance: AnswerRelevance;
  citations: Citation[];
  /** The answer's sentences and their sources; empty when `grounded` is false. */
  sentences: AnswerSentence[];
  usage: Usage;
  finish_reason: FinishReason;
  created_at: number;
}

/**
 * The relevance gate's decision: `similarity` (nothing close enough, or nothing found),
 * `gate` (the fitted gate over retrieval evidence and the chat model's own judgement),
 * `none` (keyword mode: whatever matched is answered).
 */
export interface AnswerRelevance {
  decided_by: "similarity" | "gate" | "none";
  /** The gate's probability that the corpus answers the question, and the threshold it was held to. */
  score: number | null;
  threshold: number | null;
  /** The chat model's probability that the sources hold the answer (null when it was not asked). */
  judge: number | null;
}

/** Events of a streamed query: deltas, then one citations event that ends the stream (or an error). */
export type AnswerStreamEvent =
  | { object: "rag.answer.delta"; id: string; delta: string }
  | { object: "rag.answer.citations"; id: string; grounded: boolean; relevance: AnswerRelevance; citations: Citation[]; sentences: AnswerSentence[]; usage: Usage; finish_reason: FinishReason };

export interface SearchRequest {
  /** `question` is accepted as its alias. */
  query: string;
  top_k?: number;
  filter?: Record<string, string | number | boolean>;
  search?: SearchMode;
  fusion?: FusionOption;
  rerank?: RerankOption;
}

/** `POST /v1/rag/corpora/{id}/search/tune`: a corpus's judged questions. */
export interface TuneSearchRequest {
  /** 4–500 questions, each with the documents (ids or filenames) that answer it. */
  questions: { question: string; relevant: string[] }[];
  /** Store the best setting as the corpus's `search_defaults` when it beats the settings in force on held-out questions (default false). */
  apply?: boolean;
}

/** A search setting with its mean scores on the tuning questions (documents ranked by their best passage). */
export interface TunedSetting {
  search: SearchMode;
  fusion: FusionOption | null;
  ndcg_at_10: number;
  recall_at_10: number;
}

export interface SearchTuning {
  object: "rag.search_tuning";
  corpus_id: string;
  questions: number;
  /** The settings in force before tuning (the corpus's `search_defaults`, else the server's). */
  current: TunedSetting;
  best: TunedSetting;
  /** Two-fold cross-validation: the setting chosen on one half of the questions, scored on the other; the settings in force on all. */
  held_out: { tuned_ndcg_at_10: number; current_ndcg_at_10: number };
  /** Every setting tried, best first. */
  settings: TunedSetting[];
  applied: boolean;
  /** Why `best` was not stored: not asked, it is what is in force, or it did not beat it on held-out questions. */
  not_applied_reason: "not_asked" | "already_best" | "did_not_hold" | null;
  /** The corpus's search settings after tuning. */
  search_defaults: SearchDefaults | null;
}

export interface SearchResult {
  object: "list";
  /** Retrieved passages; `cited` is false and `support` null (there is no answer). */
  data: Citation[];
  /** False when nothing in the corpus is close enough to the query. */
  relevant: boolean;
  best_similarity: number | null;
  /** What the relevance decision was made from (see docs/retrieval.md, "Not in the corpus"). */
  evidence: RelevanceEvidence;
  /** The rerank model that ordered `data` (its scores are then `score`), or null. */
  reranked_by: string | null;
  /** The mode searched and, for hybrid search, the fusion used (null otherwise): the request's, else the corpus's `search_defaults`, else the server's. */
  search: SearchMode;
  fusion: FusionOption | null;
}

export interface RelevanceEvidence {
  /** Cosine similarity of the closest chunk (null in keyword mode). */
  best_similarity: number | null;
  /** The closest chunk's similarity minus the mean of the 20 closest. */
  similarity_gap: number | null;
  /** IDF-weighted share of the query's words found in the best single result (null: no words to match). */
  keyword_coverage: number | null;
  /** IDF-weighted share of the query's words that no passage of the corpus contains. */
  unknown_term_share: number | null;
  /** How rare (0–1) the rarest query word is that no result contains. */
  missing_max_idf: number | null;
  /** The reranker's score (0–1) of the best passage, when a reranker ordered them. */
  rerank_score: number | null;
}

/** `GET /v1/rag/corpora/{id}/chunks/{chunk_id}`: a cited passage with the text around it. */
export interface ChunkContext {
  id: string;
  object: "rag.chunk";
  document_id: string;
  filename: string;
  content_type: string;
  index: number;
  text: string;
  page_start: number | null;
  page_end: number | null;
  heading_path: string[];
  /** The passages just before and after it in the document (null at either end). */
  before: string | null;
  after: string | null;
}

/**
 * A corpus bundle received and verified, not yet imported (`POST /v1/rag/bundles/imports`):
 * who signed it and what it holds, for a person to check before `…/commit` writes it.
 */
export interface BundleImport {
  id: string;
  object: "rag.bundle_import";
  status: "verified";
  /** Of the bundle as received (encrypted). */
  bytes: number;
  created_at: number;
  /** After this it is removed unimported. */
  expires_at: number;
  /** The exporting instance's Ed25519 key: compare `key_id` with what its owner reads on theirs (`GET /v1/rag/bundles/recipient`). */
  signer: { key_id: string; public_key: string };
  source: { instance: string; exported_by: string; exported_at: number; app_version: string; corpus_name: string };
  counts: { documents: number; passages: number; original_bytes: number };
  /** The model the passages were embedded with; `local`: the model here with the same file (sha256), or null when there is none. */
  embedding_model: { name: string; sha256: string | null; dimensions: number; local: string | null };
  /** `recipient`: made for this instance's key; `passphrase`: opened with one (give it again to commit). */
  encrypted_for: "passphrase" | "recipient";
}

/** `GET /v1/rag/bundles/recipient`: what a sender encrypts a bundle for, and this instance's signing key. */
export interface BundleRecipient {
  object: "rag.bundle_recipient";
  /** age X25519 recipient (`age1…`). */
  recipient: string;
  /** The key this instance signs bundles (and audit exports) with. */
  signer: { key_id: string; public_key: string };
}
