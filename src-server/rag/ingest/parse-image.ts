/**
 * Image files (PNG, JPEG, TIFF with any number of pages) read by OCR. sharp (libvips) reads
 * the header first, so an image too large to decode or a TIFF with more pages than OCR takes
 * is refused before a pixel is decoded; each page is then turned upright (EXIF orientation),
 * made grey and handed to OCR as a PNG, one page at a time. A TIFF's frames are its pages
 * (a citation names the page); a PNG or JPEG is page 1.
 */
import sharp, { type Metadata } from "sharp";
import { DocumentBuilder } from "./document-builder.js";
import type { PageImage } from "./ocr/deskew.js";
import { OCR_DPI, OCR_LIMITS, ocrEngineName, ocrUnavailable, recognisePage, type RecognisedPage } from "./ocr/ocr-pages.js";
import { DEFAULT_PARSE_SETTINGS, ParseError, type DocumentFormat, type ParseContext, type ParsedDocument } from "./types.js";

/** Resolutions an image may claim and be believed (a photo's "72 DPI" says nothing of the page). */
const PLAUSIBLE_DPI: [number, number] = [150, 1200];

/**
 * Parses an image by OCR.
 * @throws ParseError `image_too_large` (a page above the pixel limit), `document_too_large` (more pages than
 *   OCR takes), `ocr_unavailable`, `corrupt_document` (not a readable image), `empty_document` (no text found).
 */
export async function parseImage(bytes: Uint8Array, context?: ParseContext, format: DocumentFormat = "png"): Promise<ParsedDocument> {
  const settings = context?.settings ?? DEFAULT_PARSE_SETTINGS;
  const input = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let meta: Metadata;
  try {
    // Only the header is read here.
    meta = await sharp(input, { limitInputPixels: false }).metadata();
  } catch (error) {
    throw new ParseError("corrupt_document", `The image is damaged or not an image (${error instanceof Error ? error.message.slice(0, 200) : String(error)}).`);
  }
  const width = meta.width ?? 0;
  const height = meta.height ?? 0;
  const pages = meta.pages ?? 1;
  if (width === 0 || height === 0) throw new ParseError("corrupt_document", "The image has no size in its header; it is damaged.");
  if (width * height > OCR_LIMITS.maxPagePixels) {
    throw new ParseError("image_too_large", `The image is ${width.toLocaleString("en")} × ${height.toLocaleString("en")} pixels; pages above ${Math.round(OCR_LIMITS.maxPagePixels / 1e6)} million pixels are not read. Scan at 300 DPI.`);
  }
  if (pages > OCR_LIMITS.maxPages) {
    throw new ParseError("document_too_large", `The image has ${pages.toLocaleString("en")} pages; at most ${OCR_LIMITS.maxPages} are read by OCR in one document. Split it and upload the parts.`);
  }
  const why = await ocrUnavailable(settings);
  if (why !== null) throw new ParseError("ocr_unavailable", `Images are read by OCR, which is not available: ${why}`);
  const density = meta.density && meta.density >= PLAUSIBLE_DPI[0] && meta.density <= PLAUSIBLE_DPI[1] ? Math.round(meta.density) : OCR_DPI;
  const read: RecognisedPage[] = [];
  const warnings: string[] = [];
  context?.progress(0, pages);
  for (let page = 0; page < pages; page++) {
    let image: PageImage;
    try {
      // Each frame's own size is checked again as it is decoded (a TIFF's frames may differ).
      const { data, info } = await sharp(input, { page, limitInputPixels: OCR_LIMITS.maxPagePixels }).rotate().greyscale().raw().toBuffer({ resolveWithObject: true });
      image = { pixels: data, width: info.width, height: info.height, channels: info.channels as 1 | 3 | 4 };
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      if (/pixel limit/i.test(message)) throw new ParseError("image_too_large", `Page ${page + 1} of the image is above ${Math.round(OCR_LIMITS.maxPagePixels / 1e6)} million pixels and is not read.`);
      if (pages === 1) throw new ParseError("corrupt_document", `The image is damaged (${message.slice(0, 200)}).`);
      warnings.push(`Page ${page + 1} could not be decoded and was skipped.`);
      context?.progress(page + 1, pages);
      continue;
    }
    read.push(await recognisePage(image, page + 1, "image", settings, density));
    context?.progress(page + 1, pages);
  }
  const builder = new DocumentBuilder();
  let firstHeading: string | null = null;
  for (const { blocks, report } of read) {
    for (const block of blocks) {
      // An image has no title property: its first heading, whatever its size, names it.
      if (block.kind === "heading") firstHeading ??= block.text;
      builder.add({ kind: block.kind, text: block.text, level: block.level, page: report.page });
    }
  }
  if (builder.blockCount === 0) throw new ParseError("empty_document", `OCR found no text in the image${pages > 1 ? `'s ${pages} pages` : ""}.`);
  const parsed = builder.build({ format, pageCount: pages, title: firstHeading, warnings });
  return { ...parsed, ocr: { engine: await ocrEngineName(settings), languages: settings.ocrLanguages, pages: read.map((r) => r.report) } };
}
