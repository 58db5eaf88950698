/**
 * The sources behind citations, for a reader to check them: a cited passage with the
 * passages around it, and the original document (decrypted) for viewers such as pdf.js.
 */
import type { Principal } from "../../domain/scopes.js";
import { invalidRequest, notFound } from "../../errors.js";
import type { EncryptedBlobStore } from "../../security/encrypted-blob-store.js";
import type { CorpusKeyring } from "../../security/corpus-keyring.js";
import type { ChunkStore, SealedChunk } from "../../store/chunk-store.js";
import type { DocumentRecord, DocumentStore } from "../../store/document-store.js";
import type { OcrPageStore } from "../../store/ocr-page-store.js";
import { openContent } from "../chunk-codec.js";
import type { CorpusService } from "../corpus-service.js";
import type { OcrWord } from "../ingest/types.js";
import { openOcrWords } from "../ocr-codec.js";

export interface PassageInContext {
  chunk: SealedChunk;
  document: DocumentRecord;
  text: string;
  headingPath: string[];
  before: string | null;
  after: string | null;
}

export interface DocumentText {
  document: DocumentRecord;
  text: string;
  /** Where each page begins in `text` (paged formats), by page. */
  pageStarts: { page: number; start: number }[];
  truncated: boolean;
}

export interface PageText {
  document: DocumentRecord;
  page: number;
  text: string;
  /** The passages (chunk ids) with text on this page. */
  passages: string[];
  previousPage: number | null;
  nextPage: number | null;
}

/** A page OCR read: the words it found, where they are on the page image, and how sure it was. */
export interface OcrPageWords {
  document: DocumentRecord;
  page: number;
  /** The page image's size in pixels (the boxes' frame). */
  width: number;
  height: number;
  confidence: number;
  words: OcrWord[];
}

/** A page of an image document, as an image a browser shows. */
export interface PageImage {
  contentType: "image/png" | "image/jpeg";
  bytes: Buffer;
}

export interface SourceServiceDeps {
  corpora: CorpusService;
  documents: DocumentStore;
  chunks: ChunkStore;
  keyring: CorpusKeyring;
  blobs: EncryptedBlobStore;
  ocrPages: OcrPageStore;
}

/** @throws 400 `invalid_page` unless `page` is a page number (1, 2, …). */
function checkPage(page: number): void {
  if (!Number.isInteger(page) || page < 1) throw invalidRequest("The page must be a page number (1, 2, …)", "invalid_page", "page");
}

