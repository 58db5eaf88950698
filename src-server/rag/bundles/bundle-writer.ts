/**
 * Writes a corpus as a bundle (`bundle-format.ts`): the entries into a tar stream as they
 * are read from the stores, hashed on the way, then the signed manifest; the tar through
 * age, encrypted for a passphrase or for recipients. Memory holds a part of rows or one
 * original at a time; the tar stream waits while the reader of the bundle is behind.
 */
import { createHash } from "node:crypto";
import { Readable } from "node:stream";
import type { ReadableStream as WebReadableStream } from "node:stream/web";
import type tar from "tar-stream";
import type { CorpusRecord } from "../../store/corpus-store.js";
import type { DocumentRecord } from "../../store/document-store.js";
import type { SealedChunk } from "../../store/chunk-store.js";
import type { SealedOcrPage } from "../../store/ocr-page-store.js";
import type { DataCipher } from "../../security/data-cipher.js";
import type { AuditSigner } from "../../security/audit-chain.js";
import { openContent, openVector } from "../chunk-codec.js";
import { openOcrWords } from "../ocr-codec.js";
import {
  BUNDLE_FORMAT,
  BUNDLE_VERSION,
  CORPUS_ENTRY,
  FORMAT_ENTRY,
  MANIFEST_ENTRY,
  ocrName,
  originalName,
  PART_BYTES,
  partName,
  type CorpusEntry,
  type DocumentLine,
  type Manifest,
  type ManifestEntry,
  type PassageLine,
  type UnsignedManifest,
} from "./bundle-format.js";

/** What a bundle is made from: a settled corpus (nothing queued or being indexed) and where its parts are read. */
export interface BundleSource {
  corpus: CorpusRecord;
  cipher: DataCipher;
  /** Every document of the corpus, each after the document it came out of (called twice: the same documents each time). */
  documents: () => AsyncIterable<DocumentRecord>;
  chunksOf(documentId: string): Promise<SealedChunk[]>;
  /** The original as uploaded (opened). */
  original(documentId: string): Promise<Buffer>;
  ocrPage(documentId: string, page: number): Promise<SealedOcrPage | undefined>;
  model: Manifest["embedding_model"];
  signer: AuditSigner;
  exportedBy: string;
  appVersion: string;
  now: number;
}

/** Encrypted for a passphrase (scrypt), or for one or more age recipients (`age1…`). */
export type BundleEncryption = { passphrase: string } | { recipients: string[] };

export interface BundleSummary {
  documents: number;
  passages: number;
  originalBytes: number;
  /** The manifest as signed. */
  manifest: Manifest;
}

/** Entries into a tar stream, each hashed; waits for the stream's reader between entries. */
class EntryWriter {
  readonly entries: ManifestEntry[] = [];
  constructor(private readonly pack: tar.Pack) {}

  add(name: string, bytes: Buffer): Promise<void> {
    this.entries.push({ name, bytes: bytes.length, sha256: createHash("sha256").update(bytes).digest("hex") });
    return new Promise((resolve, reject) => this.pack.entry({ name, size: bytes.length, mode: 0o600, mtime: new Date(0) }, bytes, (error) => (error ? reject(error) : resolve())));
  }
}

/** Rows (JSON lines, or vectors beside passages) gathered into parts of about `PART_BYTES`. */
class PartWriter {
  private lines: string[] = [];
  private bytes = 0;
  private vectors: Buffer[] = [];
  private number = 0;
  constructor(
    private readonly out: EntryWriter,
    private readonly kind: "documents" | "passages",
  ) {}

  async push(line: unknown, vector?: Float32Array): Promise<void> {
    const text = JSON.stringify(line);
    this.lines.push(text);
    this.bytes += Buffer.byteLength(text) + 1 + (vector ? vector.byteLength : 0);
    if (vector) this.vectors.push(Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength));
    if (this.bytes >= PART_BYTES) await this.flush();
  }

  async flush(): Promise<void> {
    if (this.lines.length === 0) return;
    this.number++;
    await this.out.add(partName(this.kind, this.number), Buffer.from(`${this.lines.join("\n")}\n`, "utf8"));
    if (this.kind === "passages") await this.out.add(partName("vectors", this.number), Buffer.concat(this.vectors));
    this.lines = [];
    this.vectors = [];
    this.bytes = 0;
  }
}

const corpusEntry = (c: CorpusRecord): CorpusEntry => ({
  id: c.id,
  name: c.name,
  chunking: c.chunking,
  dimensions: c.dimensions,
  embedding_prompts: { query: c.embeddingPrompts.query, document: c.embeddingPrompts.document },
  rerank_model: c.rerankModel,
  search_defaults: (c.searchDefaults as Record<string, unknown> | null) ?? null,
  ocr_languages: c.ocrLanguages ?? null,
  retention_days: c.retentionDays,
  metadata: c.metadata,
  created_at: c.createdAt,
});

function documentLine(d: DocumentRecord): DocumentLine {
  if (d.status !== "indexed" && d.status !== "failed") throw new Error(`document ${d.id} is ${d.status}: a corpus is exported once its indexing has settled`);
  return {
    id: d.id,
    filename: d.filename,
    content_type: d.contentType,
    format: d.format,
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
    ocr: d.ocr ? { engine: d.ocr.engine, languages: d.ocr.languages, pages: d.ocr.pages.map((p) => ({ ...p })) } : null,
  };
}

