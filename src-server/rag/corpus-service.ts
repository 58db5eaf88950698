/**
 * Corpora: create, read, update, delete, with status derived from their documents.
 * Corpora belong to a workspace; another workspace's corpus does not exist for the caller.
 */
import type { Principal } from "../domain/scopes.js";
import { invalidRequest, notFound } from "../errors.js";
import { newId, nowSeconds } from "../ids.js";
import type { EmbeddingPrompts, SearchDefaults } from "../domain/vocabulary.js";
import { modelFacts, type ModelEntry, type ModelRegistry } from "../models/model-registry.js";
import type { CorpusKeyring } from "../security/corpus-keyring.js";
import type { CorpusRecord, CorpusStore, DocumentCounts } from "../store/corpus-store.js";
import type { Page, PageRequest } from "../store/pagination.js";
import type { TombstoneRecord } from "../store/tombstone-catalog.js";
import type { ChunkingStrategy } from "./chunking/types.js";
import type { CorpusEvents } from "./corpus-events.js";
import type { CorpusIndexes } from "./retrieval/corpus-indexes.js";
import type { TombstoneService } from "./tombstone-service.js";

export type CorpusStatus = "empty" | "indexing" | "ready" | "failed";

export interface CorpusView extends CorpusRecord {
  status: CorpusStatus;
  counts: DocumentCounts;
  chunkCount: number;
}

export interface CreateCorpusInput {
  name: string;
  chunking: ChunkingStrategy;
  /** Default: the server's default embedding model (see `ModelRegistry.defaultName`). */
  embeddingModel?: string | undefined;
  /** Default: what the model wants (see `embeddingPromptsFor`). */
  embeddingPrompts?: EmbeddingPrompts | undefined;
  /** A `rerank` model its queries use by default (null or absent: none). */
  rerankModel?: string | null | undefined;
  /** How its searches run when a request does not say (null or absent: the server's defaults). */
  searchDefaults?: SearchDefaults | null | undefined;
  /** OCR languages (absent: the default, eng + msa). */
  ocrLanguages?: string[] | undefined;
  retentionDays: number;
  metadata: Record<string, string>;
}

/** What a corpus's settings update may change (undefined: unchanged; null: back to none / the server's). */
export interface CorpusPatch {
  name?: string | undefined;
  retentionDays?: number | undefined;
  metadata?: Record<string, string> | undefined;
  rerankModel?: string | null | undefined;
  searchDefaults?: SearchDefaults | null | undefined;
  ocrLanguages?: string[] | undefined;
}

/** Guide §2: empty (no documents), indexing (any pending), ready (none pending, one indexed), failed. */
export function deriveStatus(counts: DocumentCounts): CorpusStatus {
  if (counts.total === 0) return "empty";
  if (counts.queued + counts.processing > 0) return "indexing";
  return counts.indexed > 0 ? "ready" : "failed";
}

export interface CorpusServiceDeps {
  corpora: CorpusStore;
  keyring: CorpusKeyring;
  indexes: CorpusIndexes;
  /** Where deletions go: cold storage until the retention window ends. */
  tombstones: TombstoneService;
  events: CorpusEvents;
  registry: ModelRegistry;
  /** The configured default embedding model (`svc-embed-1024`). */
  defaultEmbeddingModel: string;
  /** The prompts a model wants before queries and passages (configuration, catalog, family). */
  promptsFor: (model: ModelEntry) => EmbeddingPrompts;
  /** Embeds a probe with a remote model whose width is not known yet (its upstream answers with vectors); null when it cannot say. */
  measureDimensions?: (model: ModelEntry) => Promise<number | null>;
  /** Checks OCR languages against the engine installed (`OcrStatusService.check`). */
  checkOcrLanguages?: (languages: string[]) => Promise<string[]>;
}

export class CorpusService {
  constructor(private readonly deps: CorpusServiceDeps) {}