/** Largest page image turned into a picture for the viewer (as OCR's own limit). */
const MAX_PAGE_IMAGE_PIXELS = 40_000_000;

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

  /**
   * A document's text as it was indexed, rebuilt from its passages (each is an exact slice
   * of the parsed text, so overlaps are dropped by offset), with where each page begins.
   * `maxChars` cuts it (the rest is reported as `truncated`).
   */
  async documentText(principal: Principal, corpusId: string, documentId: string, maxChars = Number.POSITIVE_INFINITY): Promise<DocumentText> {
    await this.deps.corpora.record(principal, corpusId);
    const document = await this.deps.documents.get(corpusId, documentId);
    if (!document) throw notFound(`No document '${documentId}' in this corpus`, "document_not_found", "document_id");
    const cipher = await this.deps.keyring.cipher(corpusId);
    let text = "";
    let end = 0;
    const pages = new Map<number, number>();
    let truncated = false;
    for (const chunk of await this.deps.chunks.ofDocument(documentId)) {
      if (chunk.end <= end) continue;
      if (text.length >= maxChars) {
        truncated = true;
        break;
      }
      const content = openContent(cipher, chunk.id, chunk.content);
      // A passage stored as an exact slice continues where the last one ended; otherwise it is appended whole.
      const exact = content.text.length === chunk.end - chunk.start && chunk.start <= end;
      const from = exact ? end - chunk.start : 0;
      const base = text.length - from;
      if (!exact && text.length > 0) text += "\n\n";
      for (const [offset, page] of content.pageBreaks ?? []) if (offset >= from && !pages.has(page)) pages.set(page, (exact ? base : text.length) + offset);
      if (content.pageBreaks === undefined && chunk.pageStart !== null && !pages.has(chunk.pageStart)) pages.set(chunk.pageStart, text.length);
      text += content.text.slice(from);
      end = chunk.end;
    }
    if (text.length > maxChars) {
      text = text.slice(0, maxChars);
      truncated = true;
    }
    return { document, text, pageStarts: [...pages].map(([page, start]) => ({ page, start })).sort((a, b) => a.page - b.page), truncated };
  }

  /** One page of a paged document (PDF): its text, and the passages on it. */
  async page(principal: Principal, corpusId: string, documentId: string, page: number): Promise<PageText> {
    const whole = await this.documentText(principal, corpusId, documentId);
    const { document } = whole;
    if (document.pageCount === null || whole.pageStarts.length === 0) throw invalidRequest(`'${document.filename}' has no pages (${document.format}); read its passages or the whole document instead`, "document_has_no_pages", "page");
    const at = whole.pageStarts.findIndex((p) => p.page === page);
    if (at < 0) throw invalidRequest(`'${document.filename}' has pages 1 to ${document.pageCount}; page ${page} holds no text`, "page_out_of_range", "page");
    const start = whole.pageStarts[at]!.start;
    const end = whole.pageStarts[at + 1]?.start ?? whole.text.length;
    const passages = (await this.deps.chunks.ofDocument(documentId)).filter((c) => c.pageStart !== null && c.pageStart <= page && (c.pageEnd ?? c.pageStart) >= page).map((c) => c.id);
    return { document, page, text: whole.text.slice(start, end).trim(), passages, previousPage: whole.pageStarts[at - 1]?.page ?? null, nextPage: whole.pageStarts[at + 1]?.page ?? null };
  }

  /**
   * The words OCR read on a page of a document, with their boxes, for a viewer to show where
   * a cited passage is on the page image.
   */
  async ocrPage(principal: Principal, corpusId: string, documentId: string, page: number): Promise<OcrPageWords> {
    await this.deps.corpora.record(principal, corpusId);
    const document = await this.deps.documents.get(corpusId, documentId);
    if (!document) throw notFound(`No document '${documentId}' in this corpus`, "document_not_found", "document_id");
    checkPage(page);
    const sealed = await this.deps.ocrPages.page(documentId, page);
    const summary = document.ocr?.pages.find((p) => p.page === page);
    if (!sealed || !summary) {
      const read = document.ocr?.pages.map((p) => p.page) ?? [];
      throw notFound(read.length > 0 ? `Page ${page} of '${document.filename}' was not read by OCR (pages read: ${read.join(", ")})` : `'${document.filename}' has no page read by OCR`, "page_not_ocr", "page");
    }
    const cipher = await this.deps.keyring.cipher(corpusId);
    return { document, page, width: sealed.width, height: sealed.height, confidence: summary.confidence, words: openOcrWords(cipher, documentId, sealed) };
  }

  /**
   * A page of an image document (PNG, JPEG, a TIFF's frame) as a browser shows it: turned
   * upright as OCR read it (EXIF orientation), a TIFF frame as PNG.
   */
  async pageImage(principal: Principal, corpusId: string, documentId: string, page: number): Promise<{ document: DocumentRecord; image: PageImage }> {
    const { document, bytes } = await this.original(principal, corpusId, documentId);
    checkPage(page);
    if (!["png", "jpeg", "tiff"].includes(document.format)) throw invalidRequest(`'${document.filename}' is not an image (${document.format}); read its pages from the document itself`, "document_not_image", "document_id");
    const { default: sharp } = await import("sharp");
    const frames = (await sharp(bytes, { limitInputPixels: false }).metadata().catch(() => ({ pages: 0 }))).pages ?? 1;
    if (page < 1 || page > frames) throw invalidRequest(`'${document.filename}' has ${frames === 1 ? "one page" : `pages 1 to ${frames}`}; there is no page ${page}`, "page_out_of_range", "page");
    try {
      const picture = sharp(bytes, { page: page - 1, limitInputPixels: MAX_PAGE_IMAGE_PIXELS }).rotate();
      const image: PageImage = document.format === "jpeg" ? { contentType: "image/jpeg", bytes: await picture.jpeg({ quality: 88 }).toBuffer() } : { contentType: "image/png", bytes: await picture.png().toBuffer() };
      return { document, image };
    } catch (error) {
      throw invalidRequest(`Page ${page} of '${document.filename}' cannot be shown (${error instanceof Error ? error.message : String(error)})`, "page_not_viewable", "page");
    }
  }

  /** The original file of a document of the caller's corpus. */
  async original(principal: Principal, corpusId: string, documentId: string): Promise<{ document: DocumentRecord; bytes: Buffer }> {
    await this.deps.corpora.record(principal, corpusId);
    const document = await this.deps.documents.get(corpusId, documentId);
    if (!document) throw notFound(`No document '${documentId}' in this corpus`, "document_not_found", "document_id");
    return { document, bytes: await this.deps.blobs.read(corpusId, documentId) };
  }
}
