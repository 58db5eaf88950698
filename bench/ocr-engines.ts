/**
 * OCR engines compared on the same page images (issue 34): Debian's native Tesseract (a
 * child process per page, as `tesseract.ts` runs it) against tesseract.js (WebAssembly, a
 * warm worker, as `tesseract-wasm.ts` runs it) with each of its cores this runtime loads
 * (plain LSTM, SIMD, relaxed SIMD). Both read with the same tessdata_fast models (Debian's
 * tesseract-ocr-eng and -msa files) and the same settings (eng+msa, page segmentation 3,
 * 300 dpi assumed, one thread).
 *
 *   node --expose-gc --import tsx bench/ocr-engines.ts     (BENCH_OCR_ROUNDS, default 3; Linux)
 *
 * Pages: `report.pdf`'s three pages (English) and a Malay page (`laporan-ms.txt` printed to
 * PDF by Debian's Chromium), rendered by pdftoppm at 300 and 150 dpi, plus a "scan" of each
 * at 300 dpi (grey, rotated 1.5°, softened, JPEG at quality 60, made with sharp), and the
 * bilingual notice fixture. The reference text of a page is its PDF's text layer
 * (pdftotext); the notice's is its known text.
 *
 * Speed: rounds of every page through every engine, the engines' order rotating page by
 * page. The measure is CPU time per page (/proc/self/stat: the native engine's in its child
 * processes, the WebAssembly engine's in this process's worker thread), since a shared
 * machine's wall clock drifts with its neighbours; every engine runs one thread, so pages
 * per minute per core is 60 000 / CPU ms. Per page class: the medians and the paired ratios
 * WebAssembly / native (median, middle half), wall-clock ratios beside them. Memory: the
 * native reading process's peak RSS (GNU time), and what a fresh WebAssembly engine adds to
 * the peak RSS of a Node process of its own (this file with `--peak`) reading one page, with
 * its WebAssembly heap and the time to that first page. Accuracy: CER and WER against the
 * reference (test/helpers/cer.ts), and between the engines.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import v8 from "node:v8";
import sharp from "sharp";
import { nativeTesseract, wasmTesseract, type OcrEngine } from "../src-server/rag/ingest/ocr/ocr-engine.js";
import { supportedWasmCores, TesseractWasm, type WasmCore } from "../src-server/rag/ingest/ocr/tesseract-wasm.js";
import { characterErrorRate, OCR_FIXTURE_TEXT, wordErrorRate } from "../test/helpers/cer.js";

// Node 20's V8 has relaxed SIMD behind a flag (Electron's newer V8 ships it): set before any worker starts.
v8.setFlagsFromString("--experimental-wasm-relaxed-simd");

/** Not from ./lib.js: that loads the whole server, which would blur the memory measured here. */
function percentile(values: number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = (p / 100) * (sorted.length - 1);
  return sorted[Math.floor(rank)]! + (sorted[Math.ceil(rank)]! - sorted[Math.floor(rank)]!) * (rank - Math.floor(rank));
}
const median = (values: number[]) => percentile(values, 50);

const ROUNDS = Number(process.env.BENCH_OCR_ROUNDS ?? 3);
const LANGUAGES = ["eng", "msa"];
const TESSDATA = "/usr/share/tesseract-ocr/5/tessdata";
const ROOT = path.resolve(import.meta.dirname, "..");
const TIMEOUT_MS = 300_000;

interface Page {
  /** e.g. "report p2 @300". */
  name: string;
  /** e.g. "English 300 dpi": pages of a class are summarised together. */
  group: string;
  image: Buffer;
  /** The image on disk (for the memory runs, in their own processes). */
  file: string;
  reference: string;
  /** Measured for memory (one page of each class). */
  memory: boolean;
}

const run = (command: string, args: string[]) => execFileSync(command, args, { maxBuffer: 256 * 1024 * 1024 });

