/**
 * OpenAI's vector stores, which ARE corpora (`vector-store-ids.ts`): creating one creates a
 * corpus (shown in the workbench, searchable through `/v1/rag/...` too), deleting one deletes
 * the corpus (its documents to tombstones; the files stay until deleted), and every corpus
 * of the workspace is listed as a vector store. What a corpus lacks, an expiry policy and
 * the last activity, is kept beside it (`VectorStoreStore`).
 *
 * Expiry: a store with `expires_after` expires `days` after its last activity (creation,
 * an attachment, a search). Then its documents are deleted as any deletion is (tombstones
 * kept for the corpus's retention, then destroyed) and the store stays, `expired`: it can
 * be read, renamed and deleted, not searched or filled. Enforced when the store is next
 * touched and by the hourly sweep (`expireDue`), by the service's clock.
 */
import type { Clock } from "../../domain/clock.js";
import { secondsOf } from "../../domain/clock.js";
import type { Principal } from "../../domain/scopes.js";
import { ServiceError, invalidRequest, notFound } from "../../errors.js";
import type { CorpusRecord, CorpusStore } from "../../store/corpus-store.js";
import type { DocumentStore } from "../../store/document-store.js";
import type { Page, PageRequest } from "../../store/pagination.js";
import type { FileCounts, VectorStoreSettings, VectorStoreStore } from "../../store/vector-store-store.js";
import type { CorpusService, CorpusView } from "../corpus-service.js";
import type { DocumentService } from "../document-service.js";
import type { AttachItem, FileAttacher } from "./file-attacher.js";
import type { FileService } from "./file-service.js";
import { corpusIdOf, vectorStoreIdOf } from "./vector-store-ids.js";

/** How long a corpus made through the API keeps the tombstones of what is deleted (the corpora's default). */
/** The corpus name of a vector store created without one. */
export const UNNAMED_STORE = "Untitled vector store";

const RETENTION_DAYS = 30;

export type VectorStoreStatus = "expired" | "in_progress" | "completed";

export interface VectorStoreView {
  id: string;
  corpus: CorpusView;
  status: VectorStoreStatus;
  fileCounts: FileCounts;
  usageBytes: number;
  lastActiveAt: number;
  expiresAfterDays: number | null;
  /** Unix seconds; null without an expiry policy. */
  expiresAt: number | null;
}

/** A store as the services below it use it: its corpus and its settings. */
export interface OpenedStore {
  id: string;
  corpus: CorpusRecord;
  settings: VectorStoreSettings | undefined;
  expired: boolean;
}

export interface CreateVectorStoreInput {
  name: string;
  description: string | null;
  metadata: Record<string, string>;
  expiresAfterDays: number | null;
  files: AttachItem[];
}

/** What a modification changes (undefined: unchanged; `expiresAfterDays` null: no expiry any more). */
export interface VectorStorePatch {
  name?: string | undefined;
  metadata?: Record<string, string> | undefined;
  expiresAfterDays?: number | null | undefined;
}

/** OpenAI's wording for a store the caller has no such store. */
export const noSuchVectorStore = (id: string) => notFound(`No vector store found with id '${id}'.`, "vector_store_not_found", "vector_store_id");

export interface VectorStoreServiceDeps {
  corpora: CorpusService;
  /** Corpora of every workspace (the expiry sweep). */
  corpusStore: CorpusStore;
  documents: DocumentService;
  documentStore: DocumentStore;
  files: FileService;
  attacher: FileAttacher;
  store: VectorStoreStore;
  clock: Clock;
}

/** Acting for the system inside one workspace (the expiry sweep deletes a store's documents). */
const systemIn = (workspaceId: string): Principal => ({ kind: "api_key", workspaceId, keyId: "system", keyName: "vector store expiry", scopes: new Set(["rag.read", "rag.write"]) });

export class VectorStoreService {
  constructor(private readonly deps: VectorStoreServiceDeps) {}

  now(): number {
    return secondsOf(this.deps.clock);
  }

  /** The store in the caller's workspace (404 otherwise), its expiry enforced if it is due. */
  async open(principal: Principal, vectorStoreId: string): Promise<OpenedStore> {
    const corpusId = corpusIdOf(vectorStoreId);
    let corpus: CorpusRecord | null = null;
    try {
      if (corpusId) corpus = await this.deps.corpora.record(principal, corpusId);
    } catch (error) {
      if (!(error instanceof ServiceError && error.kind === "not_found")) throw error;
    }
    if (!corpus) throw noSuchVectorStore(vectorStoreId);
    return this.opened(corpus, await this.deps.store.settings(corpus.id));
  }

  /** `open`, refusing a store that expired (searching it, attaching to it). */
  async openLive(principal: Principal, vectorStoreId: string): Promise<OpenedStore> {
    const opened = await this.open(principal, vectorStoreId);
    if (opened.expired) throw invalidRequest(`Vector store ${opened.id} is expired. Create a new vector store and try again.`, "vector_store_expired", "vector_store_id");
    return opened;
  }

  private async opened(corpus: CorpusRecord, settings: VectorStoreSettings | undefined): Promise<OpenedStore> {
    let current = settings;
    if (current && current.expiredAt === null && this.due(current)) current = await this.expire(corpus, current);
    return { id: vectorStoreIdOf(corpus.id), corpus, settings: current, expired: current?.expiredAt != null };
  }

  private due(settings: VectorStoreSettings): boolean {
    return settings.expiresAfterDays !== null && settings.lastActiveAt + settings.expiresAfterDays * 86400 <= this.now();
  }