/** Writes the corpus's entries and its signed manifest into `pack`, then ends it. */
export async function packCorpus(source: BundleSource, pack: tar.Pack): Promise<BundleSummary> {
  const out = new EntryWriter(pack);
  await out.add(FORMAT_ENTRY, Buffer.from(JSON.stringify({ format: BUNDLE_FORMAT, version: BUNDLE_VERSION })));
  await out.add(CORPUS_ENTRY, Buffer.from(JSON.stringify(corpusEntry(source.corpus))));
  const documents = new PartWriter(out, "documents");
  const passages = new PartWriter(out, "passages");
  let documentCount = 0;
  let passageCount = 0;
  let originalBytes = 0;
  const { cipher } = source;
  // Every document first, so a reader creates them all before their contents come.
  const listed = new Map<string, string>();
  for await (const d of source.documents()) {
    await documents.push(documentLine(d));
    listed.set(d.id, d.sha256);
    documentCount++;
  }
  await documents.flush();
  for await (const d of source.documents()) {
    if (listed.get(d.id) !== d.sha256) throw new Error(`the corpus changed while it was exported (document ${d.id})`);
    listed.delete(d.id);
    const original = await source.original(d.id);
    await out.add(originalName(d.id), original);
    originalBytes += original.length;
    if (d.ocr && d.ocr.pages.length > 0) {
      const lines: string[] = [];
      for (const p of d.ocr.pages) {
        const page = await source.ocrPage(d.id, p.page);
        if (page) lines.push(JSON.stringify({ page: page.page, width: page.width, height: page.height, words: openOcrWords(cipher, d.id, page).map((w) => [w.text, ...w.box, w.confidence]) }));
      }
      if (lines.length > 0) await out.add(ocrName(d.id), Buffer.from(`${lines.join("\n")}\n`, "utf8"));
    }
    for (const chunk of await source.chunksOf(d.id)) {
      const content = openContent(cipher, chunk.id, chunk.content);
      const line: PassageLine = {
        document_id: d.id,
        index: chunk.index,
        start: chunk.start,
        end: chunk.end,
        page_start: chunk.pageStart,
        page_end: chunk.pageEnd,
        token_count: chunk.tokenCount,
        text: content.text,
        heading_path: content.headingPath,
        ...(content.pageBreaks ? { page_breaks: content.pageBreaks } : {}),
        ...(content.context ? { context: content.context } : {}),
      };
      const vector = openVector(cipher, chunk.id, chunk.vector);
      if (vector.length !== source.corpus.dimensions) throw new Error(`passage ${chunk.id} has ${vector.length} dimensions, not the corpus's ${source.corpus.dimensions}`);
      await passages.push(line, vector);
      passageCount++;
    }
  }
  if (listed.size > 0) throw new Error("the corpus changed while it was exported (documents were deleted)");
  await passages.flush();
  const unsigned: UnsignedManifest = {
    format: BUNDLE_FORMAT,
    version: BUNDLE_VERSION,
    created_at: source.now,
    source: { instance: source.signer.keyId, exported_by: source.exportedBy, app_version: source.appVersion },
    corpus: { id: source.corpus.id, name: source.corpus.name },
    embedding_model: source.model,
    counts: { documents: documentCount, passages: passageCount, original_bytes: originalBytes },
    entries: out.entries,
  };
  const signed = { ...unsigned, key_id: source.signer.keyId, public_key: source.signer.publicKey };
  const manifest: Manifest = { ...signed, signature: source.signer.sign(signed) };
  await new Promise<void>((resolve, reject) => {
    const bytes = Buffer.from(JSON.stringify(manifest));
    pack.entry({ name: MANIFEST_ENTRY, size: bytes.length, mode: 0o600, mtime: new Date(0) }, bytes, (error) => (error ? reject(error) : resolve()));
  });
  pack.finalize();
  return { documents: documentCount, passages: passageCount, originalBytes, manifest };
}

/**
 * The bundle as an encrypted byte stream. `done` settles when the last entry is written
 * (with what was written, or the error that stopped it: the stream then fails too).
 */
export async function exportBundle(source: BundleSource, encryption: BundleEncryption): Promise<{ stream: Readable; done: Promise<BundleSummary> }> {
  const { Encrypter } = await import("age-encryption");
  const encrypter = new Encrypter();
  if ("passphrase" in encryption) encrypter.setPassphrase(encryption.passphrase);
  else for (const r of encryption.recipients) encrypter.addRecipient(r);
  const { default: tarStream } = await import("tar-stream");
  const pack = tarStream.pack();
  const done = packCorpus(source, pack).catch((error: unknown) => {
    pack.destroy(error instanceof Error ? error : new Error(String(error)));
    throw error;
  });
  // Observed here so an export that fails is not also an unhandled rejection; the caller awaits it.
  done.catch(() => undefined);
  const encrypted = await encrypter.encrypt(webStreamOf(pack as AsyncIterable<Uint8Array>));
  return { stream: Readable.fromWeb(encrypted as WebReadableStream<Uint8Array>), done };
}

/** A web stream pulling from an async-iterable byte source (the tar stream), one chunk per pull: its backpressure holds. */
export function webStreamOf(source: AsyncIterable<Uint8Array>): ReadableStream<Uint8Array> {
  const it = source[Symbol.asyncIterator]();
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const next = await it.next();
      if (next.done) controller.close();
      else controller.enqueue(next.value);
    },
    async cancel(reason) {
      await it.return?.(reason);
    },
  });
}