/** Prints `laporan-ms.txt` as a one-column A4 page with Debian's Chromium. */
function malayPdf(dir: string): string {
  const [title, ...paragraphs] = readFileSync(path.join(ROOT, "test/fixtures/documents/laporan-ms.txt"), "utf8").trim().split(/\n\s*\n/);
  const escape = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;");
  const html = `<!doctype html><html lang="ms"><meta charset="utf-8"><style>body{font-family:serif;font-size:12pt;margin:2cm}</style><h1>${escape(title!)}</h1>${paragraphs.map((p) => `<p>${escape(p)}</p>`).join("")}</html>`;
  writeFileSync(path.join(dir, "laporan.html"), html);
  const pdf = path.join(dir, "laporan-ms.pdf");
  const flags = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run", "--no-pdf-header-footer"];
  spawnSync("chromium", [...flags, `--print-to-pdf=${pdf}`, `file://${path.join(dir, "laporan.html")}`], { timeout: 120_000, stdio: "ignore" });
  return pdf;
}

/** A 300 dpi render made to look scanned: grey, a little rotated, softened, JPEG. */
async function scanned(png: Buffer): Promise<Buffer> {
  return sharp(png).greyscale().rotate(1.5, { background: "white" }).blur(0.6).jpeg({ quality: 60 }).toBuffer();
}

async function pages(dir: string): Promise<Page[]> {
  const out: Page[] = [];
  const documents = [
    { pdf: path.join(ROOT, "test/fixtures/documents/report.pdf"), label: "report", language: "English" },
    { pdf: malayPdf(dir), label: "laporan", language: "Malay" },
  ];
  for (const { pdf, label, language } of documents) {
    const count = Number(/Pages:\s+(\d+)/.exec(run("pdfinfo", [pdf]).toString())?.[1] ?? 0);
    for (let page = 1; page <= count; page++) {
      const reference = run("pdftotext", ["-f", String(page), "-l", String(page), "-enc", "UTF-8", pdf, "-"]).toString();
      for (const dpi of [300, 150]) {
        const base = path.join(dir, `${label}-${page}-${dpi}`);
        run("pdftoppm", ["-r", String(dpi), "-png", "-f", String(page), "-l", String(page), "-singlefile", pdf, base]);
        const image = readFileSync(`${base}.png`);
        out.push({ name: `${label} p${page} @${dpi}`, group: `${language} ${dpi} dpi`, image, file: `${base}.png`, reference, memory: page === 1 });
        if (dpi === 300) {
          const scan = await scanned(image);
          writeFileSync(`${base}-scan.jpg`, scan);
          out.push({ name: `${label} p${page} scan`, group: `${language} 300 dpi scan (JPEG, 1.5°)`, image: scan, file: `${base}-scan.jpg`, reference, memory: page === 1 });
        }
      }
    }
  }
  const notice = path.join(ROOT, "test/fixtures/ocr/notis-air-klang.png");
  out.push({ name: "notice", group: "Notice (Malay + English, 1100×560)", image: readFileSync(notice), file: notice, reference: OCR_FIXTURE_TEXT["notis-air-klang.png"], memory: true });
  return out;
}

interface Arm {
  name: string;
  engine: OcrEngine;
  core?: WasmCore;
}

const vm = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(readFileSync("/proc/self/status", "utf8"))?.[1] ?? NaN) / 1024;

const TICK_MS = 1000 / Number(execFileSync("getconf", ["CLK_TCK"]).toString().trim());
/** CPU time (ms) of this process's threads, and of its children that have exited (Linux, /proc/self/stat). */
function cpuMs(): { self: number; children: number } {
  const stat = readFileSync("/proc/self/stat", "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ").map(Number);
  // After the command's name: utime, stime, cutime, cstime are fields 14–17 of the whole line.
  return { self: (fields[11]! + fields[12]!) * TICK_MS, children: (fields[13]! + fields[14]!) * TICK_MS };
}

/** The native tesseract process alone (no --version/--list-langs), under GNU time: peak RSS (MiB), CPU and wall seconds. */
function nativeProcess(image: Buffer): { peakMb: number; cpuS: number; wallS: number } {
  const result = spawnSync("/usr/bin/time", ["-f", "%M %U %S %e", "tesseract", "stdin", "stdout", "-l", LANGUAGES.join("+"), "--dpi", "300", "--psm", "3", "tsv"], { input: image, env: { OMP_THREAD_LIMIT: "1" }, maxBuffer: 64 * 1024 * 1024 });
  const [kb, user, sys, wall] = result.stderr.toString().trim().split("\n").at(-1)!.split(" ").map(Number);
  return { peakMb: kb! / 1024, cpuS: user! + sys!, wallS: wall! };
}

