/**
 * What an import does with a bundle's entries (`bundle-reader.ts` hands them over in order):
 *
 * - `BundleChecker` (the first reading) checks every entry's content against the others — the
 *   documents' lines, each original against its document's size and sha256, passages against
 *   their documents' passage counts, vectors against the corpus's width — and writes nothing.
 * - `BundleCommitter` (the second reading) writes: the corpus under a new id and a new data key,
 *   each document under a new id (its links kept), each original, passage, vector, keyword
 *   analysis and OCR page sealed under the new key. Documents are committed in groups with
 *   their passages (`ChunkStore.commitDocuments`), so a document is never half there.
 *
 * The writer's order makes both single passes: every document line comes before any
 * original; a document's original and OCR pages come before its passages; each passages part
 * is followed by its vectors.
 */
import { createHash } from "node:crypto";
import { newId, nowSeconds } from "../../ids.js";
import type { DataCipher } from "../../security/data-cipher.js";
import type { DocumentFormat, SearchDefaults } from "../../domain/vocabulary.js";
import type { ChunkStore, DocumentCommit, SealedChunk } from "../../store/chunk-store.js";
import type { CorpusRecord } from "../../store/corpus-store.js";
import type { DocumentRecord, DocumentStore, OcrSummary } from "../../store/document-store.js";
import type { SealedOcrPage } from "../../store/ocr-page-store.js";
import { sealContent, sealTerms, sealVector } from "../chunk-codec.js";
import { withContext } from "../chunking/passage-context.js";
import { sealPackedOcrPage } from "../ocr-codec.js";
import { analyzeChunk } from "../retrieval/keyword-analysis.js";
import { FORMATS } from "../ingest/formats.js";
import { BundleError } from "./bundle-reader.js";
import { CORPUS_ENTRY, CorpusEntrySchema, DocumentLineSchema, FORMAT_ENTRY, OcrPageLineSchema, PassageLineSchema, type CorpusEntry, type DocumentLine, type Manifest, type PassageLine } from "./bundle-format.js";

/** Passages committed together (with their documents) at most. */
const GROUP_CHUNKS = 2000;

interface DocumentFacts {
  sha256: string;
  bytes: number;
  status: "indexed" | "failed";
  chunkCount: number;
  original: boolean;
  passages: number;
  ocr: boolean;
}

function lines(bytes: Buffer, name: string): unknown[] {
  const text = bytes.toString("utf8");
  const out: unknown[] = [];
  for (const line of text.split("\n")) {
    if (line === "") continue;
    try {
      out.push(JSON.parse(line));
    } catch {
      throw new BundleError("bundle_invalid", `The bundle's '${name}' holds a line that is not JSON.`);
    }
  }
  return out;
}

function parse<T>(schema: { safeParse(v: unknown): { success: true; data: T } | { success: false } }, value: unknown, name: string): T {
  const result = schema.safeParse(value);
  if (!result.success) throw new BundleError("bundle_invalid", `The bundle's '${name}' holds a record Pustaka does not write.`);
  return result.data;
}

const entryDocumentId = (name: string) => name.slice(name.indexOf("/") + 1).replace(/\.jsonl$/, "");

/** Checks a bundle's entries against each other as they are read; `finish` checks what only the end can tell. */
export class BundleChecker {
  corpus: CorpusEntry | null = null;
  readonly documents = new Map<string, DocumentFacts>();
  /** Lines of the passages part whose vectors come next. */
  private pending: PassageLine[] | null = null;
  documentCount = 0;
  passageCount = 0;

