/**
 * PDF files with pdf.js (legacy build for Node, no eval, no font loading): text
 * runs per page → lines → paragraphs, headings by font size, page numbers on
 * every block. Encrypted and damaged files fail with a clear error.
 *
 * Scans: each page's text layer is judged (`ocr/text-layer.ts`); a page with none, too
 * little or garbage is rendered at 300 DPI and read by OCR in the corpus's languages, page
 * by page with progress (a page OCR finds nothing on keeps what its text layer had).
 * Rendering decodes the page's images, which text extraction never does, so it reads a
 * second copy of the file whose images were checked for size (`inspectPdfStreams` with
 * `keepImages`); asking pdf.js which pages draw images would decode them too.
 */
import { createCanvas } from "@napi-rs/canvas";
import { createRequire } from "node:module";
import path from "node:path";
import { getDocument, type PDFDocumentProxy, type PDFPageProxy } from "pdfjs-dist/legacy/build/pdf.mjs";
import { DocumentBuilder } from "./document-builder.js";
import { inspectPdfStreams } from "./inspect-pdf-streams.js";
import { OCR_DPI, OCR_LIMITS, ocrEngineName, ocrUnavailable, recognisePage, type RecognisedPage } from "./ocr/ocr-pages.js";
import type { PageImage } from "./ocr/deskew.js";
import { judgeTextLayer } from "./ocr/text-layer.js";
import { HEADING_RATIO, linesToBlocks, runsToLines, type PdfLine, type TextRun } from "./pdf-layout.js";
import { DEFAULT_PARSE_SETTINGS, ParseError, type OcrPage, type OcrReport, type ParseContext, type ParsedDocument } from "./types.js";

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
 * What rendering needs that text extraction does not: the standard 14 fonts' outlines (a PDF
 * may use Helvetica without embedding it), CMaps for CJK text, and the JPEG 2000 decoder many
 * scanners write. All ship inside pdfjs-dist, read from disk: nothing is fetched.
 */
const PDFJS_DIR = path.dirname(createRequire(import.meta.url).resolve("pdfjs-dist/package.json"));
const RENDER_OPTIONS = {
  standardFontDataUrl: `${path.join(PDFJS_DIR, "standard_fonts")}/`,
  cMapUrl: `${path.join(PDFJS_DIR, "cmaps")}/`,
  cMapPacked: true,
  wasmUrl: `${path.join(PDFJS_DIR, "wasm")}/`,
} as const;

/** Largest side of a page rendered for OCR, in pixels (a poster-sized page is scaled down to it). */
const MAX_RENDER_SIDE = 10_000;

/** A page to read by OCR, and why its text layer was not enough. */
interface ScanPage {
  page: number;
  reason: OcrPage["reason"];
}

/**
 * Parses a PDF. The title is the document's Title property, else its first heading.
 * @throws ParseError `encrypted_document` (password needed), `corrupt_document`, `empty_document` (no text,
 *   nothing to OCR), `ocr_unavailable` (scanned, and no OCR engine or language data), `document_too_large`
 *   (a decompression bomb, see `inspectPdfStreams`; more pages to OCR than the limit), `image_too_large`.
 */
