/**
 * Documents as people see them: the files they uploaded at the top, and under each the
 * documents that came out of it (an e-mail's attachments, a mailbox's messages); and a
 * document's OCR in a few figures.
 */
import type { DocumentOcr, RagDocument } from "../api/contract.js";

/** Below this mean confidence (0–100) OCR's words are flagged as doubtful. */
export const LOW_OCR_CONFIDENCE = 70;

export type Relation = NonNullable<RagDocument["relation"]>;

/** The documents that came out of one document: how many, and of which kinds. */
export interface Children {
  count: number;
  attachments: number;
  messages: number;
}

export interface DocumentTree {
  /** Uploaded files (and documents whose parent is not in the list), in list order. */
  roots: RagDocument[];
  /** What came out of each document that has children, by its id. */
  children: Map<string, Children>;
}

/**
 * The rows of a list: documents whose parent is in it are left out (their parent's fold lists
 * them, fetched when opened); each document's children are as the server counts them, so a
 * mailbox of thousands of messages costs one row and no fetch until it is opened.
 */
export function documentTree(documents: readonly RagDocument[]): DocumentTree {
  const ids = new Set(documents.map((d) => d.id));
  const children = new Map<string, Children>();
  const roots: RagDocument[] = [];
  for (const doc of documents) {
    const parent = doc.parent_document_id;
    if (!parent || !ids.has(parent)) roots.push(doc);
    const { attachments, messages } = doc.children;
    if (attachments + messages > 0) children.set(doc.id, { count: attachments + messages, attachments, messages });
  }
  return { roots, children };
}

export interface OcrFigures {
  pages: number;
  /** Mean word confidence over the OCR'd pages, weighted by their words (0–100, rounded). */
  confidence: number;
  low: boolean;
  /** Pages below the threshold. */
  lowPages: number[];
}

export function ocrFigures(ocr: DocumentOcr | null | undefined): OcrFigures | null {
  if (!ocr || ocr.pages.length === 0) return null;
  const words = ocr.pages.reduce((n, p) => n + p.words, 0);
  const mean = words > 0 ? ocr.pages.reduce((s, p) => s + p.confidence * p.words, 0) / words : ocr.pages.reduce((s, p) => s + p.confidence, 0) / ocr.pages.length;
  const confidence = Math.round(mean);
  return { pages: ocr.pages.length, confidence, low: mean < LOW_OCR_CONFIDENCE, lowPages: ocr.pages.filter((p) => p.confidence < LOW_OCR_CONFIDENCE).map((p) => p.page) };
}
