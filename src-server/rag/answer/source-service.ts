/**
 * The sources behind citations, for a reader to check them: a cited passage with the
 * passages around it, and the original document (decrypted) for viewers such as pdf.js.
 */
import type { Principal } from "../../domain/scopes.js";
import { notFound } from "../../errors.js";
import type { EncryptedBlobStore } from "../../security/encrypted-blob-store.js";
import type { CorpusKeyring } from "../../security/corpus-keyring.js";
import type { ChunkStore, SealedChunk } from "../../store/chunk-store.js";
import type { DocumentRecord, DocumentStore } from "../../store/document-store.js";
import { openContent } from "../chunk-codec.js";
import type { CorpusService } from "../corpus-service.js";

export interface PassageInContext {
  chunk: SealedChunk;
  document: DocumentRecord;
  text: string;
  headingPath: string[];
  before: string | null;
  after: string | null;
}

export interface SourceServiceDeps {
  corpora: CorpusService;
  documents: DocumentStore;
  chunks: ChunkStore;
  keyring: CorpusKeyring;
  blobs: EncryptedBlobStore;
}

export class SourceService {
  constructor(private readonly deps: SourceServiceDeps) {}

  /** A chunk of the caller's corpus with the text of its neighbours in the document. */
  async passage(principal: Principal, corpusId: string, chunkId: string): Promise<PassageInContext> {
    await this.deps.corpora.record(principal, corpusId);
    const [chunk] = await this.deps.chunks.byIds([chunkId]);
    const document = chunk && chunk.corpusId === corpusId ? await this.deps.documents.get(corpusId, chunk.documentId) : undefined;
    if (!chunk || !document) throw notFound(`No chunk '${chunkId}' in this corpus`, "chunk_not_found", "chunk_id");
    const cipher = await this.deps.keyring.cipher(corpusId);
    const open = (c: SealedChunk | undefined) => (c ? openContent(cipher, c.id, c.content) : null);
    const neighbours = await this.deps.chunks.neighbours(chunk.documentId, chunk.index);
    const content = open(chunk)!;
    return { chunk, document, text: content.text, headingPath: content.headingPath, before: open(neighbours.before)?.text ?? null, after: open(neighbours.after)?.text ?? null };
  }

  /** The original file of a document of the caller's corpus. */
  async original(principal: Principal, corpusId: string, documentId: string): Promise<{ document: DocumentRecord; bytes: Buffer }> {
    await this.deps.corpora.record(principal, corpusId);
    const document = await this.deps.documents.get(corpusId, documentId);
    if (!document) throw notFound(`No document '${documentId}' in this corpus`, "document_not_found", "document_id");
    return { document, bytes: await this.deps.blobs.read(corpusId, documentId) };
  }
}