interface WasmPeak {
  /** This process's RSS before the engine started, and its peak while it read one page (MiB). */
  baseMb: number;
  peakMb: number;
  /** The WebAssembly heap after the page. */
  heapMb: number;
  /** Starting the worker, compiling the core, loading the languages, reading the page. */
  firstPageMs: number;
}

/** In a process of its own (`--peak core file`): a fresh WebAssembly engine reads one page. */
async function wasmPeakHere(core: WasmCore, file: string): Promise<WasmPeak> {
  const image = readFileSync(file);
  (globalThis as { gc?: () => void }).gc?.();
  const baseMb = vm("VmRSS");
  const engine = new TesseractWasm({ tessdataDir: TESSDATA, core });
  const start = performance.now();
  await engine.recognise(image, { languages: LANGUAGES, timeoutMs: TIMEOUT_MS });
  const firstPageMs = performance.now() - start;
  const result = { baseMb, peakMb: vm("VmHWM"), heapMb: engine.stats().heapBytes / 1024 / 1024, firstPageMs };
  await engine.close();
  return result;
}

function wasmPeak(core: WasmCore, file: string): WasmPeak {
  const out = execFileSync(process.execPath, ["--expose-gc", "--import", "tsx", import.meta.filename, "--peak", core, file], { cwd: ROOT, maxBuffer: 1024 * 1024 });
  return JSON.parse(out.toString().trim().split("\n").at(-1)!) as WasmPeak;
}

const fmt = (n: number, digits = 0) => (Number.isFinite(n) ? n.toFixed(digits) : "—");
const pct = (n: number) => `${(n * 100).toFixed(1)} %`;

/** The Debian tools the bench runs, each checked first so a missing one is named. */
function preflight(): void {
  const tools: [string, string][] = [
    ["tesseract", "tesseract-ocr tesseract-ocr-eng tesseract-ocr-msa"],
    ["pdftoppm", "poppler-utils"],
    ["pdftotext", "poppler-utils"],
    ["chromium", "chromium"],
    ["/usr/bin/time", "time"],
  ];
  const missing = tools.filter(([tool]) => spawnSync("sh", ["-c", `command -v ${tool}`]).status !== 0);
  if (missing.length > 0) throw new Error(`missing: ${missing.map(([t]) => t).join(", ")} (apt-get install ${[...new Set(missing.map(([, p]) => p))].join(" ")})`);
}

