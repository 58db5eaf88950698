/**
 * Files that come out of a document (an e-mail's attachments, a mailbox's messages)
 * become documents of their own in the same corpus, linked to it: stored sealed under the
 * corpus key exactly as uploads are, typed by content, queued for indexing, announced to
 * the corpus's progress stream and audited like uploads (one `document.upload` entry per
 * file, by `system`, naming the parent). A file Pustaka cannot read is kept as a failed
 * document that says why, not dropped; content the corpus already holds is not stored
 * twice (as with uploads). Nesting (attachments of attachments…) and the number of files
 * are bounded.
 *
 * The indexer calls `stage` after parsing a document and before committing its chunks, so
 * a document indexed again after a crash is staged again: files already staged for it are
 * recognised by their content and skipped.
 */
import { createHash } from "node:crypto";
import { Readable } from "node:stream";
import type { Logger } from "pino";
import type { AuditEvent } from "../audit/audit-service.js";
import { newId, nowSeconds } from "../ids.js";
import type { EncryptedBlobStore } from "../security/encrypted-blob-store.js";
import type { CorpusRecord, CorpusStore } from "../store/corpus-store.js";
import type { DocumentRecord, DocumentStore } from "../store/document-store.js";
import type { CorpusEvents } from "./corpus-events.js";
import { cleanFilename } from "./document-service.js";
import { detectFormat } from "./ingest/detect-format.js";
import { acceptedTypesSentence, formatOfExtension, FORMATS } from "./ingest/formats.js";
import type { DocumentFormat, EmbeddedFile } from "./ingest/types.js";

/** Documents below an uploaded one, at most this many levels (a mailbox › message › attachment › … ). */
export const MAX_EMBEDDED_DEPTH = 5;
/** Files one document may hand on (a mailbox's messages: the mailbox parser allows as many). */
export const MAX_EMBEDDED_FILES = 100_000;
/** Queued documents handed to the indexer at a time while a large mailbox is staged. */
const WAKE_EVERY = 100;
/** Files staged at once. */
const STAGE_CONCURRENCY = 8;

export interface EmbeddedDocumentsDeps {
  documents: DocumentStore;
  corpora: Pick<CorpusStore, "getAny">;
  blobs: EncryptedBlobStore;
  events: CorpusEvents;
  /** Where each file's entry goes (the audit service's `record`). */
  audit: { record(event: AuditEvent): void };
  /** Called with the ids of documents queued, to hand them to the indexer. */
  onQueued: (documentIds: string[]) => void;
  logger?: Pick<Logger, "warn"> | undefined;
  /** Largest file kept, in bytes (the upload limit). */
  maxFileBytes: number;
  /** Default `MAX_EMBEDDED_DEPTH`. */
  maxDepth?: number;
  /** Default `MAX_EMBEDDED_FILES`. */
  maxFiles?: number;
}

/** What became of one file (for the audit entry). */
type Outcome =
  | { kind: "queued" | "failed"; document: DocumentRecord }
  | { kind: "refused"; code: string; message: string }
  | { kind: "already" }
  | { kind: "parent_gone" };

export class EmbeddedDocuments {
  private readonly maxDepth: number;
  private readonly maxFiles: number;

  constructor(private readonly deps: EmbeddedDocumentsDeps) {
    this.maxDepth = deps.maxDepth ?? MAX_EMBEDDED_DEPTH;
    this.maxFiles = deps.maxFiles ?? MAX_EMBEDDED_FILES;
  }

  /**
   * Turns each file into a document of `document`'s corpus linked to it (queued, or failed
   * with the reason), in order. Stops quietly when the document or its corpus is deleted
   * meanwhile. Throws only when storage fails (the indexer then fails the document, and a
   * later attempt stages what is missing).
   */
  async stage(document: DocumentRecord, files: EmbeddedFile[]): Promise<void> {
    const corpus = await this.deps.corpora.getAny(document.corpusId);
    if (!corpus || files.length === 0) return;
    const tooDeep = (await this.deps.documents.depthOf(document, this.maxDepth)) + 1 > this.maxDepth;
    if (files.length > this.maxFiles) {
      this.deps.logger?.warn({ documentId: document.id, files: files.length, kept: this.maxFiles }, "a document holds more files than are staged; the rest are left out");
      this.audit(corpus, document, null, { kind: "refused", code: "too_many_files", message: `${files.length - this.maxFiles} files beyond the first ${this.maxFiles} were not staged` });
    }
    let queued: string[] = [];
    const wake = () => {
      if (queued.length > 0) this.deps.onQueued(queued);
      queued = [];
    };
    const kept = files.slice(0, this.maxFiles);
    try {
      // A few files at a time: writing an original is file I/O that overlaps well; outcomes are taken in order.
      for (let i = 0; i < kept.length; i += STAGE_CONCURRENCY) {
        const window = kept.slice(i, i + STAGE_CONCURRENCY);
        const outcomes = await Promise.all(window.map((file, j) => this.stageOne(corpus, document, file, i + j, tooDeep)));
        for (const [j, outcome] of outcomes.entries()) {
          if (outcome.kind === "parent_gone") return;
          if (outcome.kind === "already") continue;
          this.audit(corpus, document, window[j]!, outcome);
          // Announced in the parent's order (the window's files are stored concurrently).
          if (outcome.kind !== "refused") this.deps.events.publish(corpus.id, { type: "document.status", documentId: outcome.document.id, status: outcome.document.status, error: outcome.document.error, chunkCount: 0 });
          if (outcome.kind === "queued") queued.push(outcome.document.id);
        }
        if (queued.length >= WAKE_EVERY) wake();
      }
    } finally {
      wake();
    }
  }

