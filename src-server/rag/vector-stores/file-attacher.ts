/**
 * A file attached to a vector store becomes a document of its corpus: its bytes (opened from
 * the file's own seal) are staged as the document's original under the corpus key, accepted
 * for indexing with the attachment's attributes as its metadata, and the attachment records
 * which document it became. Detaching deletes the document (a tombstone, as any deletion)
 * unless another attachment of the same content still needs it.
 */
import { Readable } from "node:stream";
import type { Principal } from "../../domain/scopes.js";
import { ServiceError } from "../../errors.js";
import type { CorpusRecord } from "../../store/corpus-store.js";
import type { DocumentStore } from "../../store/document-store.js";
import type { AttachmentRecord, AttachmentView, Attributes, FileChunking, VectorStoreStore } from "../../store/vector-store-store.js";
import type { DocumentService } from "../document-service.js";
import type { FileService } from "./file-service.js";

/** One file to attach, as a request names it. */
export interface AttachItem {
  fileId: string;
  attributes: Attributes;
  chunking: FileChunking;
}

/** OpenAI's `last_error.code` for why Pustaka refused or could not index a file. */
export function lastErrorCode(code: string): "server_error" | "unsupported_file" | "invalid_file" {
  if (code === "unsupported_file_type") return "unsupported_file";
  if (code === "indexing_failed" || code === "storage_failed") return "server_error";
  return "invalid_file";
}

export interface FileAttacherDeps {
  files: FileService;
  documents: DocumentService;
  documentStore: DocumentStore;
  store: VectorStoreStore;
}

export class FileAttacher {
  /**
   * Static chunking of documents accepted but whose attachment is not stored yet: the indexer
   * may take a document the moment it is queued, before its attachment row exists.
   */
  private readonly pendingChunking = new Map<string, FileChunking>();

  constructor(private readonly deps: FileAttacherDeps) {}

  /** The indexer's question: fixed windows for this document? (`Indexer` deps `chunkingOf`). */
  async windowsOf(documentId: string): Promise<{ targetTokens: number; overlapTokens: number } | null> {
    const chunking = this.pendingChunking.get(documentId) ?? (await this.deps.store.chunkingOf(documentId));
    return chunking?.type === "static" ? { targetTokens: chunking.maxChunkSizeTokens, overlapTokens: chunking.chunkOverlapTokens } : null;
  }

  /**
   * Attaches a file of the caller's workspace (it must exist: the caller checked) to the
   * corpus. A file attached already and standing is left as it is (in `batchId` from now
   * on); one that failed or was cancelled is attached again.
   */
  async attach(principal: Principal, corpus: CorpusRecord, item: AttachItem, batchId: string | null, now: number): Promise<AttachmentView> {
    const existing = await this.deps.store.attachment(corpus.id, item.fileId);
    if (existing && existing.state === "attached") {
      if (batchId) await this.deps.store.moveToBatch(corpus.id, item.fileId, batchId);
      return existing;
    }
    const file = await this.deps.files.get(principal, item.fileId);
    const row: AttachmentRecord = { corpusId: corpus.id, fileId: file.id, documentId: null, borrowed: false, batchId, state: "attached", error: null, attributes: item.attributes, chunking: item.chunking, createdAt: now };
    let created: string | null = null;
    const bytes = await this.deps.files.read(file.id);
    try {
      const staged = await this.deps.documents.stage(corpus.id, file.filename, Readable.from([bytes]), () => false);
      if ("documentId" in staged) {
        this.pendingChunking.set(staged.documentId, item.chunking);
        try {
          const accepted = await this.deps.documents.accept(corpus.id, [staged], item.attributes);
          created = accepted.documents[0]?.id ?? null;
          // The same content is in the corpus already (another file, or a direct upload): the attachment shares that
          // document, and borrows it when it is the corpus's own (no attachment made it).
          row.documentId = created ?? (await this.deps.documentStore.findBySha256(corpus.id, staged.sha256))?.id ?? null;
          if (row.documentId && !created) row.borrowed = (await this.deps.store.borrowed(row.documentId)) ?? true;
          if (!row.documentId) Object.assign(row, { state: "failed", error: { code: "server_error", message: "The file's document was deleted while it was being attached." } });
          await this.store(row, created, principal);
        } finally {
          this.pendingChunking.delete(staged.documentId);
        }
      } else {
        Object.assign(row, { state: "failed", error: { code: lastErrorCode(staged.error.code), message: staged.error.message } });
        await this.store(row, null, principal);
      }
    } finally {
      bytes.fill(0);
    }
    return (await this.deps.store.attachment(corpus.id, file.id))!;
  }

  /** Stores the attachment; when another request attached the file meanwhile, the document made here is not needed. */
  private async store(row: AttachmentRecord, created: string | null, principal: Principal): Promise<void> {
    if (await this.deps.store.attach(row)) return;
    if (created) await this.deleteDocumentIfUnused(principal, row.corpusId, created);
  }

  /** Removes the file from the store; its document goes too unless another attachment shares it. False when it was not attached. */
  async detach(principal: Principal, corpusId: string, fileId: string): Promise<boolean> {
    const attachment = await this.deps.store.attachment(corpusId, fileId);
    if (!attachment) return false;
    await this.deps.store.detach(corpusId, fileId);
    if (attachment.documentId) await this.deleteDocumentIfUnused(principal, corpusId, attachment.documentId, attachment.borrowed);
    return true;
  }

  /** Stops an attachment still indexing: it is `cancelled`, its document deleted (the indexer drops work on a deleted document). */
  async cancel(principal: Principal, attachment: AttachmentView): Promise<void> {
    if (attachment.status !== "in_progress") return;
    await this.deps.store.cancel(attachment.corpusId, attachment.fileId);
    if (attachment.documentId) await this.deleteDocumentIfUnused(principal, attachment.corpusId, attachment.documentId, attachment.borrowed);
  }

  /** Deletes a document no attachment needs any more (never one borrowed: the corpus's own, uploaded directly). */
  private async deleteDocumentIfUnused(principal: Principal, corpusId: string, documentId: string, borrowed = false): Promise<void> {
    if (borrowed || (await this.deps.store.referencesTo(documentId)) > 0) return;
    try {
      await this.deps.documents.delete(principal, corpusId, documentId);
    } catch (error) {
      // Deleted meanwhile (another detach, the corpus itself): nothing left to do.
      if (!(error instanceof ServiceError && error.kind === "not_found")) throw error;
    }
  }
}
