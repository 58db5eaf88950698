/**
 * Hostile files against a real server in its own process: each file is uploaded on its
 * own, and the server's peak resident memory while it is handled (VmHWM, reset before each
 * file through /proc/<pid>/clear_refs, cross-checked by sampling VmRSS) is reported against
 * the resident memory just before, with the outcome (HTTP status, document status and
 * error code) and what is still held a few seconds later. Target: no file raises the peak
 * by more than 300 MB, and every one fails as a document, never the server.
 *
 *   node --import tsx bench/hostile-files.ts [--only name,name] [--json out.json] [--tsx-parser | --parser URL]
 *
 * Linux only (/proc). The server is this file in `--serve` mode (startServer, the default
 * configuration, all-MiniLM-L6-v2 as the corpus's embedding model, one thread). Its parse
 * worker loads the parsers compiled to JavaScript (esbuild, into node_modules/.cache/), as a build
 * does: from TypeScript sources each parse worker also loads tsx and esbuild, some 300 MB
 * more (`--tsx-parser` measures that way). `--parser URL` loads another build of
 * `parse-by-format` (an older one, to compare); `--parse-memory MB` sets `rag.parseMemoryMb`.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { build } from "esbuild";
import { createParser } from "eventsource-parser";
import { loadConfig, packageLayout, startServer } from "../src-server/index.js";
import { buildZipBomb } from "../test/fixtures/documents/build-zip-bomb.js";
import { fixture } from "../test/fixtures/documents/document-assertions.js";
import { endlessPdf, flateBombPdf, nestedHtml } from "../test/fixtures/documents/fixture-documents.js";
import {
  deepMarkdown,
  denseDocx,
  denseTextPdf,
  hiddenEndstreamBomb,
  hugeHtml,
  hugeLineText,
  imageAsContentPdf,
  lzwBomb,
  manyEntriesDocx,
  manyStreamsPdf,
  pdfWithForms,
  relsBombDocx,
  zlibBomb,
} from "../test/fixtures/documents/hostile-documents.js";
import { REPO_ROOT, testModel } from "../test/helpers/models.js";

const KEY = "psk-hostile-bench-0000000000000000";
const TARGET_MB = 300;
const MIB = 1024 * 1024;

interface Case {
  name: string;
  what: string;
  make: () => Uint8Array;
  /** Benign files warm the server up (parser modules, the embedding model) and are not judged. */
  benign?: boolean;
}