  async create(principal: Principal, input: CreateCorpusInput): Promise<CorpusView> {
    const embeddingModel = input.embeddingModel ?? this.deps.registry.defaultName("embedding", this.deps.defaultEmbeddingModel);
    const model = this.deps.registry.resolve(embeddingModel, "embedding_model");
    if (model.type !== "embedding") {
      throw invalidRequest(`'${embeddingModel}' is a ${model.type} model; a corpus needs an embedding model (GET /v1/models lists each model's type)`, "model_not_embedding", "embedding_model");
    }
    // A remote embedder's width is configured, learnt from an earlier answer, or measured now.
    const dimensions = modelFacts(model).embeddingLength ?? (model.remote ? await this.deps.measureDimensions?.(model) : null);
    if (!dimensions) throw invalidRequest(`'${embeddingModel}' does not say how wide its embeddings are`, "model_not_supported", "embedding_model");
    const now = nowSeconds();
    const record: CorpusRecord = {
      id: newId("corp_"),
      workspaceId: principal.workspaceId,
      name: input.name,
      chunking: input.chunking,
      embeddingModel,
      dimensions,
      embeddingPrompts: input.embeddingPrompts ?? this.deps.promptsFor(model),
      rerankModel: input.rerankModel ? this.rerankModel(input.rerankModel) : null,
      searchDefaults: input.searchDefaults ?? null,
      ocrLanguages: input.ocrLanguages ? await this.ocrLanguages(input.ocrLanguages) : null,
      retentionDays: input.retentionDays,
      metadata: input.metadata,
      createdAt: now,
      updatedAt: now,
    };
    // The key is stored first (insert-if-absent), then claimed by the corpus in one transaction.
    const key = await this.deps.keyring.create(record.id);
    await this.deps.corpora.insert(record, key);
    return this.view(record);
  }

  /** The corpus, or 404 when it is not in the caller's workspace. */
  async record(principal: Principal, id: string): Promise<CorpusRecord> {
    const corpus = await this.deps.corpora.get(principal.workspaceId, id);
    if (!corpus) throw notFound(`No corpus '${id}'`, "corpus_not_found", "corpus_id");
    return corpus;
  }

  async get(principal: Principal, id: string): Promise<CorpusView> {
    return this.view(await this.record(principal, id));
  }

  async list(principal: Principal, page: PageRequest): Promise<Page<CorpusView>> {
    const result = await this.deps.corpora.list(principal.workspaceId, page);
    const data: CorpusView[] = [];
    for (const c of result.data) data.push(await this.view(c));
    return { data, hasMore: result.hasMore };
  }

  async update(principal: Principal, id: string, patch: CorpusPatch): Promise<CorpusView> {
    await this.record(principal, id);
    const { rerankModel, ocrLanguages, ...rest } = patch;
    await this.deps.corpora.update(
      id,
      { ...rest, ...(rerankModel !== undefined ? { rerankModel: rerankModel === null ? null : this.rerankModel(rerankModel) } : {}), ...(ocrLanguages !== undefined ? { ocrLanguages: await this.ocrLanguages(ocrLanguages) } : {}) },
      nowSeconds(),
    );
    return this.get(principal, id);
  }

  private async ocrLanguages(languages: string[]): Promise<string[]> {
    return this.deps.checkOcrLanguages ? this.deps.checkOcrLanguages(languages) : languages;
  }

  /** `name` when it is a rerank model (404 unknown, 400 `model_not_rerank` for another type). */
  private rerankModel(name: string): string {
    const model = this.deps.registry.resolve(name, "rerank_model");
    if (model.type !== "rerank") {
      throw invalidRequest(`'${name}' is a ${model.type} model; a corpus's reranker must be a rerank model (a cross-encoder; GET /v1/models lists each model's type)`, "model_not_rerank", "rerank_model");
    }
    return name;
  }

  /**
   * Irreversible: documents, chunks, vectors and originals move, sealed as stored, to a
   * tombstone in cold storage and are deleted from primary storage (on SQLite also wiped:
   * secure_delete, pages reclaimed); the in-memory index is dropped. The tombstone and the wrapped corpus key
   * are destroyed by the purge once the retention window ends (see TombstoneService).
   */
  async delete(principal: Principal, id: string): Promise<{ id: string; tombstone: TombstoneRecord }> {
    const corpus = await this.record(principal, id);
    const tombstone = await this.deps.tombstones.buryCorpus(corpus);
    await this.deps.indexes.drop(id);
    this.deps.keyring.forget(id);
    this.deps.events.publish(id, { type: "corpus.deleted" });
    return { id, tombstone };
  }

  async view(record: CorpusRecord): Promise<CorpusView> {
    const counts = await this.deps.corpora.counts(record.id);
    return { ...record, status: deriveStatus(counts), counts, chunkCount: await this.deps.corpora.chunkCount(record.id) };
  }
}
