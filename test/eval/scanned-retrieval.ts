/**
 * Retrieval on scans (issue 34): the bilingual evaluation set (test/fixtures/eval, 14 English
 * and 14 Malay documents) printed to PDF by LibreOffice, then scanned as a scanner would —
 * pdftoppm renders each page in grey at 200 DPI, ImageMagick turns it 1.5° and adds noise,
 * img2pdf wraps the pages into image-only PDFs — and both sets indexed in corpora of their
 * own through the API with a real embedding model. The same questions are asked of both:
 * recall@5 on the scans must stay within 5 points of the text-layer PDFs'. Also reported:
 * the time OCR took per page.
 *
 *   npm run eval:scans            (about 15 minutes on two cores)
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { ScanWorkshop } from "../fixtures/ocr/build-scans.js";
import { REPO_ROOT, testModel } from "../helpers/models.js";
import { upload, waitForStatus } from "../helpers/rag.js";
import { startTestServer, type TestServer } from "../helpers/test-server.js";
import { isRelevant, loadEvalSet } from "./retrieval-eval.js";

const EVAL_DOCS = path.join(REPO_ROOT, "test", "fixtures", "eval", "docs");

async function indexed(t: TestServer, name: string, files: { name: string; content: Buffer }[]): Promise<{ id: string; seconds: number; pages: number; ocrPages: number; confidence: number[] }> {
  const corpus = (await t.call("POST", "/v1/rag/corpora", { name, embedding_model: "minilm" })).json;
  const started = Date.now();
  for (let i = 0; i < files.length; i += 20) {
    const res = await upload(t, corpus.id, files.slice(i, i + 20));
    if (res.status !== 202 || res.json.rejected.length > 0) throw new Error(`upload: ${res.status} ${JSON.stringify(res.json)}`);
  }
  const ready = await waitForStatus(t, corpus.id, 3_600_000);
  if (ready.document_counts.failed > 0) throw new Error(`${ready.document_counts.failed} documents failed in ${name}`);
  const docs = (await t.call("GET", `/v1/rag/corpora/${corpus.id}/documents?limit=100`)).json.data as { page_count: number; ocr: { pages: { confidence: number }[] } | null }[];
  return {
    id: corpus.id,
    seconds: (Date.now() - started) / 1000,
    pages: docs.reduce((n, d) => n + (d.page_count ?? 0), 0),
    ocrPages: docs.reduce((n, d) => n + (d.ocr?.pages.length ?? 0), 0),
    confidence: docs.flatMap((d) => d.ocr?.pages.map((p) => p.confidence) ?? []),
  };
}

async function recallAt5(t: TestServer, corpusId: string): Promise<{ all: number; en: number; ms: number; n: number }> {
  const { questions } = loadEvalSet();
  const answerable = questions.filter((q) => q.doc && q.evidence);
  const found: { lang: string; hit: number }[] = [];
  for (const q of answerable) {
    const res = await t.call("POST", `/v1/rag/corpora/${corpusId}/search`, { query: q.question, top_k: 5 });
    if (res.status !== 200) throw new Error(`search: ${JSON.stringify(res.json)}`);
    const hits = res.json.data as { filename: string; text: string }[];
    const pdf = `${q.doc!.replace(/\.[^.]+$/, "")}.pdf`;
    found.push({ lang: q.lang, hit: hits.some((h) => h.filename === pdf && isRelevant(h.text, q.evidence!)) ? 1 : 0 });
  }
  const mean = (rows: { hit: number }[]) => rows.reduce((a, r) => a + r.hit, 0) / Math.max(1, rows.length);
  return { all: mean(found), en: mean(found.filter((f) => f.lang === "en")), ms: mean(found.filter((f) => f.lang === "ms")), n: found.length };
}

const shop = await ScanWorkshop.open();
const t = await startTestServer({ bindings: { minilm: testModel("all-minilm-l6-v2") }, config: { engine: { threads: 1 } }, rendererDir: null });
try {
  const { docs } = loadEvalSet();
  console.log(`printing ${docs.length} documents to PDF (LibreOffice)…`);
  const printed = await shop.printToPdf(docs.map((d) => path.join(EVAL_DOCS, d)));
  const textFiles = await Promise.all(printed.map(async (p) => ({ name: path.basename(p), content: await readFile(p) })));
  console.log("scanning them (pdftoppm 200 DPI, turned 1.5°, noise 0.3, img2pdf)…");
  const scanFiles: { name: string; content: Buffer }[] = [];
  for (const pdf of printed) scanFiles.push({ name: path.basename(pdf), content: await readFile(await shop.scan(pdf, { dpi: 200, skew: 1.5, noise: 0.3 })) });

  console.log("indexing the text-layer PDFs…");
  const text = await indexed(t, "eval text layer", textFiles);
  console.log("indexing the scans (OCR, one thread)…");
  const scans = await indexed(t, "eval scans", scanFiles);
  const textRecall = await recallAt5(t, text.id);
  const scanRecall = await recallAt5(t, scans.id);
  const pct = (x: number) => (x * 100).toFixed(1);
  const confidence = [...scans.confidence].sort((a, b) => a - b);
  const ocrSecondsPerPage = (scans.seconds - text.seconds) / Math.max(1, scans.ocrPages);
  const lines = [
    `## Retrieval on scans (${os.cpus()[0]?.model ?? "CPU"}, ${new Date().toISOString()})`,
    "",
    `${docs.length} documents, ${scanRecall.n} answerable questions, hybrid search, all-MiniLM-L6-v2; scans: 200 DPI grey, turned 1.5°, noise 0.3.`,
    "",
    "| corpus | pages | indexed in | recall@5 | EN | MS |",
    "|---|---|---|---|---|---|",
    `| text-layer PDFs | ${text.pages} | ${text.seconds.toFixed(0)} s | ${pct(textRecall.all)} | ${pct(textRecall.en)} | ${pct(textRecall.ms)} |`,
    `| scanned PDFs (OCR) | ${scans.pages} (${scans.ocrPages} OCR'd) | ${scans.seconds.toFixed(0)} s | ${pct(scanRecall.all)} | ${pct(scanRecall.en)} | ${pct(scanRecall.ms)} |`,
    "",
    `Difference: ${((scanRecall.all - textRecall.all) * 100).toFixed(1)} points (goal: within 5). OCR: about ${ocrSecondsPerPage.toFixed(1)} s a page beyond indexing the text (${(60 / ocrSecondsPerPage).toFixed(1)} pages a minute on one core); page confidence min ${confidence[0]}, median ${confidence[Math.floor(confidence.length / 2)]}.`,
  ];
  console.log(lines.join("\n"));
  const out = path.join(REPO_ROOT, "bench", "results");
  mkdirSync(out, { recursive: true });
  const stamp = new Date().toISOString().replace(/[:.]/g, "-");
  writeFileSync(path.join(out, `scanned-retrieval-${stamp}.md`), `${lines.join("\n")}\n`);
  writeFileSync(path.join(out, `scanned-retrieval-${stamp}.json`), JSON.stringify({ text, scans, textRecall, scanRecall, ocrSecondsPerPage }, null, 2));
  if (scanRecall.all < textRecall.all - 0.05) process.exitCode = 1;
} finally {
  await t.close();
  await shop.close();
}
