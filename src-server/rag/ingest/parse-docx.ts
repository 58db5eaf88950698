/**
 * Word documents: the archive is vetted first (zip bombs refused), then mammoth
 * renders semantic HTML (headings from paragraph styles, lists from numbering,
 * tables), which goes through the same path as HTML pages.
 */
import mammoth from "mammoth";
import { inspectDocxArchive } from "./inspect-docx-archive.js";
import { htmlToDocument } from "./parse-html.js";
import { ParseError, type ParsedDocument } from "./types.js";

/** At most this many distinct mammoth warnings are kept on the document. */
const MAX_WARNINGS = 5;

/** Images are not converted (their bytes are never read); alt text survives through the HTML path. */
const skipImages = mammoth.images.imgElement(() => Promise.resolve({ src: "" }));

/**
 * Parses a DOCX file. The title is `dc:title` from the document properties, else the first heading 1.
 * @throws ParseError `corrupt_document`, `document_too_large`, `document_too_complex`, `empty_document`.
 */
export async function parseDocx(bytes: Uint8Array): Promise<ParsedDocument> {
  const { title } = await inspectDocxArchive(bytes);
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let html: string;
  let messages: string[];
  try {
    const result = await mammoth.convertToHtml({ buffer }, { convertImage: skipImages, ignoreEmptyParagraphs: true, externalFileAccess: false });
    html = result.value;
    messages = result.messages.map((m) => m.message);
  } catch (error) {
    throw new ParseError("corrupt_document", `The Word document could not be read: ${(error instanceof Error ? error.message : String(error)).slice(0, 200)}`);
  }
  const warnings = [...new Set(messages)].slice(0, MAX_WARNINGS);
  const document = htmlToDocument(html, "docx", warnings);
  return title ? { ...document, title } : document;
}