  visit = (name: string, bytes: Buffer): void => {
    if (name === FORMAT_ENTRY) return;
    if (name === CORPUS_ENTRY) {
      this.corpus = parse(CorpusEntrySchema, JSON.parse(bytes.toString("utf8")), name);
      return;
    }
    const corpus = this.corpus;
    if (!corpus) throw new BundleError("bundle_invalid", "The bundle's settings do not come first.");
    if (this.pending && !name.startsWith("vectors/")) throw new BundleError("bundle_invalid", "The bundle's passages are not followed by their vectors.");
    if (name.startsWith("documents/")) {
      for (const value of lines(bytes, name)) this.document(parse(DocumentLineSchema, value, name), name);
    } else if (name.startsWith("originals/")) {
      const d = this.known(entryDocumentId(name), name);
      if (d.original) throw new BundleError("bundle_invalid", `The bundle holds the original of a document twice ('${name}').`);
      if (bytes.length !== d.bytes || createHash("sha256").update(bytes).digest("hex") !== d.sha256) {
        throw new BundleError("bundle_tampered", `The original '${name}' is not the file its document names (size or sha256 differ).`);
      }
      d.original = true;
    } else if (name.startsWith("ocr/")) {
      const d = this.known(entryDocumentId(name), name);
      for (const value of lines(bytes, name)) parse(OcrPageLineSchema, value, name);
      d.ocr = true;
    } else if (name.startsWith("passages/")) {
      this.pending = lines(bytes, name).map((value) => parse(PassageLineSchema, value, name));
      for (const p of this.pending) {
        const d = this.known(p.document_id, name);
        if (d.status !== "indexed") throw new BundleError("bundle_invalid", `The bundle holds passages of a document that failed ('${name}').`);
        d.passages++;
      }
    } else if (name.startsWith("vectors/")) {
      const passages = this.pending;
      if (!passages) throw new BundleError("bundle_invalid", `The bundle's '${name}' is not preceded by its passages.`);
      if (bytes.length !== passages.length * corpus.dimensions * 4) {
        throw new BundleError("bundle_invalid", `The bundle's '${name}' holds ${bytes.length} bytes, not ${passages.length} vectors of ${corpus.dimensions} dimensions.`);
      }
      this.passageCount += passages.length;
      this.pending = null;
    }
  };

  private document(line: DocumentLine, name: string): void {
    if (this.documents.has(line.id)) throw new BundleError("bundle_invalid", `The bundle lists document ${line.id} twice.`);
    if (line.parent_document_id !== null && !this.documents.has(line.parent_document_id)) {
      throw new BundleError("bundle_invalid", `The bundle lists document ${line.id} before the document it came out of ('${name}').`);
    }
    if (!(line.format in FORMATS)) throw new BundleError("bundle_invalid", `The bundle's document ${line.id} has a format this Pustaka does not know (${line.format}).`);
    this.documents.set(line.id, { sha256: line.sha256, bytes: line.bytes, status: line.status, chunkCount: line.chunk_count, original: false, passages: 0, ocr: false });
    this.documentCount++;
  }

  private known(id: string, name: string): DocumentFacts {
    const d = this.documents.get(id);
    if (!d) throw new BundleError("bundle_invalid", `The bundle's '${name}' belongs to a document it does not list.`);
    return d;
  }

  /** What can only be told at the end: every original there, every document's passages all there, the counts the manifest states. */
  finish(manifest: Manifest): CorpusEntry {
    const corpus = this.corpus;
    if (!corpus) throw new BundleError("bundle_invalid", "The bundle holds no corpus settings.");
    if (this.pending) throw new BundleError("bundle_invalid", "The bundle's last passages have no vectors.");
    for (const [id, d] of this.documents) {
      if (!d.original) throw new BundleError("bundle_invalid", `The bundle lacks the original of document ${id}.`);
      if (d.status === "indexed" && d.passages !== d.chunkCount) throw new BundleError("bundle_invalid", `The bundle holds ${d.passages} passages of document ${id}, which has ${d.chunkCount}.`);
    }
    if (corpus.dimensions !== manifest.embedding_model.dimensions) throw new BundleError("bundle_invalid", "The bundle's corpus and its embedding model disagree on the vectors' width.");
    if (manifest.counts.documents !== this.documentCount || manifest.counts.passages !== this.passageCount) {
      throw new BundleError("bundle_invalid", "The bundle holds other numbers of documents or passages than its manifest states.");
    }
    return corpus;
  }
}

export interface CommitTarget {
  /** The new corpus (its id, workspace, name, embedding model set by the caller). */
  corpus: CorpusRecord;
  cipher: DataCipher;
  documents: DocumentStore;
  chunks: ChunkStore;
  /** Writes an original (sealed by the store). */
  writeOriginal(documentId: string, bytes: Buffer): Promise<void>;
  /** Documents are queued to be indexed again (another embedding model): passages, vectors and OCR pages are not imported. */
  reembed: boolean;
}