const CASES: Case[] = [
  { name: "report.docx", what: "benign DOCX (warm-up)", make: () => fixture("report.docx"), benign: true },
  { name: "report.pdf", what: "benign PDF (warm-up)", make: () => fixture("report.pdf"), benign: true },
  { name: "page.html", what: "benign HTML (warm-up)", make: () => fixture("page.html"), benign: true },
  { name: "rels-bomb.docx", what: "_rels/.rels → word/media/doc.xml, 1 GiB of zeros, sizes declared", make: () => relsBombDocx(1024, "honest") },
  { name: "rels-bomb-lying.docx", what: "same, directory declares 4 KiB", make: () => relsBombDocx(1024, "lying") },
  { name: "bomb.docx", what: "word/document.xml inflates to 1.1 GiB, declared", make: () => buildZipBomb({ inflatedBytes: 1.1 * 1024 * MIB, declare: "honest" }) },
  { name: "bomb-lying.docx", what: "same, directory declares 4 KiB", make: () => buildZipBomb({ inflatedBytes: 1.1 * 1024 * MIB, declare: "lying" }) },
  { name: "dense-repeat.docx", what: "honest 120 MiB document.xml of one paragraph repeated", make: () => denseDocx(120, false) },
  { name: "dense-prose.docx", what: "honest 100 MiB document.xml of prose (compresses ~4:1)", make: () => denseDocx(100, true) },
  { name: "dense-prose-30.docx", what: "honest 30 MiB document.xml of prose (within the limits)", make: () => denseDocx(30, true) },
  { name: "entries-100k.docx", what: "ZIP64 archive of 100 000 entries", make: () => manyEntriesDocx(100_000) },
  { name: "flate-bomb.pdf", what: "one Flate stream inflating to 1 GiB", make: () => flateBombPdf(1024) },
  { name: "many-streams.pdf", what: "6 Flate streams of 120 MiB each", make: () => manyStreamsPdf(6, 120) },
  { name: "many-streams-31.pdf", what: "5 Flate streams of 31 MiB each (within the limits)", make: () => manyStreamsPdf(5, 31) },
  { name: "dense-text.pdf", what: "a 100 MiB content stream of text operators", make: () => denseTextPdf(100) },
  { name: "dense-text-30.pdf", what: "a 30 MiB content stream of text operators (within the limits)", make: () => denseTextPdf(30) },
  { name: "lzw-bomb.pdf", what: "an LZW stream expanding ~2000 times to 1 GB", make: () => pdfWithForms([lzwBomb(1000)], { filter: "/LZWDecode" }) },
  { name: "hidden-end.pdf", what: "1 GiB Flate bomb with the bytes 'endstream' inside its data", make: () => pdfWithForms([hiddenEndstreamBomb(1024)]) },
  { name: "encrypted-bomb.pdf", what: "1 GiB Flate bomb, RC4-encrypted with an empty user password", make: () => pdfWithForms([zlibBomb(1024)], { userPassword: "" }) },
  { name: "image-content.pdf", what: "2 GiB Flate 'image' named as the page's content", make: () => imageAsContentPdf(2048) },
  { name: "endless.pdf", what: "form XObjects drawing each other 10^12 times", make: () => endlessPdf() },
  { name: "nested.html", what: "100 000 nested <div>s", make: () => nestedHtml(100_000) },
  { name: "huge.html", what: "48 MiB of short paragraphs", make: () => hugeHtml(48) },
  { name: "huge-line.txt", what: "48 MiB on one line", make: () => hugeLineText(48) },
  { name: "paragraphs.txt", what: "8 million one-word paragraphs (48 MB)", make: () => Buffer.from("word\n\n".repeat(8_000_000)) },
  { name: "deep-quote.md", what: "blockquote nested 100 000 levels", make: () => deepMarkdown(100_000) },
];

interface Row {
  name: string;
  what: string;
  mb: number;
  http: number;
  outcome: string;
  code: string | null;
  baselineMb: number;
  peakMb: number;
  retainedMb: number;
  seconds: number;
  benign: boolean;
}