  private async stageOne(corpus: CorpusRecord, parent: DocumentRecord, file: EmbeddedFile, position: number, tooDeep: boolean): Promise<Outcome> {
    const name = cleanFilename(file.filename);
    const bytes = Buffer.from(file.bytes.buffer, file.bytes.byteOffset, file.bytes.byteLength);
    if (bytes.length === 0) return { kind: "refused", code: "empty_file", message: "the file is empty" };
    if (bytes.length > this.deps.maxFileBytes) return { kind: "refused", code: "file_too_large", message: `the file is larger than the ${this.deps.maxFileBytes}-byte limit` };
    const sha256 = createHash("sha256").update(bytes).digest("hex");
    const existing = await this.deps.documents.findBySha256(corpus.id, sha256);
    if (existing) return existing.parentDocumentId === parent.id ? { kind: "already" } : duplicate(existing.id);
    const format = detectFormat(bytes, name);
    const error = tooDeep
      ? { code: "document_too_complex", message: `the file is nested more than ${this.maxDepth} levels deep inside other documents and was not read` }
      : format === null
        ? { code: "unsupported_file_type", message: `unsupported file type: ${acceptedTypesSentence()}` }
        : null;
    const id = newId("doc_");
    const now = nowSeconds();
    const record: DocumentRecord = {
      id,
      corpusId: corpus.id,
      filename: name,
      contentType: format ? FORMATS[format].contentType : "application/octet-stream",
      format: format ?? unreadFormat(name),
      bytes: bytes.length,
      sha256,
      status: error ? "failed" : "queued",
      error,
      pageCount: null,
      chunkCount: 0,
      // What the upload was told applies to what came out of it too (a metadata filter finds the attachments).
      metadata: parent.metadata,
      attempts: 0,
      createdAt: now,
      updatedAt: now,
      indexedAt: null,
      parentDocumentId: parent.id,
      relation: file.relation,
      position,
    };
    // Kept even when it cannot be read: the original stays available from its document.
    await this.deps.blobs.write(corpus.id, id, Readable.from([bytes]));
    let inserted: boolean;
    try {
      inserted = await this.deps.documents.insert(record);
    } catch (insertError) {
      await this.deps.blobs.delete(corpus.id, id).catch(() => undefined);
      // The parent was deleted meanwhile (its row is what the link refers to): nothing more to stage.
      if (!(await this.deps.documents.getById(parent.id))) return { kind: "parent_gone" };
      throw insertError;
    }
    if (!inserted) {
      // The same content committed meanwhile (a concurrent upload, or this parent staged on another replica).
      await this.deps.blobs.delete(corpus.id, id);
      const winner = await this.deps.documents.findBySha256(corpus.id, sha256);
      return winner?.parentDocumentId === parent.id ? { kind: "already" } : duplicate(winner?.id ?? "(deleted meanwhile)");
    }
    return { kind: error ? "failed" : "queued", document: record };
  }

  /** One entry per file, as uploads write them, with the document it came out of. */
  private audit(corpus: CorpusRecord, parent: DocumentRecord, file: EmbeddedFile | null, outcome: Exclude<Outcome, { kind: "already" | "parent_gone" }>): void {
    const link = { corpus_id: corpus.id, parent_document_id: parent.id, relation: file?.relation ?? null };
    const data =
      outcome.kind === "refused"
        ? { ...link, sha256: null, bytes: file?.bytes.length ?? null, format: null, accepted: false, reason: outcome.code }
        : {
            ...link,
            document_id: outcome.document.id,
            sha256: outcome.document.sha256,
            bytes: outcome.document.bytes,
            format: outcome.document.error ? null : outcome.document.format,
            accepted: true,
            ...(outcome.document.error ? { reason: outcome.document.error.code } : {}),
          };
    this.deps.audit.record({ type: "document.upload", workspaceId: corpus.workspaceId, actor: "system", outcome: outcome.kind === "queued" ? "success" : "failure", requestId: null, data });
  }
}

function duplicate(existingId: string): Outcome {
  return { kind: "refused", code: "duplicate_document", message: `this corpus already holds the same content as document ${existingId}` };
}

/**
 * The format column of a file that cannot be read (it is never parsed): what its extension
 * names when it names one, else plain text, the most neutral of the formats. Its media type
 * (`application/octet-stream`) and its error say what it really is.
 */
function unreadFormat(name: string): DocumentFormat {
  return formatOfExtension(/\.([a-z0-9]+)$/i.exec(name)?.[1] ?? "") ?? "txt";
}