async function main(): Promise<void> {
  preflight();
  const dir = mkdtempSync(path.join(os.tmpdir(), "pustaka-ocr-bench-"));
  try {
    const all = await pages(dir);
    const cores = await supportedWasmCores();
    const arms: Arm[] = [{ name: "native", engine: nativeTesseract() }, ...cores.map((core) => ({ name: `wasm ${core}`, engine: wasmTesseract({ tessdataDir: TESSDATA, core }), core }))];
    console.error(`${all.length} pages, ${arms.length} engines (${arms.map((a) => a.name).join(", ")}), ${ROUNDS} rounds`);

    // Warm-up: the workers start and load their languages.
    for (const arm of arms) await arm.engine.recognise(all.at(-1)!.image, { languages: LANGUAGES, timeoutMs: TIMEOUT_MS });

    const times = new Map<string, number[]>(); // `${arm}|${page}` → CPU ms
    const walls = new Map<string, number[]>(); // `${arm}|${page}` → wall ms
    const texts = new Map<string, string>(); // `${arm}|${page}` → first round's text
    for (let round = 0; round < ROUNDS; round++) {
      for (const [i, page] of all.entries()) {
        for (let k = 0; k < arms.length; k++) {
          const arm = arms[(round + i + k) % arms.length]!;
          const start = performance.now();
          const cpu = cpuMs();
          const result = await arm.engine.recognise(page.image, { languages: LANGUAGES, timeoutMs: TIMEOUT_MS });
          const after = cpuMs();
          const key = `${arm.name}|${page.name}`;
          walls.set(key, [...(walls.get(key) ?? []), performance.now() - start]);
          // The native engine's work is in its child processes; the WebAssembly engine's in this process's worker thread.
          times.set(key, [...(times.get(key) ?? []), arm.core ? after.self - cpu.self : after.children - cpu.children]);
          if (!texts.has(key)) texts.set(key, result.text);
        }
      }
      console.error(`round ${round + 1}/${ROUNDS} done`);
    }

    // Memory, one page of each class: the native process alone, and a fresh WebAssembly engine per core.
    const memory = new Map<string, { native: ReturnType<typeof nativeProcess>; wasm: Record<string, WasmPeak> }>();
    for (const page of all.filter((p) => p.memory)) {
      const wasm: Record<string, WasmPeak> = {};
      for (const core of cores) wasm[core] = wasmPeak(core, page.file);
      memory.set(page.group, { native: nativeProcess(page.image), wasm });
    }

    const groups = [...new Set(all.map((p) => p.group))];
    const wasmArms = arms.slice(1);
    const ratio = (arm: Arm, members: Page[], of: Map<string, number[]>) => members.flatMap((p) => of.get(`${arm.name}|${p.name}`)!.map((ms, r) => ms / of.get(`native|${p.name}`)![r]!));
    const spread = (values: number[]) => `${fmt(median(values), 2)} (${fmt(percentile(values, 25), 2)}–${fmt(percentile(values, 75), 2)})`;
    const lines: string[] = [];
    const json: Record<string, unknown>[] = [];
    lines.push(`# OCR engines: native Tesseract vs tesseract.js`, "");
    lines.push(`${os.cpus()[0]?.model ?? "cpu"}, ${os.cpus().length} cores; Node ${process.version}; ${await arms[0]!.engine.describe()}; ${await arms.at(-1)!.engine.describe()}; languages ${LANGUAGES.join("+")} (tessdata_fast, Debian's files, for both); ${ROUNDS} rounds; one thread per engine.`, "");
    lines.push("## Speed: CPU ms per page (median), pages per minute per core, paired ratio to native (median, IQR)", "");
    lines.push(`| Pages | n | ${arms.map((a) => `${a.name} CPU ms (pages/min/core)`).join(" | ")} | ${wasmArms.map((a) => `${a.name} / native CPU`).join(" | ")} | ${wasmArms.map((a) => `${a.name} / native wall`).join(" | ")} |`);
    lines.push(`|${"---|".repeat(2 + arms.length + 2 * wasmArms.length)}`);
    for (const group of groups) {
      const members = all.filter((p) => p.group === group);
      const cpu = arms.map((arm) => median(members.flatMap((p) => times.get(`${arm.name}|${p.name}`)!)));
      const wall = arms.map((arm) => median(members.flatMap((p) => walls.get(`${arm.name}|${p.name}`)!)));
      const cpuRatios = wasmArms.map((arm) => ratio(arm, members, times));
      const wallRatios = wasmArms.map((arm) => ratio(arm, members, walls));
      lines.push(`| ${group} | ${members.length} | ${cpu.map((t) => `${fmt(t)} (${fmt(60_000 / t, 1)})`).join(" | ")} | ${cpuRatios.map(spread).join(" | ")} | ${wallRatios.map(spread).join(" | ")} |`);
      const cer = arms.map((arm) => median(members.map((p) => characterErrorRate(p.reference, texts.get(`${arm.name}|${p.name}`)!))));
      const wer = arms.map((arm) => median(members.map((p) => wordErrorRate(p.reference, texts.get(`${arm.name}|${p.name}`)!))));
      json.push({
        group,
        pages: members.map((p) => p.name),
        cpuMsPerPage: Object.fromEntries(arms.map((a, i) => [a.name, cpu[i]])),
        wallMsPerPage: Object.fromEntries(arms.map((a, i) => [a.name, wall[i]])),
        cpuRatioToNative: Object.fromEntries(wasmArms.map((a, i) => [a.name, { median: median(cpuRatios[i]!), p25: percentile(cpuRatios[i]!, 25), p75: percentile(cpuRatios[i]!, 75) }])),
        wallRatioToNative: Object.fromEntries(wasmArms.map((a, i) => [a.name, { median: median(wallRatios[i]!), p25: percentile(wallRatios[i]!, 25), p75: percentile(wallRatios[i]!, 75) }])),
        cer: Object.fromEntries(arms.map((a, i) => [a.name, cer[i]])),
        wer: Object.fromEntries(arms.map((a, i) => [a.name, wer[i]])),
        memory: memory.get(group) ?? null,
      });
    }
    lines.push("", `All ${all.length} pages, paired ratio to native: ${wasmArms.map((a) => `${a.name} CPU ${spread(ratio(a, all, times))}, wall ${spread(ratio(a, all, walls))}`).join("; ")}.`, "");

    lines.push("## Accuracy against the text layer (median over the class's pages)", "");
    lines.push(`| Pages | ${arms.map((a) => `CER ${a.name}`).join(" | ")} | ${arms.map((a) => `WER ${a.name}`).join(" | ")} | CER native vs ${arms.at(-1)!.name} |`);
    lines.push(`|${"---|".repeat(2 + 2 * arms.length)}`);
    for (const [i, group] of groups.entries()) {
      const members = all.filter((p) => p.group === group);
      const g = json[i] as { cer: Record<string, number>; wer: Record<string, number> };
      const agreement = median(members.map((p) => characterErrorRate(texts.get(`native|${p.name}`)!, texts.get(`${arms.at(-1)!.name}|${p.name}`)!)));
      lines.push(`| ${group} | ${arms.map((a) => pct(g.cer[a.name]!)).join(" | ")} | ${arms.map((a) => pct(g.wer[a.name]!)).join(" | ")} | ${pct(agreement)} |`);
    }
    lines.push("");

    lines.push("## Memory and start (one page of each class)", "");
    lines.push(`| Pages | native process peak RSS MiB (CPU s, wall s) | ${cores.map((c) => `wasm ${c}: added peak RSS MiB / heap MiB / first page ms`).join(" | ")} |`);
    lines.push(`|${"---|".repeat(2 + cores.length)}`);
    for (const [group, m] of memory) {
      lines.push(`| ${group} | ${fmt(m.native.peakMb)} (${fmt(m.native.cpuS, 2)}, ${fmt(m.native.wallS, 2)}) | ${cores.map((c) => `${fmt(m.wasm[c]!.peakMb - m.wasm[c]!.baseMb)} / ${fmt(m.wasm[c]!.heapMb)} / ${fmt(m.wasm[c]!.firstPageMs)}`).join(" | ")} |`);
    }
    const base = [...memory.values()][0]?.wasm[cores[0]!]?.baseMb;
    lines.push(
      "",
      `Native CPU per page counts what \`tesseract.ts\` runs per page: \`tesseract --version\`, \`--list-langs\`, and the reading process (which loads the language data each time); the GNU time column is the reading process alone. A WebAssembly engine's added peak RSS is over a Node process of ${fmt(base ?? NaN)} MiB (its own process per measurement): the worker thread, the core and the heap; its first page includes starting the worker, compiling the core and loading the languages, later pages reuse them.`,
    );

    const md = `${lines.join("\n")}\n`;
    process.stdout.write(md);
    const results = path.join(import.meta.dirname, "results");
    mkdirSync(results, { recursive: true });
    const stamp = new Date().toISOString().replace(/[:.]/g, "-");
    writeFileSync(path.join(results, `ocr-engines-${stamp}.json`), JSON.stringify({ cpu: os.cpus()[0]?.model, node: process.version, rounds: ROUNDS, cores, groups: json }, null, 2));
    writeFileSync(path.join(results, `ocr-engines-${stamp}.md`), md);
    for (const arm of arms) await arm.engine.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[2] === "--peak") {
  const peak = await wasmPeakHere(process.argv[3] as WasmCore, process.argv[4]!);
  process.stdout.write(`${JSON.stringify(peak)}\n`);
} else {
  await main();
}
