/**
 * The files of a vector store (`/v1/vector_stores/{id}/files`) and batches of them
 * (`/file_batches`): a vector-store file is a document of the corpus, its status read from
 * the document's indexing (queued or processing → `in_progress`, indexed → `completed`,
 * failed → `failed` with `last_error`); a batch is one upload of several files, `cancelled`
 * when asked (what was still indexing is stopped and deleted).
 */
import type { Principal } from "../../domain/scopes.js";
import { ServiceError, invalidRequest, notFound } from "../../errors.js";
import type { Page, PageRequest } from "../../store/pagination.js";
import type { AttachmentView, Attributes, BatchRecord, FileCounts, VectorStoreFileStatus, VectorStoreStore } from "../../store/vector-store-store.js";
import type { SourceService } from "../answer/source-service.js";
import type { AttachItem, FileAttacher } from "./file-attacher.js";
import type { FileService } from "./file-service.js";
import { newBatchId } from "./vector-store-ids.js";
import type { OpenedStore, VectorStoreService } from "./vector-store-service.js";

export type BatchStatus = "in_progress" | "completed" | "cancelled" | "failed";

export interface BatchView {
  id: string;
  vectorStoreId: string;
  createdAt: number;
  status: BatchStatus;
  fileCounts: FileCounts;
}

/** The parsed text of a vector-store file: one part per page of a paged document, else one. */
export interface FileContent {
  fileId: string;
  filename: string;
  parts: string[];
}

export interface VectorStoreFileServiceDeps {
  stores: VectorStoreService;
  files: FileService;
  attacher: FileAttacher;
  store: VectorStoreStore;
  sources: SourceService;
}

/** OpenAI's wording for a file not in the store. */
const noSuchStoreFile = (fileId: string, store: OpenedStore) => notFound(`No file found with id '${fileId}' in vector store '${store.id}'.`, "vector_store_file_not_found", "file_id");

export class VectorStoreFileService {
  constructor(private readonly deps: VectorStoreFileServiceDeps) {}

  /** Attaches one file (status `in_progress` while it indexes). */
  async attach(principal: Principal, vectorStoreId: string, item: AttachItem): Promise<{ store: OpenedStore; file: AttachmentView }> {
    const store = await this.deps.stores.openLive(principal, vectorStoreId);
    const file = await this.deps.attacher.attach(principal, store.corpus, item, null, this.deps.stores.now());
    await this.deps.stores.touch(store);
    return { store, file };
  }

  async get(principal: Principal, vectorStoreId: string, fileId: string): Promise<{ store: OpenedStore; file: AttachmentView }> {
    const store = await this.deps.stores.open(principal, vectorStoreId);
    const file = await this.deps.store.attachment(store.corpus.id, fileId);
    if (!file) throw noSuchStoreFile(fileId, store);
    return { store, file };
  }

  async list(principal: Principal, vectorStoreId: string, page: PageRequest, status?: VectorStoreFileStatus): Promise<{ store: OpenedStore; files: Page<AttachmentView> }> {
    const store = await this.deps.stores.open(principal, vectorStoreId);
    return { store, files: await this.deps.store.attachments(store.corpus.id, page, { status }) };
  }

  /** New attributes for the file, searched and filtered on from now on. */
  async update(principal: Principal, vectorStoreId: string, fileId: string, attributes: Attributes): Promise<{ store: OpenedStore; file: AttachmentView }> {
    const { store } = await this.get(principal, vectorStoreId, fileId);
    await this.deps.store.setAttributes(store.corpus.id, fileId, attributes);
    return this.get(principal, vectorStoreId, fileId);
  }

  /** Removes the file from the store (its document goes to a tombstone); the file itself stays. */
  async detach(principal: Principal, vectorStoreId: string, fileId: string): Promise<{ store: OpenedStore; fileId: string }> {
    const store = await this.deps.stores.open(principal, vectorStoreId);
    if (!(await this.deps.attacher.detach(principal, store.corpus.id, fileId))) throw noSuchStoreFile(fileId, store);
    return { store, fileId };
  }

