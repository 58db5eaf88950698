/**
 * PDF files with pdf.js (legacy build for Node, no eval, no font loading): text
 * runs per page → lines → paragraphs, headings by font size, page numbers on
 * every block. Encrypted and damaged files fail with a clear error.
 *
 * Scans: each page's text layer is judged (`ocr/text-layer.ts`); a page with none, too
 * little or garbage, and an image on it, is rendered at 300 DPI and read by OCR in the
 * corpus's languages, page by page with progress. Rendering decodes the page's images,
 * which text extraction never does, so it reads a second copy of the file whose images
 * were checked for size (`inspectPdfStreams` with `keepImages`).
 */
import { createCanvas } from "@napi-rs/canvas";
import { getDocument, OPS, type PDFDocumentProxy, type PDFPageProxy } from "pdfjs-dist/legacy/build/pdf.mjs";
import { DocumentBuilder } from "./document-builder.js";
import { inspectPdfStreams } from "./inspect-pdf-streams.js";
import { OCR_DPI, OCR_LIMITS, ocrUnavailable, recognisePage, type RecognisedPage } from "./ocr/ocr-pages.js";
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

/** Operators that draw an image: a page without any has nothing for OCR to read. */
const IMAGE_OPS = new Set<number>([OPS.paintImageXObject, OPS.paintInlineImageXObject, OPS.paintImageMaskXObject, OPS.paintImageXObjectRepeat, OPS.paintImageMaskXObjectRepeat, OPS.paintSolidColorImageMask]);
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
        if (verdict !== "usable" && (await drawsImages(page))) scans.push({ page: number, reason: verdict === "none" ? "no_text_layer" : verdict === "too_little" ? "too_little_text" : "garbled_text_layer" });
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
      for (const page of await ocrPages(bytes, scans, settings, context)) read.set(page.report.page, page);
    } else {
      const scanned = scans.map((s) => s.page);
      const usable = pages.some((lines, i) => lines.length > 0 && !scanned.includes(i + 1));
      if (!usable) throw new ParseError("ocr_unavailable", `The PDF is a scan (its pages are images without text) and cannot be read: ${why}`);
      warnings.push(`Pages ${scanned.join(", ")} are scanned images and were not read: ${why}`);
    }
  }
  return build(pages, unreadable, title, read, warnings, settings.ocrLanguages);
}

async function open(data: Uint8Array): Promise<PDFDocumentProxy> {
  const task = getDocument({ ...PDF_OPTIONS, data });
  try {
    return await task.promise;
  } catch (error) {
    await task.destroy().catch(() => undefined);
    throw loadError(error);
  }
}

async function drawsImages(page: PDFPageProxy): Promise<boolean> {
  const operators = await page.getOperatorList();
  return operators.fnArray.some((op) => IMAGE_OPS.has(op));
}

/**
 * Renders each scanned page and reads it. The copy rendered keeps its images (checked for
 * size); one page's canvas at a time, released before the next.
 */
async function ocrPages(bytes: Uint8Array, scans: ScanPage[], settings: ParseContext["settings"], context: ParseContext | undefined): Promise<RecognisedPage[]> {
  const pdf = await open(await inspectPdfStreams(bytes, { keepImages: true }));
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

/** The page as a PNG at 300 DPI, scaled down to stay within the OCR page limits. */
async function renderPage(page: PDFPageProxy): Promise<Buffer> {
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
  type RenderParameters = Parameters<PDFPageProxy["render"]>[0];
  await page.render({ canvasContext: context as unknown as RenderParameters["canvasContext"], canvas: canvas as unknown as RenderParameters["canvas"], viewport }).promise;
  return canvas.encode("png");
}

function build(pages: PdfLine[][], unreadable: number[], title: string | null, read: Map<number, RecognisedPage>, warnings: string[], languages: string[]): ParsedDocument {
  const textPages = pages.filter((_, i) => !read.has(i + 1));
  const bodySize = bodyFontSize(textPages.flat());
  const levelOf = headingLevels(textPages.flat(), bodySize);
  const builder = new DocumentBuilder();
  const textless: number[] = [];
  let firstHeading: string | null = null;
  pages.forEach((lines, index) => {
    const page = index + 1;
    const recognised = read.get(page);
    if (recognised) {
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
    if (read.size > 0) throw new ParseError("empty_document", `OCR found no text on the scanned page${read.size > 1 ? "s" : ""} (${[...read.keys()].join(", ")}).`);
    throw new ParseError("empty_document", "The PDF holds no text, and no image that OCR could read.");
  }
  if (unreadable.length > 0) warnings.push(`Pages ${unreadable.join(", ")} could not be read and were skipped.`);
  if (textless.length > 0) warnings.push(`Pages ${textless.join(", ")} hold no text.`);
  const ocr: OcrReport | undefined = read.size > 0 ? { engine: "tesseract", languages, pages: [...read.values()].map((p) => p.report) } : undefined;
  return { ...builder.build({ format: "pdf", pageCount: pages.length, title: title ?? firstHeading, warnings }), ...(ocr ? { ocr } : {}) };
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
