/**
 * PDF files with pdf.js (legacy build for Node, no eval, no font loading): text
 * runs per page → lines → paragraphs, headings by font size, page numbers on
 * every block. Encrypted and damaged files fail with a clear error.
 */
import { getDocument, type PDFDocumentProxy } from "pdfjs-dist/legacy/build/pdf.mjs";
import { DocumentBuilder } from "./document-builder.js";
import { inspectPdfStreams } from "./inspect-pdf-streams.js";
import { HEADING_RATIO, linesToBlocks, runsToLines, type PdfLine, type TextRun } from "./pdf-layout.js";
import { ParseError, type ParsedDocument } from "./types.js";

/** pdf.js options for text extraction in Node: nothing evaluated, rendered, fetched or logged. */
const PDF_OPTIONS = {
  isEvalSupported: false,
  disableFontFace: true,
  useSystemFonts: false,
  useWorkerFetch: false,
  isOffscreenCanvasSupported: false,
  isImageDecoderSupported: false,
  disableAutoFetch: true,
  disableStream: true,
  verbosity: 0,
} as const;

/**
 * Parses a PDF. The title is the document's Title property, else its first heading.
 * @throws ParseError `encrypted_document` (password needed), `corrupt_document`, `empty_document` (no text layer),
 *   `document_too_large` (a decompression bomb; see `inspectPdfStreams`).
 */
export async function parsePdf(bytes: Uint8Array): Promise<ParsedDocument> {
  // pdf.js refuses Node Buffers, and detaches (transfers) the buffer it is given: it gets its own
  // copy, the one the inspection vetted (with image filters disabled).
  const task = getDocument({ ...PDF_OPTIONS, data: await inspectPdfStreams(bytes) });
  let pdf: PDFDocumentProxy;
  try {
    pdf = await task.promise;
  } catch (error) {
    await task.destroy().catch(() => undefined);
    throw loadError(error);
  }
  try {
    const pages: PdfLine[][] = [];
    const unreadable: number[] = [];
    for (let number = 1; number <= pdf.numPages; number++) {
      try {
        const page = await pdf.getPage(number);
        const content = await page.getTextContent();
        pages.push(runsToLines(content.items.flatMap(toRun)));
        page.cleanup();
      } catch {
        unreadable.push(number);
        pages.push([]);
      }
    }
    if (unreadable.length === pdf.numPages) throw new ParseError("corrupt_document", "The PDF is damaged: none of its pages can be read.");
    return build(pages, unreadable, await documentTitle(pdf));
  } finally {
    await pdf.destroy();
  }
}

function build(pages: PdfLine[][], unreadable: number[], title: string | null): ParsedDocument {
  const bodySize = bodyFontSize(pages.flat());
  const levelOf = headingLevels(pages.flat(), bodySize);
  const builder = new DocumentBuilder();
  const textless: number[] = [];
  let firstHeading: string | null = null;
  pages.forEach((lines, index) => {
    const page = index + 1;
    if (lines.length === 0 && !unreadable.includes(page)) textless.push(page);
    for (const block of linesToBlocks(lines, bodySize, levelOf)) {
      if (block.kind === "heading" && block.level === 1) firstHeading ??= block.text;
      builder.add({ ...block, page });
    }
  });
  if (builder.blockCount === 0) {
    throw new ParseError("empty_document", "The PDF has no text layer (scanned pages are images, and OCR is not supported).");
  }
  const warnings: string[] = [];
  if (unreadable.length > 0) warnings.push(`Pages ${unreadable.join(", ")} could not be read and were skipped.`);
  if (textless.length > 0) warnings.push(`Pages ${textless.join(", ")} have no text layer (scanned images are not read).`);
  return builder.build({ format: "pdf", pageCount: pages.length, title: title ?? firstHeading, warnings });
}

/** Text items only (marked-content markers have no `str`); size from the text matrix. */
function toRun(item: object): TextRun[] {
  if (!("str" in item) || typeof item.str !== "string" || !("transform" in item) || !Array.isArray(item.transform)) return [];
  const [a = 0, b = 0, c = 0, d = 0, x = 0, y = 0] = item.transform as number[];
  const height = "height" in item && typeof item.height === "number" ? item.height : 0;
  const size = height > 0 ? height : Math.hypot(c, d) || Math.hypot(a, b);
  const width = "width" in item && typeof item.width === "number" ? item.width : 0;
  const hasEOL = "hasEOL" in item && item.hasEOL === true;
  return [{ text: item.str, x, y, width, size: Math.round(size * 10) / 10, hasEOL }];
}

/** The font size most characters are set in (weighted median over lines). */
function bodyFontSize(lines: PdfLine[]): number {
  const sorted = lines.filter((l) => l.size > 0).sort((p, q) => p.size - q.size);
  const total = sorted.reduce((sum, l) => sum + l.text.length, 0);
  let seen = 0;
  for (const line of sorted) {
    seen += line.text.length;
    if (seen * 2 >= total) return line.size;
  }
  return 10;
}

/** Heading levels by font size: the largest heading size is level 1, the next level 2, and so on. */
function headingLevels(lines: PdfLine[], bodySize: number): (size: number) => number {
  const sizes = [...new Set(lines.filter((l) => l.size >= bodySize * HEADING_RATIO).map((l) => Math.round(l.size * 2) / 2))].sort((p, q) => q - p);
  return (size) => Math.min(6, Math.max(1, sizes.indexOf(Math.round(size * 2) / 2) + 1));
}

async function documentTitle(pdf: PDFDocumentProxy): Promise<string | null> {
  try {
    const { info } = await pdf.getMetadata();
    const title = (info as { Title?: unknown } | null)?.Title;
    return typeof title === "string" && title.trim() !== "" ? title.trim() : null;
  } catch {
    return null;
  }
}

function loadError(error: unknown): ParseError {
  const name = error instanceof Error ? error.name : "";
  if (name === "PasswordException") return new ParseError("encrypted_document", "The PDF is password-protected; remove the password and upload it again.");
  const detail = error instanceof Error && error.message ? ` (${error.message.slice(0, 200)})` : "";
  return new ParseError("corrupt_document", `The PDF is damaged or not a PDF${detail}.`);
}