export async function parsePdf(bytes: Uint8Array, context?: ParseContext): Promise<ParsedDocument> {
  const settings = context?.settings ?? DEFAULT_PARSE_SETTINGS;
  // pdf.js refuses Node Buffers, and detaches (transfers) the buffer it is given: it gets its own
  // copy, the one the inspection vetted (with image filters disabled).
  const pdf = await open(await inspectPdfStreams(bytes));
  const pages: PdfLine[][] = [];
  const unreadable: number[] = [];
  const scans: ScanPage[] = [];
  let title: string | null;
  try {
    for (let number = 1; number <= pdf.numPages; number++) {
      try {
        const page = await pdf.getPage(number);
        const content = await page.getTextContent();
        pages.push(runsToLines(content.items.flatMap(toRun)));
        const verdict = judgeTextLayer(pages.at(-1)!.map((l) => l.text).join("\n")).verdict;
        if (verdict !== "usable") scans.push({ page: number, reason: verdict === "none" ? "no_text_layer" : verdict === "too_little" ? "too_little_text" : "garbled_text_layer" });
        page.cleanup();
      } catch {
        unreadable.push(number);
        pages.push([]);
      }
    }
    if (unreadable.length === pdf.numPages) throw new ParseError("corrupt_document", "The PDF is damaged: none of its pages can be read.");
    title = await documentTitle(pdf);
  } finally {
    await pdf.destroy();
  }
  const warnings: string[] = [];
  const read = new Map<number, RecognisedPage>();
  if (scans.length > 0) {
    const why = await ocrUnavailable(settings);
    if (why === null) {
      if (scans.length > OCR_LIMITS.maxPages) {
        throw new ParseError("document_too_large", `The PDF has ${scans.length} scanned pages; at most ${OCR_LIMITS.maxPages} are read by OCR in one document. Split it and upload the parts.`);
      }
      try {
        for (const page of await ocrPages(bytes, scans, settings, context)) read.set(page.report.page, page);
      } catch (error) {
        // An image too large to render, or a page OCR could not finish: the pages with a text
        // layer are still the document; said in its warnings. Nothing else: the reason fails it.
        const scanned = scans.map((s) => s.page);
        if (!(error instanceof ParseError) || !pages.some((lines, i) => lines.length > 0 && !scanned.includes(i + 1))) throw error;
        warnings.push(`Pages ${scanned.join(", ")} were not read by OCR: ${error.message}`);
      }
    } else {
      const scanned = scans.map((s) => s.page);
      const usable = pages.some((lines, i) => lines.length > 0 && !scanned.includes(i + 1));
      if (!usable) throw new ParseError("ocr_unavailable", `The PDF is a scan (its pages are images without text) and cannot be read: ${why}`);
      warnings.push(`Pages ${scanned.join(", ")} are scanned images and were not read: ${why}`);
    }
  }
  const engine = read.size > 0 ? await ocrEngineName(settings) : "";
  return build(pages, unreadable, title, read, warnings, { engine, languages: settings.ocrLanguages });
}

async function open(data: Uint8Array, forRendering = false): Promise<PDFDocumentProxy> {
  const task = getDocument({ ...PDF_OPTIONS, ...(forRendering ? RENDER_OPTIONS : {}), data });
  try {
    return await task.promise;
  } catch (error) {
    await task.destroy().catch(() => undefined);
    throw loadError(error);
  }
}

/**
 * Renders each scanned page and reads it. The copy rendered keeps its images (checked for
 * size); one page's canvas at a time, released before the next.
 */
async function ocrPages(bytes: Uint8Array, scans: ScanPage[], settings: ParseContext["settings"], context: ParseContext | undefined): Promise<RecognisedPage[]> {
  const pdf = await open(await inspectPdfStreams(bytes, { keepImages: true }), true);
  const out: RecognisedPage[] = [];
  try {
    context?.progress(0, scans.length);
    for (const [i, scan] of scans.entries()) {
      const page = await pdf.getPage(scan.page);
      const image = await renderPage(page);
      page.cleanup();
      out.push(await recognisePage(image, scan.page, scan.reason, settings, OCR_DPI));
      context?.progress(i + 1, scans.length);
    }
  } finally {
    await pdf.destroy();
  }
  return out;
}