/**
 * Writes a bundle's entries into a new corpus that the caller created (`target.corpus`).
 * Uses the checker's view of the bundle (the first reading) for what each document holds.
 */
export class BundleCommitter {
  /** Old document id → new. */
  readonly ids = new Map<string, string>();
  private readonly facts: Map<string, DocumentFacts>;
  private pending: PassageLine[] | null = null;
  /** Passages gathered for documents not yet complete, by old id. */
  private readonly gathering = new Map<string, SealedChunk[]>();
  /** OCR pages waiting for their document's commit, by old id. */
  private readonly ocr = new Map<string, SealedOcrPage[]>();
  /** OCR summaries from the document lines, by old id. */
  private readonly ocrSummaries = new Map<string, OcrSummary>();
  private group: DocumentCommit[] = [];
  /** Page counts of the documents written, by new id (their commit sets them again). */
  private readonly pageCounts = new Map<string, number | null>();
  private groupChunks = 0;
  readonly queued: string[] = [];
  documentsWritten = 0;
  passagesWritten = 0;

  constructor(
    private readonly target: CommitTarget,
    checked: BundleChecker,
  ) {
    this.facts = checked.documents;
  }

  visit = async (name: string, bytes: Buffer): Promise<void> => {
    if (name === FORMAT_ENTRY || name === CORPUS_ENTRY) return;
    if (name.startsWith("documents/")) {
      for (const value of lines(bytes, name)) await this.document(parse(DocumentLineSchema, value, name));
    } else if (name.startsWith("originals/")) {
      await this.target.writeOriginal(this.newId(entryDocumentId(name)), bytes);
    } else if (this.target.reembed) {
      return;
    } else if (name.startsWith("ocr/")) {
      const old = entryDocumentId(name);
      const pages = lines(bytes, name).map((value) => parse(OcrPageLineSchema, value, name));
      const documentId = this.newId(old);
      this.ocr.set(old, pages.map((p) => sealPackedOcrPage(this.target.cipher, documentId, p)));
    } else if (name.startsWith("passages/")) {
      this.pending = lines(bytes, name).map((value) => parse(PassageLineSchema, value, name));
    } else if (name.startsWith("vectors/")) {
      await this.passages(this.pending!, bytes);
      this.pending = null;
    }
  };

  private newId(old: string): string {
    const id = this.ids.get(old);
    if (!id) throw new BundleError("bundle_invalid", `The bundle names document ${old} before listing it.`);
    return id;
  }

  private async document(line: DocumentLine): Promise<void> {
    const id = newId("doc_");
    this.ids.set(line.id, id);
    const { corpus } = this.target;
    const indexed = line.status === "indexed";
    const requeue = indexed && this.target.reembed;
    const record: DocumentRecord = {
      id,
      corpusId: corpus.id,
      filename: line.filename,
      contentType: line.content_type,
      format: line.format as DocumentFormat,
      bytes: line.bytes,
      sha256: line.sha256,
      // An indexed document is stored as indexed with its passages' count, then committed
      // with its passages: no state the indexer would take up (queued, processing) is ever
      // seen, unless it is to be indexed again.
      status: requeue ? "queued" : line.status,
      error: line.error,
      pageCount: requeue ? null : line.page_count,
      chunkCount: requeue ? 0 : line.chunk_count,
      metadata: line.metadata,
      attempts: 0,
      createdAt: line.created_at,
      updatedAt: nowSeconds(),
      indexedAt: requeue ? null : line.indexed_at,
      ...(line.parent_document_id ? { parentDocumentId: this.newId(line.parent_document_id), relation: line.relation, position: line.position } : {}),
    };
    if (!(await this.target.documents.insert(record))) {
      throw new BundleError("bundle_invalid", `The bundle holds the file '${line.filename}' twice (the same sha256).`);
    }
    if (requeue) this.queued.push(id);
    this.pageCounts.set(id, line.page_count);
    if (line.ocr && !this.target.reembed) this.ocrSummaries.set(line.id, { engine: line.ocr.engine, languages: line.ocr.languages, pages: line.ocr.pages });
    this.documentsWritten++;
    // An indexed document without passages (none could be cut) is complete at once.
    if (indexed && !requeue && line.chunk_count === 0) await this.complete(line.id, []);
  }

