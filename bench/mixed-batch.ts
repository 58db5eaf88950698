/**
 * The 100-file mixed batch of the ingestion benchmark: the bilingual eval documents as
 * text/Markdown/HTML, PDF and DOCX, each copy titled so no two files are the same.
 */
import { readFileSync, readdirSync } from "node:fs";
import path from "node:path";
import { buildDocx, type DocxBlock } from "../test/fixtures/documents/build-docx.js";
import { buildPdf, type PdfPage } from "../test/fixtures/documents/build-pdf.js";

const EVAL_DOCS = path.join(import.meta.dirname, "..", "test", "fixtures", "eval", "docs");

/** Paragraphs of a Markdown/text document, headings marked. */
function paragraphs(text: string): { heading: boolean; text: string }[] {
  return text
    .replace(/<[^>]+>/g, " ")
    .split(/\n\s*\n/)
    .map((p) => p.trim())
    .filter(Boolean)
    .map((p) => ({ heading: p.startsWith("#"), text: p.replace(/^#+\s*/, "").replace(/\s+/g, " ") }));
}

function toPdf(title: string, body: { heading: boolean; text: string }[]): Uint8Array {
  const pages: PdfPage[] = [];
  let texts: PdfPage["texts"] = [];
  let y = 780;
  const emit = (text: string, size: number) => {
    if (y < 60) {
      pages.push({ texts });
      texts = [];
      y = 780;
    }
    texts.push({ x: 56, y, size, text });
    y -= size + 4;
  };
  emit(title, 16);
  for (const p of body) {
    if (p.heading) emit(p.text, 13);
    else for (let i = 0; i < p.text.length; i += 95) emit(p.text.slice(i, i + 95), 10);
    y -= 8;
  }
  pages.push({ texts });
  return buildPdf(pages);
}

async function toDocx(title: string, body: { heading: boolean; text: string }[]): Promise<Uint8Array> {
  const blocks: DocxBlock[] = [{ heading: 1, text: title }, ...body.map((p): DocxBlock => (p.heading ? { heading: 2, text: p.text } : { paragraph: p.text }))];
  return buildDocx(blocks, { title });
}

export async function mixedBatch(): Promise<{ name: string; bytes: Uint8Array }[]> {
  const sources = readdirSync(EVAL_DOCS).sort();
  const files: { name: string; bytes: Uint8Array }[] = [];
  for (let i = 0; files.length < 100; i++) {
    const source = sources[i % sources.length]!;
    const round = Math.floor(i / sources.length);
    const raw = readFileSync(path.join(EVAL_DOCS, source), "utf8");
    const title = `Copy ${round} of ${source}`;
    const kind = i % 3;
    if (kind === 0) files.push({ name: `${round}-${source}`, bytes: Buffer.from(`${raw}\n\n${title}\n`) });
    else if (kind === 1) files.push({ name: `${round}-${source}.pdf`, bytes: toPdf(title, paragraphs(raw)) });
    else files.push({ name: `${round}-${source}.docx`, bytes: await toDocx(title, paragraphs(raw)) });
  }
  return files;
}