  /** The file's text as it was parsed and indexed (409 while it is still indexing). */
  async content(principal: Principal, vectorStoreId: string, fileId: string): Promise<FileContent> {
    const { store, file } = await this.get(principal, vectorStoreId, fileId);
    if (file.status !== "completed" || !file.documentId) {
      throw new ServiceError("conflict", `File '${fileId}' is ${file.status} in vector store '${store.id}': its parsed content exists once it is completed.`, { code: "file_not_ready" });
    }
    const text = await this.deps.sources.documentText(principal, store.corpus.id, file.documentId);
    const starts = text.pageStarts.map((p) => p.start);
    const parts = starts.length > 1 ? starts.map((start, i) => text.text.slice(i === 0 ? 0 : start, starts[i + 1] ?? text.text.length)) : [text.text];
    return { fileId, filename: text.document.filename, parts };
  }

  // ── batches ──

  /** One batch of files, attached in order; every file must exist first (a bad id leaves nothing attached). */
  async createBatch(principal: Principal, vectorStoreId: string, items: AttachItem[]): Promise<{ store: OpenedStore; batch: BatchView }> {
    const store = await this.deps.stores.openLive(principal, vectorStoreId);
    const seen = new Set<string>();
    for (const item of items) {
      if (seen.has(item.fileId)) throw invalidRequest(`File '${item.fileId}' is named twice in the batch.`, "duplicate_file", "file_ids");
      seen.add(item.fileId);
      await this.deps.files.get(principal, item.fileId);
    }
    const now = this.deps.stores.now();
    const batch: BatchRecord = { id: newBatchId(), corpusId: store.corpus.id, cancelledAt: null, createdAt: now };
    await this.deps.store.insertBatch(batch);
    for (const item of items) await this.deps.attacher.attach(principal, store.corpus, item, batch.id, now);
    await this.deps.stores.touch(store);
    return { store, batch: await this.batchView(store, batch) };
  }

  async getBatch(principal: Principal, vectorStoreId: string, batchId: string): Promise<{ store: OpenedStore; batch: BatchView }> {
    const store = await this.deps.stores.open(principal, vectorStoreId);
    return { store, batch: await this.batchView(store, await this.batchRecord(store, batchId)) };
  }

  /** Cancels the batch: its files still indexing are stopped (`cancelled`, their documents deleted); the others stay. */
  async cancelBatch(principal: Principal, vectorStoreId: string, batchId: string): Promise<{ store: OpenedStore; batch: BatchView }> {
    const store = await this.deps.stores.open(principal, vectorStoreId);
    const batch = await this.batchRecord(store, batchId);
    await this.deps.store.markBatchCancelled(batch.id, this.deps.stores.now());
    for (const attachment of await this.deps.store.attachmentsOfBatch(batch.id)) {
      const view = await this.deps.store.attachment(store.corpus.id, attachment.fileId);
      if (view) await this.deps.attacher.cancel(principal, view);
    }
    return this.getBatch(principal, vectorStoreId, batchId);
  }

  async listBatchFiles(principal: Principal, vectorStoreId: string, batchId: string, page: PageRequest, status?: VectorStoreFileStatus): Promise<{ store: OpenedStore; files: Page<AttachmentView> }> {
    const store = await this.deps.stores.open(principal, vectorStoreId);
    const batch = await this.batchRecord(store, batchId);
    return { store, files: await this.deps.store.attachments(store.corpus.id, page, { status, batchId: batch.id }) };
  }

  private async batchRecord(store: OpenedStore, batchId: string): Promise<BatchRecord> {
    const batch = await this.deps.store.batch(store.corpus.id, batchId);
    if (!batch) throw notFound(`No file batch found with id '${batchId}' in vector store '${store.id}'.`, "file_batch_not_found", "batch_id");
    return batch;
  }

  private async batchView(store: OpenedStore, batch: BatchRecord): Promise<BatchView> {
    const fileCounts = await this.deps.store.counts({ batchId: batch.id });
    let status: BatchStatus;
    if (batch.cancelledAt !== null) status = "cancelled";
    else if (fileCounts.in_progress > 0) status = "in_progress";
    else status = fileCounts.total > 0 && fileCounts.failed === fileCounts.total ? "failed" : "completed";
    return { id: batch.id, vectorStoreId: store.id, createdAt: batch.createdAt, status, fileCounts };
  }
}