  private async passages(lines: PassageLine[], vectors: Buffer): Promise<void> {
    const { cipher, corpus } = this.target;
    const width = corpus.dimensions;
    for (const [i, p] of lines.entries()) {
      const documentId = this.newId(p.document_id);
      const chunkId = newId("chk_");
      const vector = new Float32Array(width);
      for (let k = 0; k < width; k++) vector[k] = vectors.readFloatLE((i * width + k) * 4);
      const chunk: SealedChunk = {
        id: chunkId,
        corpusId: corpus.id,
        documentId,
        index: p.index,
        start: p.start,
        end: p.end,
        pageStart: p.page_start,
        pageEnd: p.page_end,
        tokenCount: p.token_count,
        content: sealContent(cipher, chunkId, { text: p.text, headingPath: p.heading_path, ...(p.page_breaks ? { pageBreaks: p.page_breaks } : {}), ...(p.context ? { context: p.context } : {}) }),
        vector: sealVector(cipher, chunkId, vector),
        // The keyword analysis is made again (it is not carried): the same function the indexer runs on the same text.
        terms: sealTerms(cipher, chunkId, analyzeChunk(withContext(p.context, p.text))),
      };
      const gathered = this.gathering.get(p.document_id) ?? [];
      gathered.push(chunk);
      this.gathering.set(p.document_id, gathered);
      if (gathered.length === this.facts.get(p.document_id)!.chunkCount) {
        this.gathering.delete(p.document_id);
        await this.complete(p.document_id, gathered);
      }
    }
  }

  private async complete(old: string, chunks: SealedChunk[]): Promise<void> {
    const summary = this.ocrSummaries.get(old);
    const pages = this.ocr.get(old);
    this.ocr.delete(old);
    this.ocrSummaries.delete(old);
    const documentId = this.newId(old);
    this.group.push({ documentId, corpusId: this.target.corpus.id, chunks, pageCount: this.pageCounts.get(documentId) ?? null, ocr: summary ? { summary, pages: pages ?? [] } : null });
    this.groupChunks += chunks.length;
    this.passagesWritten += chunks.length;
    if (this.groupChunks >= GROUP_CHUNKS) await this.flush();
  }

  /** Commits the documents gathered so far with their passages (one transaction). */
  async flush(): Promise<void> {
    if (this.group.length === 0) return;
    const group = this.group;
    this.group = [];
    this.groupChunks = 0;
    const committed = await this.target.chunks.commitDocuments(group, nowSeconds());
    if (committed.length !== group.length) throw new Error("documents of the import were deleted while it ran");
  }
}

/** A bundle's search defaults, if they are ones this Pustaka understands; else none (the server's). */
export function searchDefaultsOf(value: Record<string, unknown> | null): SearchDefaults | null {
  if (!value) return null;
  const search = value.search;
  if (search !== "hybrid" && search !== "vector" && search !== "keyword") return null;
  const fusion = value.fusion as { method?: unknown; vectorWeight?: unknown; keywordTrust?: unknown } | undefined;
  const out: SearchDefaults = { search };
  if (fusion && typeof fusion === "object") {
    const f: NonNullable<SearchDefaults["fusion"]> = {};
    if (fusion.method === "convex" || fusion.method === "dbsf" || fusion.method === "rrf") f.method = fusion.method;
    if (typeof fusion.vectorWeight === "number" && fusion.vectorWeight >= 0 && fusion.vectorWeight <= 1) f.vectorWeight = fusion.vectorWeight;
    if (fusion.keywordTrust === "auto" || fusion.keywordTrust === "squared" || fusion.keywordTrust === "linear" || fusion.keywordTrust === "language" || fusion.keywordTrust === "fixed") f.keywordTrust = fusion.keywordTrust;
    if (Object.keys(f).length > 0) out.fusion = f;
  }
  return out;
}

