/**
 * The 100-file mixed batch with a third of its files scanned (issue 34): the ingestion
 * benchmark's batch (`mixed-batch.ts`: text, Markdown, HTML, PDF, DOCX), its PDFs replaced
 * by scans of themselves (pdftoppm at 200 DPI in grey, img2pdf), uploaded to a fresh server
 * and indexed. Reports the total time, and the share OCR takes: the parse time of the
 * scanned documents (rendering and OCR, from each document's stage timings) against all
 * the indexing work, and pages OCR'd per minute.
 *
 *   npm run bench:scans
 */
import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { testModel } from "../test/helpers/models.js";
import { collectEvents } from "../test/helpers/rag.js";
import { startTestServer } from "../test/helpers/test-server.js";
import { mixedBatch } from "./mixed-batch.js";

const run = promisify(execFile);

/** The events this bench reads (`GET …/events` payloads). */
interface CorpusEvent {
  object: string;
  status?: string;
  document_id?: string;
  timings?: { parse_ms: number; chunk_ms: number; embed_ms: number; store_ms: number; pages: number | null };
  corpus?: { status: string };
}
const THREADS = Number(process.env.BENCH_THREADS ?? 2);

async function scanned(pdf: Uint8Array, dir: string, name: string): Promise<Buffer> {
  const source = path.join(dir, `${name}.pdf`);
  await writeFile(source, pdf);
  await run("pdftoppm", ["-r", "200", "-gray", "-png", source, path.join(dir, name)]);
  const { stdout } = await run("sh", ["-c", `ls ${path.join(dir, name)}-*.png | sort -t- -k2 -n`]);
  const out = path.join(dir, `${name}-scan.pdf`);
  await run("img2pdf", [...stdout.trim().split("\n"), "-o", out]);
  return readFile(out);
}

const dir = await mkdtemp(path.join(os.tmpdir(), "pustaka-bench-scans-"));
const t = await startTestServer({ bindings: { minilm: testModel("all-minilm-l6-v2") }, config: { engine: { threads: THREADS } }, rendererDir: null });
try {
  const files = await mixedBatch();
  const batch: { name: string; content: Buffer; scan: boolean }[] = [];
  for (const [i, f] of files.entries()) {
    const scan = f.name.endsWith(".pdf");
    batch.push({ name: f.name, content: scan ? await scanned(f.bytes, dir, `f${i}`) : Buffer.from(f.bytes), scan });
  }
  const corpus = (await t.call("POST", "/v1/rag/corpora", { name: "scanned batch", embedding_model: "minilm" })).json as { id: string };
  const done = new Map<string, { parseMs: number; chunkMs: number; embedMs: number; storeMs: number; pages: number | null }>();
  const events = collectEvents(`${t.url}/v1/rag/corpora/${corpus.id}/events`, t.key, (raw) => {
    const e = raw as CorpusEvent;
    if (e.object === "rag.document.status" && e.status === "indexed" && e.timings && e.document_id) done.set(e.document_id, { parseMs: e.timings.parse_ms, chunkMs: e.timings.chunk_ms, embedMs: e.timings.embed_ms, storeMs: e.timings.store_ms, pages: e.timings.pages });
    return e.object === "rag.corpus.snapshot" && e.corpus?.status === "ready";
  });
  const started = performance.now();
  const form = new FormData();
  for (const f of batch) form.append("file", new Blob([f.content]), f.name);
  const res = await fetch(`${t.url}/v1/rag/corpora/${corpus.id}/documents`, { method: "POST", headers: { authorization: `Bearer ${t.key}` }, body: form });
  const uploaded = (await res.json()) as { documents: { id: string; filename: string }[]; rejected: unknown[] };
  await events;
  const seconds = (performance.now() - started) / 1000;
  const scanIds = new Set(uploaded.documents.filter((d) => batch.find((b) => b.name === d.filename)?.scan).map((d) => d.id));
  const timings = [...done.entries()];
  const work = (x: { parseMs: number; chunkMs: number; embedMs: number; storeMs: number }) => x.parseMs + x.chunkMs + x.embedMs + x.storeMs;
  const total = timings.reduce((s, [, x]) => s + work(x), 0);
  const ocrParse = timings.filter(([id]) => scanIds.has(id)).reduce((s, [, x]) => s + x.parseMs, 0);
  const ocrPages = timings.filter(([id]) => scanIds.has(id)).reduce((s, [, x]) => s + (x.pages ?? 0), 0);
  const lines = [
    `## 100-file mixed batch, a third scanned (${os.cpus()[0]?.model ?? "CPU"}, ${THREADS} threads, ${new Date().toISOString()})`,
    "",
    `${batch.length} files (${scanIds.size} scanned PDFs, ${ocrPages} pages OCR'd; the rest text, Markdown, HTML, DOCX), all-MiniLM-L6-v2, ${uploaded.rejected.length} rejected, ${done.size} indexed.`,
    "",
    "| upload to ready | indexing work | parsing the scans (render + OCR) | share of the work | pages OCR'd a minute |",
    "|---|---|---|---|---|",
    `| ${seconds.toFixed(1)} s | ${(total / 1000).toFixed(1)} s | ${(ocrParse / 1000).toFixed(1)} s | ${((ocrParse / total) * 100).toFixed(1)}% | ${((ocrPages / ocrParse) * 60_000).toFixed(1)} |`,
  ];
  console.log(lines.join("\n"));
} finally {
  await t.close();
  await rm(dir, { recursive: true, force: true });
}