/** The page's pixels at 300 DPI (RGBA), scaled down to stay within the OCR page limits. */
async function renderPage(page: PDFPageProxy): Promise<PageImage> {
  const unit = page.getViewport({ scale: 1 });
  const pixelsAtOne = unit.width * unit.height;
  const scale = Math.min(OCR_DPI / 72, Math.sqrt(OCR_LIMITS.maxPagePixels / Math.max(1, pixelsAtOne)), MAX_RENDER_SIDE / Math.max(1, unit.width, unit.height));
  const viewport = page.getViewport({ scale });
  const canvas = createCanvas(Math.max(1, Math.ceil(viewport.width)), Math.max(1, Math.ceil(viewport.height)));
  const context = canvas.getContext("2d");
  // White behind the page: a scan's transparent parts must not read as black.
  context.fillStyle = "#ffffff";
  context.fillRect(0, 0, canvas.width, canvas.height);
  // pdf.js's types name the DOM's canvas; @napi-rs/canvas is the one it uses in Node.
  const parameters = { canvasContext: context, canvas, viewport };
  await page.render(parameters).promise;
  const pixels = context.getImageData(0, 0, canvas.width, canvas.height).data;
  return { pixels: Buffer.from(pixels.buffer, pixels.byteOffset, pixels.byteLength), width: canvas.width, height: canvas.height, channels: 4 };
}

function build(pages: PdfLine[][], unreadable: number[], title: string | null, read: Map<number, RecognisedPage>, warnings: string[], ocrBy: { engine: string; languages: string[] }): ParsedDocument {
  const textPages = pages.filter((_, i) => !read.has(i + 1));
  const bodySize = bodyFontSize(textPages.flat());
  const levelOf = headingLevels(textPages.flat(), bodySize);
  const builder = new DocumentBuilder();
  const textless: number[] = [];
  let firstHeading: string | null = null;
  pages.forEach((lines, index) => {
    const page = index + 1;
    const recognised = read.get(page);
    if (recognised && recognised.blocks.length > 0 && readsMore(recognised, lines)) {
      for (const block of recognised.blocks) {
        if (block.kind === "heading" && block.level === 1) firstHeading ??= block.text;
        builder.add({ kind: block.kind, text: block.text, level: block.level, page });
      }
      return;
    }
    if (lines.length === 0 && !unreadable.includes(page)) textless.push(page);
    for (const block of linesToBlocks(lines, bodySize, levelOf)) {
      if (block.kind === "heading" && block.level === 1) firstHeading ??= block.text;
      builder.add({ ...block, page });
    }
  });
  if (builder.blockCount === 0) {
    if (read.size > 0) throw new ParseError("empty_document", `The PDF has no text layer, and OCR found no text on its page${read.size > 1 ? "s" : ""}.`);
    throw new ParseError("empty_document", "The PDF holds no text.");
  }
  if (unreadable.length > 0) warnings.push(`Pages ${unreadable.join(", ")} could not be read and were skipped.`);
  if (textless.length > 0) warnings.push(`Pages ${textless.join(", ")} hold no text.`);
  // Pages OCR found nothing more on are not reported as read: they kept their text layer.
  const pagesRead = [...read.values()].filter((p) => p.blocks.length > 0 && readsMore(p, pages[p.report.page - 1] ?? [])).map((p) => p.report);
  const ocr: OcrReport | undefined = pagesRead.length > 0 ? { ...ocrBy, pages: pagesRead } : undefined;
  return { ...builder.build({ format: "pdf", pageCount: pages.length, title: title ?? firstHeading, warnings }), ...(ocr ? { ocr } : {}) };
}

/**
 * Whether OCR gave the page more than its text layer: always for a page without text or with
 * garbage; for a page with a little text (a stamp on a scan, or simply a short page), only
 * when OCR read more letters than the layer holds.
 */
function readsMore(recognised: RecognisedPage, lines: PdfLine[]): boolean {
  if (recognised.report.reason !== "too_little_text") return true;
  const letters = (text: string) => (text.match(/[\p{L}\p{N}]/gu) ?? []).length;
  return letters(recognised.blocks.map((b) => b.text).join(" ")) > letters(lines.map((l) => l.text).join(" "));
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
