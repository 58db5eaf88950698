/**
 * OCR accuracy on scans of the project's own English and Malay documents (issue 34): the
 * fixture PDFs rendered to page images by pdftoppm at 300 DPI (clean) and at 150 DPI turned
 * 2.5° with noise (ImageMagick), wrapped as image-only PDFs by img2pdf, parsed as uploads
 * are (in the parse worker), and compared with the text the same documents give from their
 * text layers. Character error rate at most 2% clean and 5% noisy and askew, both languages.
 */
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { ScanWorkshop } from "../../../../test/fixtures/ocr/build-scans.js";
import { characterErrorRate } from "../../../../test/helpers/cer.js";
import { parseDocument } from "../parse-document.js";
import type { ParsedDocument } from "../types.js";

const DOCUMENTS = path.resolve(import.meta.dirname, "../../../../test/fixtures/documents");

/**
 * Text as a reader compares it: Markdown table marks and list bullets are layout, not the
 * document's characters (the text layer gives tables as Markdown, OCR as rows of words).
 */
function comparable(text: string): string {
  return text
    .replace(/^\|?(?:\s*-{3,}\s*\|)+\s*-{3,}\s*\|?\s*$/gm, " ")
    .replace(/^\s*-{3,}\s*$/gm, " ")
    .replace(/[|•▪◦●*]/g, " ");
}

describe("OCR of scanned English and Malay documents", { timeout: 600_000 }, () => {
  let shop: ScanWorkshop;
  const sources: Record<"en" | "ms", { pdf: string; text: ParsedDocument }> = {} as never;

  before(async () => {
    shop = await ScanWorkshop.open();
    const [malay] = await shop.printToPdf([path.join(DOCUMENTS, "laporan-ms.txt")]);
    for (const [language, pdf] of [["en", path.join(DOCUMENTS, "report.pdf")], ["ms", malay!]] as const) {
      const text = await parseDocument(await readFile(pdf), "pdf");
      assert.equal(text.ocr, undefined, `${language}: a text layer is read as it is, without OCR`);
      sources[language] = { pdf, text };
    }
  });
  after(() => shop?.close());

  const cases = [
    { name: "clean, 300 DPI", options: { dpi: 300 }, limit: 0.02 },
    { name: "noisy, 150 DPI, turned 2.5°", options: { dpi: 150, skew: 2.5, noise: 0.5 }, limit: 0.05 },
  ];
  for (const language of ["en", "ms"] as const) {
    for (const { name, options, limit } of cases) {
      it(`${language === "en" ? "English" : "Malay"}, ${name}: character error rate at most ${limit * 100}%`, async (t) => {
        const source = sources[language];
        const scan = await shop.scan(source.pdf, { ...options, skew: options.skew === undefined ? undefined : language === "en" ? -options.skew : options.skew });
        const progress: [number, number][] = [];
        const parsed = await parseDocument(await readFile(scan), "pdf", { timeoutMs: 300_000, onProgress: (done, total) => progress.push([done, total]) });
        const cer = characterErrorRate(comparable(source.text.text), comparable(parsed.text));
        t.diagnostic(`CER ${(cer * 100).toFixed(2)}%, confidence ${parsed.ocr?.pages.map((p) => p.confidence).join(", ")}`);
        assert.ok(cer <= limit, `CER ${(cer * 100).toFixed(2)}% above ${limit * 100}%:\n${parsed.text}`);

        const pages = source.text.pageCount!;
        assert.equal(parsed.pageCount, pages);
        assert.deepEqual(parsed.ocr?.pages.map((p) => [p.page, p.reason]), Array.from({ length: pages }, (_, i) => [i + 1, "no_text_layer"]), "every page is reported as OCR'd, with why");
        assert.deepEqual(parsed.ocr?.languages, ["eng", "msa"]);
        for (const page of parsed.ocr?.pages ?? []) {
          assert.ok(page.confidence > 80, `page ${page.page} confidence ${page.confidence}`);
          assert.ok(page.words.length > 20 && page.words.every((w) => w.box[2] > 0 && w.box[3] > 0 && w.box[0] + w.box[2] <= page.width && w.box[1] + w.box[3] <= page.height), "words have boxes on the page");
          if (options.skew) assert.ok(Math.abs(Math.abs(page.deskewed ?? 0) - options.skew) <= 0.3, `page ${page.page} straightened by ${page.deskewed}°`);
        }
        assert.deepEqual(progress, Array.from({ length: pages + 1 }, (_, i) => [i, pages]), "progress is reported page by page");
        // Blocks carry their page, as a text layer's do: citations name the page.
        assert.deepEqual([...new Set(parsed.blocks.map((b) => b.page))], Array.from({ length: pages }, (_, i) => i + 1));
      });
    }
  }
});