/** A memory figure of a process in MB; NaN once it is gone. */
function status(pid: number, field: "VmRSS" | "VmHWM"): number {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/status`, "utf8");
  } catch {
    return NaN;
  }
  return Number(new RegExp(`${field}:\\s+(\\d+)`).exec(text)?.[1] ?? NaN) / 1024;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function settledRss(pid: number): Promise<number> {
  let previous = status(pid, "VmRSS");
  for (let i = 0; i < 20; i++) {
    await sleep(250);
    const now = status(pid, "VmRSS");
    if (Math.abs(now - previous) < 2) return now;
    previous = now;
  }
  return previous;
}

class Server {
  private constructor(
    readonly child: ChildProcess,
    readonly url: string,
    private readonly dataDir: string,
  ) {}

  static async start(parserModule: string, parseMemoryMb: string): Promise<Server> {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), "pustaka-hostile-"));
    const child = spawn(process.execPath, ["--import", "tsx", path.join(REPO_ROOT, "bench", "hostile-files.ts"), "--serve", dataDir, parserModule, parseMemoryMb], {
      cwd: REPO_ROOT,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    child.stderr.on("data", (d: Buffer) => (out += d.toString()));
    const url = await new Promise<string>((resolve, reject) => {
      child.stdout.on("data", (d: Buffer) => {
        out += d.toString();
        const m = /listening on (https?:\/\/\S+)/.exec(out);
        if (m) resolve(m[1]!);
      });
      child.once("exit", (code) => reject(new Error(`server exited ${code}:\n${out}`)));
    });
    return new Server(child, url, dataDir);
  }

  get pid(): number {
    return this.child.pid!;
  }

  api(route: string, init: RequestInit = {}): Promise<Response> {
    return fetch(this.url + route, { ...init, headers: { authorization: `Bearer ${KEY}`, ...(typeof init.body === "string" ? { "content-type": "application/json" } : {}), ...init.headers } });
  }

  async stop(): Promise<void> {
    if (this.child.exitCode === null && this.child.signalCode === null) {
      const exited = new Promise((r) => this.child.once("exit", r));
      this.child.kill("SIGKILL");
      await exited;
    }
    rmSync(this.dataDir, { recursive: true, force: true });
  }
}

/**
 * Resolves with the document's final status, or (unless `untilIndexed`) `parsed` once
 * indexing gets past parsing: the file was accepted, and embedding all of it could take hours.
 */
async function outcomeOf(server: Server, corpusId: string, documentId: string, untilIndexed: boolean, signal: AbortSignal): Promise<{ outcome: string; code: string | null }> {
  const res = await server.api(`/v1/rag/corpora/${corpusId}/events`, { signal });
  return new Promise((resolve, reject) => {
    const parser = createParser({
      onEvent(event) {
        const data = JSON.parse(event.data) as { object: string; document_id?: string; status?: string; stage?: string; error?: { code: string } | null };
        if (data.document_id !== documentId) return;
        if (data.object === "rag.document.status" && (data.status === "failed" || data.status === "indexed")) resolve({ outcome: data.status, code: data.error?.code ?? null });
        if (!untilIndexed && data.object === "rag.document.progress" && data.stage !== "parsing") resolve({ outcome: "parsed", code: null });
      },
    });
    (async () => {
      const decoder = new TextDecoder();
      for await (const chunk of res.body as AsyncIterable<Uint8Array>) parser.feed(decoder.decode(chunk, { stream: true }));
      reject(new Error("event stream ended"));
    })().catch(reject);
  });
}

async function runCase(server: Server, corpusId: string, c: Case): Promise<Row> {
  const bytes = c.make();
  const baseline = await settledRss(server.pid);
  writeFileSync(`/proc/${server.pid}/clear_refs`, "5"); // resets VmHWM to the current RSS
  let sampledPeak = baseline;
  const sampler = setInterval(() => {
    const rss = status(server.pid, "VmRSS");
    if (!Number.isNaN(rss)) sampledPeak = Math.max(sampledPeak, rss);
  }, 20);
  const started = performance.now();
  const events = new AbortController();
  let http = 0;
  let outcome = "";
  let code: string | null = null;
  try {
    const form = new FormData();
    form.append("file", new Blob([bytes]), c.name);
    const res = await server.api(`/v1/rag/corpora/${corpusId}/documents`, { method: "POST", body: form });
    http = res.status;
    const body = (await res.json()) as { documents?: { id: string }[]; rejected?: { error: { code: string } }[]; error?: { code: string } };
    const document = body.documents?.[0];
    if (!document) {
      outcome = "rejected";
      code = body.rejected?.[0]?.error.code ?? body.error?.code ?? null;
    } else {
      const timeout = sleep(300_000).then(() => ({ outcome: "timeout (bench)", code: null }));
      ({ outcome, code } = await Promise.race([outcomeOf(server, corpusId, document.id, c.benign === true, events.signal), timeout]));
    }
  } catch (error) {
    outcome = server.child.exitCode !== null || server.child.signalCode !== null ? "SERVER DIED" : `error: ${(error as Error).message}`;
  } finally {
    events.abort();
    clearInterval(sampler);
  }
  const seconds = (performance.now() - started) / 1000;
  const alive = server.child.exitCode === null && server.child.signalCode === null;
  const peak = alive ? Math.max(status(server.pid, "VmHWM"), sampledPeak) : sampledPeak;
  if (alive) await sleep(3000);
  const retained = status(server.pid, "VmRSS");
  return { name: c.name, what: c.what, mb: bytes.length / MIB, http, outcome, code, baselineMb: baseline, peakMb: peak - baseline, retainedMb: retained - baseline, seconds, benign: c.benign === true };
}

/** Compiles the parse worker's module to JavaScript, as a build ships it. */
async function compileParser(): Promise<string> {
  // Under node_modules: the parsers' own imports resolve, and no linter or test runner looks there.
  const outdir = path.join(REPO_ROOT, "node_modules", ".cache", "pustaka-bench", "hostile-parser");
  rmSync(outdir, { recursive: true, force: true });
  await build({
    entryPoints: [path.join(REPO_ROOT, "src-server", "rag", "ingest", "parse-by-format.ts")],
    bundle: true,
    splitting: true,
    format: "esm",
    platform: "node",
    packages: "external",
    outdir,
    outExtension: { ".js": ".mjs" },
    logLevel: "warning",
  });
  return pathToFileURL(path.join(outdir, "parse-by-format.mjs")).href;
}

/** `--serve <dataDir> <parserModule>`: the server under test, in this process. */
async function serve(dataDir: string, parserModule: string, parseMemoryMb: string): Promise<void> {
  const layout = packageLayout();
  const config = loadConfig({
    env: {},
    defaults: { catalogPath: layout.catalogPath },
    overrides: {
      port: 0,
      dataDir,
      apiKey: KEY,
      logLevel: "warn",
      engine: { threads: 1, gpu: "cpu", idleUnloadSeconds: 0 },
      models: { bindings: { minilm: testModel("all-minilm-l6-v2") } },
      rateLimits: { defaultTier: "unlimited" },
      rag: parseMemoryMb ? { parseMemoryMb: Number(parseMemoryMb) } : {},
    },
  });
  const server = await startServer(config, { version: layout.version, workers: parserModule ? { documentParser: parserModule } : {} });
  process.stdout.write(`listening on ${server.url}\n`);
}

async function main(): Promise<void> {
  const option = (name: string) => (process.argv.includes(name) ? process.argv[process.argv.indexOf(name) + 1] : undefined);
  const parserModule = process.argv.includes("--tsx-parser") ? "" : (option("--parser") ?? (await compileParser()));
  const only = option("--only") ? new Set(option("--only")!.split(",")) : null;
  const jsonOut = option("--json");
  const rows: Row[] = [];
  const parseMemoryMb = option("--parse-memory") ?? "";
  let server = await Server.start(parserModule, parseMemoryMb);
  const newCorpus = async (s: Server) => ((await (await s.api("/v1/rag/corpora", { method: "POST", body: JSON.stringify({ name: "hostile", embedding_model: "minilm" }) })).json()) as { id: string }).id;
  let corpusId = await newCorpus(server);
  try {
    for (const c of CASES) {
      if (only && !c.benign && !only.has(c.name)) continue;
      const row = await runCase(server, corpusId, c);
      const died = server.child.exitCode !== null || server.child.signalCode !== null;
      if (died) row.outcome = `SERVER DIED (${server.child.signalCode ?? `exit ${server.child.exitCode}`})`;
      rows.push(row);
      process.stderr.write(`${row.name}: ${row.outcome} ${row.code ?? ""} peak +${row.peakMb.toFixed(0)} MB, retained +${row.retainedMb.toFixed(0)} MB, ${row.seconds.toFixed(1)} s\n`);
      if (died || row.outcome === "parsed" || row.outcome.startsWith("timeout")) {
        // Accepted (its embedding would take hours), dead or stuck: start afresh for the next file.
        await server.stop();
        server = await Server.start(parserModule, parseMemoryMb);
        corpusId = await newCorpus(server);
      }
    }
  } finally {
    await server.stop();
  }
  const judged = rows.filter((r) => !r.benign);
  const lines = [
    `## Hostile files (server peak RSS over its RSS just before; target ≤ ${TARGET_MB} MB)`,
    "",
    "| File | What | Size MB | HTTP | Outcome | Code | Peak +MB | Held after 3 s +MB | s |",
    "|---|---|---:|---:|---|---|---:|---:|---:|",
    ...rows.map((r) => `| ${r.name} | ${r.what} | ${r.mb.toFixed(1)} | ${r.http} | ${r.outcome} | ${r.code ?? ""} | ${r.peakMb.toFixed(0)} | ${r.retainedMb.toFixed(0)} | ${r.seconds.toFixed(1)} |`),
    "",
    `Worst peak: +${Math.max(...judged.map((r) => r.peakMb)).toFixed(0)} MB; over the target: ${judged.filter((r) => r.peakMb > TARGET_MB).map((r) => r.name).join(", ") || "none"}; ` +
      `accepted (within the limits, or missed): ${judged.filter((r) => r.outcome !== "failed" && r.outcome !== "rejected").map((r) => `${r.name} (${r.outcome})`).join(", ") || "none"}.`,
  ];
  process.stdout.write(`${lines.join("\n")}\n`);
  if (jsonOut) writeFileSync(jsonOut, JSON.stringify(rows, null, 2));
}

if (process.argv[2] === "--serve") await serve(process.argv[3]!, process.argv[4] ?? "", process.argv[5] ?? "");
else await main();