  /** Deletes the store's documents (tombstones, as any deletion), then marks it expired. */
  private async expire(corpus: CorpusRecord, settings: VectorStoreSettings): Promise<VectorStoreSettings> {
    const principal = systemIn(corpus.workspaceId);
    for (const document of await this.deps.documentStore.ofCorpus(corpus.id)) {
      try {
        await this.deps.documents.delete(principal, corpus.id, document.id);
      } catch (error) {
        if (!(error instanceof ServiceError && error.kind === "not_found")) throw error;
      }
    }
    const at = this.now();
    await this.deps.store.markExpired(corpus.id, at);
    return { ...settings, expiredAt: at };
  }

  /** Enforces every expiry that is due (the hourly sweep); returns the corpora expired. */
  async expireDue(): Promise<string[]> {
    const expired: string[] = [];
    for (const corpusId of await this.deps.store.dueToExpire(this.now())) {
      const [corpus, settings] = await Promise.all([this.deps.corpusStore.getAny(corpusId), this.deps.store.settings(corpusId)]);
      if (!corpus || !settings || settings.expiredAt !== null) continue;
      await this.expire(corpus, settings);
      expired.push(corpusId);
    }
    return expired;
  }

  /** Creates the store (a corpus of the server's default embedding model, Pustaka's own chunking) and attaches its files. */
  async create(principal: Principal, input: CreateVectorStoreInput): Promise<VectorStoreView> {
    // Every file must exist before anything is created: a bad id leaves nothing behind.
    for (const item of input.files) await this.deps.files.get(principal, item.fileId);
    // A store made without a name still shows as something in the workbench's corpus list.
    const corpus = await this.deps.corpora.create(principal, { name: input.name.trim() || UNNAMED_STORE, chunking: "semantic", retentionDays: RETENTION_DAYS, metadata: input.metadata });
    const now = this.now();
    const settings: VectorStoreSettings = { corpusId: corpus.id, description: input.description, expiresAfterDays: input.expiresAfterDays, lastActiveAt: now, expiredAt: null };
    await this.deps.store.putSettings(settings);
    for (const item of input.files) await this.deps.attacher.attach(principal, corpus, item, null, now);
    return this.view({ id: vectorStoreIdOf(corpus.id), corpus, settings, expired: false });
  }

  async get(principal: Principal, vectorStoreId: string): Promise<VectorStoreView> {
    return this.view(await this.open(principal, vectorStoreId));
  }

  /** A page of the workspace's stores: its corpora, cursors written as vector store ids. */
  async list(principal: Principal, page: PageRequest): Promise<Page<VectorStoreView>> {
    // A cursor that is no vector store id names nothing: the page is empty, as for any unknown cursor.
    const cursor = (id: string | undefined) => (id === undefined ? undefined : (corpusIdOf(id) ?? id));
    const corpora = await this.deps.corpora.list(principal, { ...page, after: cursor(page.after), before: cursor(page.before) });
    const settings = await this.deps.store.settingsOf(corpora.data.map((c) => c.id));
    const data: VectorStoreView[] = [];
    for (const corpus of corpora.data) data.push(await this.view(await this.opened(corpus, settings.get(corpus.id))));
    return { data, hasMore: corpora.hasMore };
  }

  async update(principal: Principal, vectorStoreId: string, patch: VectorStorePatch): Promise<VectorStoreView> {
    const opened = await this.open(principal, vectorStoreId);
    if (patch.name !== undefined || patch.metadata !== undefined) await this.deps.corpora.update(principal, opened.corpus.id, { name: patch.name, metadata: patch.metadata });
    if (patch.expiresAfterDays !== undefined) {
      // The anchor stays the last activity (OpenAI's `last_active_at`); a corpus that had no settings was last active when it last changed.
      const base = opened.settings ?? { corpusId: opened.corpus.id, description: null, expiresAfterDays: null, lastActiveAt: opened.corpus.updatedAt, expiredAt: null };
      await this.deps.store.putSettings({ ...base, expiresAfterDays: patch.expiresAfterDays });
    }
    return this.get(principal, vectorStoreId);
  }

  /** Deletes the corpus: its documents, chunks and originals to tombstones; the files stay. */
  async delete(principal: Principal, vectorStoreId: string): Promise<{ id: string; corpusId: string }> {
    const opened = await this.open(principal, vectorStoreId);
    await this.deps.corpora.delete(principal, opened.corpus.id);
    return { id: opened.id, corpusId: opened.corpus.id };
  }

  /** Whether anything in the store is indexed yet (searching an empty store embeds nothing). */
  async hasIndexed(opened: OpenedStore): Promise<boolean> {
    return (await this.deps.corpora.view(opened.corpus)).counts.indexed > 0;
  }

  /** Activity now (a search, an attachment): expiry counts from here. */
  async touch(opened: OpenedStore): Promise<void> {
    if (opened.settings) await this.deps.store.touch(opened.corpus.id, this.now());
  }

  async view(opened: OpenedStore): Promise<VectorStoreView> {
    const corpus = await this.deps.corpora.view(opened.corpus);
    const settings = opened.settings;
    const lastActiveAt = settings?.lastActiveAt ?? corpus.updatedAt;
    const expiresAfterDays = settings?.expiresAfterDays ?? null;
    const pending = corpus.counts.queued + corpus.counts.processing > 0;
    return {
      id: opened.id,
      corpus,
      status: opened.expired ? "expired" : pending ? "in_progress" : "completed",
      fileCounts: await this.deps.store.counts({ corpusId: corpus.id }),
      usageBytes: await this.deps.store.usageBytes(corpus.id),
      lastActiveAt,
      expiresAfterDays,
      expiresAt: expiresAfterDays === null ? null : (settings?.expiredAt ?? lastActiveAt + expiresAfterDays * 86400),
    };
  }
}
