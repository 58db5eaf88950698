/**
 * Documents: each uploaded file is streamed into encrypted storage while it is hashed,
 * measured and sniffed; then it is accepted (queued for indexing) or rejected on its
 * own, without failing the rest of the batch.
 */
import { createHash } from "node:crypto";
import type { Readable } from "node:stream";
import type { Principal } from "../domain/scopes.js";
import { notFound } from "../errors.js";
import { newId, nowSeconds } from "../ids.js";
import type { EncryptedBlobStore } from "../security/encrypted-blob-store.js";
import type { DocumentRecord, DocumentStatus, DocumentStore } from "../store/document-store.js";
import type { Page, PageRequest } from "../store/pagination.js";
import type { TombstoneRecord } from "../store/tombstone-catalog.js";
import type { CorpusEvents } from "./corpus-events.js";
import type { CorpusService } from "./corpus-service.js";
import { detectFormat } from "./ingest/detect-format.js";
import { acceptedTypesSentence, FORMATS } from "./ingest/formats.js";
import type { DocumentFormat } from "./ingest/types.js";
import type { CorpusIndexes } from "./retrieval/corpus-indexes.js";
import type { TombstoneService } from "./tombstone-service.js";

/** Bytes kept from the start of each file to decide its type by content. */
const SNIFF_BYTES = 64 * 1024;


export interface StagedFile {
  documentId: string;
  filename: string;
  bytes: number;
  sha256: string;
  format: DocumentFormat;
}

export interface FileRejection {
  filename: string;
  error: { code: string; message: string };
  /** What is known of the refused file, for the audit trail (absent when it was cut off or never read). */
  sha256?: string;
  bytes?: number;
  format?: string;
}

/** Thrown by `stage` when a file breaks the per-file size limit (the stream was cut). */
export class FileTooLargeError extends Error {}

export interface DocumentServiceDeps {
  documents: DocumentStore;
  corpora: CorpusService;
  blobs: EncryptedBlobStore;
  indexes: CorpusIndexes;
  events: CorpusEvents;
  /** Where deletions go: cold storage until the retention window ends. */
  tombstones: TombstoneService;
  /** Called when documents were queued (their ids), to hand them to the indexer. */
  onQueued: (documentIds: string[]) => void;
  maxFileBytes: number;
}

/** A file name as data: no directories, no control characters, bounded length. */
export function cleanFilename(name: string): string {
  const base = name.split(/[\\/]/).pop() ?? "";
  // eslint-disable-next-line no-control-regex
  const clean = base.replace(/[\u0000-\u001f\u007f]/g, "").trim().slice(0, 255);
  return clean || "unnamed";
}

export class DocumentService {
  constructor(private readonly deps: DocumentServiceDeps) {}

  /**
   * Streams one file into encrypted storage. Returns what was staged (not yet a
   * document), or a rejection. `truncated` tells that the multipart parser cut the file
   * at the size limit.
   */
  async stage(corpusId: string, filename: string, source: Readable, isTruncated: () => boolean): Promise<StagedFile | FileRejection> {
    const name = cleanFilename(filename);
    const documentId = newId("doc_");
    const hash = createHash("sha256");
    const head: Buffer[] = [];
    let headBytes = 0;
    let bytes = 0;
    const meter = (chunk: Buffer): void => {
      hash.update(chunk);
      bytes += chunk.length;
      if (headBytes < SNIFF_BYTES) {
        head.push(chunk.subarray(0, SNIFF_BYTES - headBytes));
        headBytes += Math.min(chunk.length, SNIFF_BYTES - headBytes);
      }
    };
    try {
      await this.deps.blobs.write(corpusId, documentId, source, meter);
    } catch (error) {
      await this.deps.blobs.delete(corpusId, documentId).catch(() => undefined);
      throw error;
    }
    const reject = async (code: string, message: string, complete = true): Promise<FileRejection> => {
      await this.deps.blobs.delete(corpusId, documentId);
      return { filename: name, error: { code, message }, bytes, ...(complete ? { sha256: hash.digest("hex") } : {}) };
    };
    if (isTruncated() || bytes > this.deps.maxFileBytes) {
      return reject("file_too_large", `the file is larger than the ${this.deps.maxFileBytes}-byte limit`, false);
    }
    if (bytes === 0) return reject("empty_file", "the file is empty");
    const format = detectFormat(new Uint8Array(Buffer.concat(head)), name);
    if (!format) return reject("unsupported_file_type", `unsupported file type: ${acceptedTypesSentence()}`);
    return { documentId, filename: name, bytes, sha256: hash.digest("hex"), format };
  }

  /** Turns staged files into queued documents (or duplicate rejections), in upload order. */
  async accept(corpusId: string, staged: StagedFile[], metadata: Record<string, unknown>): Promise<{ documents: DocumentRecord[]; rejected: FileRejection[] }> {
    const documents: DocumentRecord[] = [];
    const rejected: FileRejection[] = [];
    const seen = new Map<string, string>();
    for (const file of staged) {
      let existing = (await this.deps.documents.findBySha256(corpusId, file.sha256))?.id ?? seen.get(file.sha256);
      const now = nowSeconds();
      const record: DocumentRecord = {
        id: file.documentId,
        corpusId,
        filename: file.filename,
        contentType: FORMATS[file.format].contentType,
        format: file.format,
        bytes: file.bytes,
        sha256: file.sha256,
        status: "queued",
        error: null,
        pageCount: null,
        chunkCount: 0,
        metadata,
        attempts: 0,
        createdAt: now,
        updatedAt: now,
        indexedAt: null,
      };
      // The same content committed meanwhile (a concurrent upload) is a duplicate too.
      if (!existing && !(await this.deps.documents.insert(record))) existing = (await this.deps.documents.findBySha256(corpusId, file.sha256))?.id ?? "(deleted meanwhile)";
      if (existing) {
        await this.deps.blobs.delete(corpusId, file.documentId);
        rejected.push({
          filename: file.filename,
          error: { code: "duplicate_document", message: `this corpus already holds the same content as document ${existing}` },
          sha256: file.sha256,
          bytes: file.bytes,
          format: file.format,
        });
        continue;
      }
      seen.set(file.sha256, record.id);
      documents.push(record);
      this.deps.events.publish(corpusId, { type: "document.status", documentId: record.id, status: "queued", error: null, chunkCount: 0 });
    }
    if (documents.length > 0) this.deps.onQueued(documents.map((d) => d.id));
    return { documents, rejected };
  }

  /** Removes staged files that will not become documents (a failed request). */
  async discard(corpusId: string, staged: StagedFile[]): Promise<void> {
    for (const file of staged) await this.deps.blobs.delete(corpusId, file.documentId);
  }

  /**
   * A page of the corpus's documents; `status` keeps those in that state (e.g. the failed ones),
   * `parentDocumentId` those that came out of that document (an e-mail's attachments, in
   * their order in it), null only uploaded documents. Each says how many came out of it.
   */
  async list(principal: Principal, corpusId: string, page: PageRequest, status?: DocumentStatus, parentDocumentId?: string | null): Promise<Page<DocumentRecord>> {
    await this.deps.corpora.record(principal, corpusId);
    if (parentDocumentId && !(await this.deps.documents.get(corpusId, parentDocumentId))) {
      throw notFound(`No document '${parentDocumentId}' in corpus '${corpusId}'`, "document_not_found", "parent_document_id");
    }
    const result = await this.deps.documents.list(corpusId, page, status, parentDocumentId);
    return { ...result, data: await this.withChildCounts(result.data) };
  }

  async get(principal: Principal, corpusId: string, documentId: string): Promise<DocumentRecord> {
    await this.deps.corpora.record(principal, corpusId);
    const document = await this.deps.documents.get(corpusId, documentId);
    if (!document) throw notFound(`No document '${documentId}' in corpus '${corpusId}'`, "document_not_found", "document_id");
    return (await this.withChildCounts([document]))[0]!;
  }

  /** Documents with how many came out of each (a mailbox's messages, an e-mail's attachments). */
  private async withChildCounts(documents: DocumentRecord[]): Promise<DocumentRecord[]> {
    const counts = await this.deps.documents.childCounts(documents.map((d) => d.id));
    return documents.map((d) => ({ ...d, children: counts.get(d.id) ?? { attachments: 0, messages: 0 } }));
  }

  /**
   * Deletes a document and the documents that came out of it (an e-mail's attachments, a
   * mailbox's messages): their records, chunks and originals move to one tombstone in cold
   * storage and are wiped from primary storage; their index rows are removed.
   */
  async delete(principal: Principal, corpusId: string, documentId: string): Promise<TombstoneRecord> {
    await this.get(principal, corpusId, documentId);
    const descendants = await this.deps.documents.descendantsOf(documentId);
    const tombstone = await this.deps.tombstones.buryDocument(corpusId, documentId);
    for (const id of [documentId, ...descendants.map((d) => d.id)]) await this.deps.indexes.removeDocument(corpusId, id);
    return tombstone;
  }

  /**
   * Removes stored originals that belong to no document (an upload cut off before it was
   * accepted, a crash between the two). Run at start, before uploads are taken.
   */
  async sweepOrphans(): Promise<number> {
    let removed = 0;
    for (const { corpusId, documentId } of await this.deps.blobs.list()) {
      if (await this.deps.documents.get(corpusId, documentId)) continue;
      await this.deps.blobs.delete(corpusId, documentId);
      removed++;
    }
    return removed;
  }
}
