/**
 * Word, Excel and PowerPoint 97–2003 files (DOC, XLS, PPT) are converted to their current
 * formats (DOCX, XLSX, PPTX) by LibreOffice, when it is installed, and then read by the
 * parser of that format. Converting keeps one parser per kind of document: a slide read
 * from a PPT is cited exactly as one read from a PPTX. No well-kept JavaScript library
 * reads the binary formats' text, tables and structure (they are compound files of
 * record streams); LibreOffice has read them for twenty years. Without it, these files are
 * refused with `converter_unavailable`, saying what to install or what to save the file as.
 *
 * Each conversion runs in a fresh temporary folder with its own LibreOffice profile
 * (`-env:UserInstallation`), so conversions at the same time never share or lock a profile;
 * under a deadline (the whole process group is killed, and on Linux `timeout` kills it
 * too should this thread die first) and a cap on what it writes. The folder is always removed.
 */
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { FORMATS } from "./formats.js";
import { ParseError, type ParseContext, type ParsedDocument } from "./types.js";

export type LegacyFormat = "doc" | "xls" | "ppt";

export interface LegacyOfficeOptions {
  /** The `soffice` to run. Default: `soffice` on the PATH, else /usr/bin/soffice, else /usr/lib/libreoffice/program/soffice. */
  binary?: string;
  /**
   * Longest a conversion may take, in milliseconds. Default 40 000: below the parse worker's
   * 60 s deadline, so the converter is stopped here, not orphaned by the worker's end.
   */
  timeoutMs?: number;
  /** Largest converted file accepted, in bytes. Default 64 MiB. */
  maxOutputBytes?: number;
}

const DEFAULT_TIMEOUT_MS = 40_000;
const DEFAULT_MAX_OUTPUT_BYTES = 64 * 1024 * 1024;
const CANDIDATES = ["soffice", "/usr/bin/soffice", "/usr/lib/libreoffice/program/soffice", "/Applications/LibreOffice.app/Contents/MacOS/soffice", "C:\\Program Files\\LibreOffice\\program\\soffice.exe"];
/** coreutils `timeout`: kills the converter's process group even if this thread is gone. */
const TIMEOUT_COMMAND = "/usr/bin/timeout";
/** `timeout` exits 127 when the command is not found, 126 when it cannot run. */
const NOT_FOUND_CODES = new Set([126, 127]);

const TARGETS: Record<LegacyFormat, { extension: "docx" | "xlsx" | "pptx"; filter: string; parser: () => Promise<(bytes: Uint8Array, context?: ParseContext) => Promise<ParsedDocument>> }> = {
  doc: { extension: "docx", filter: "docx:MS Word 2007 XML", parser: async () => (await import("./parse-docx.js")).parseDocx },
  xls: { extension: "xlsx", filter: "xlsx:Calc MS Excel 2007 XML", parser: async () => (await import("./parse-spreadsheet.js")).parseXlsx },
  ppt: { extension: "pptx", filter: "pptx:Impress MS PowerPoint 2007 XML", parser: async () => (await import("./parse-pptx.js")).parsePptx },
};

export const parseDoc = (bytes: Uint8Array, context?: ParseContext, options?: LegacyOfficeOptions) => parseLegacyOffice(bytes, "doc", context, options);
export const parseXls = (bytes: Uint8Array, context?: ParseContext, options?: LegacyOfficeOptions) => parseLegacyOffice(bytes, "xls", context, options);
export const parsePpt = (bytes: Uint8Array, context?: ParseContext, options?: LegacyOfficeOptions) => parseLegacyOffice(bytes, "ppt", context, options);

/**
 * Converts a legacy file with LibreOffice and parses the result; the document keeps the legacy format.
 * @throws ParseError `converter_unavailable` (no LibreOffice), `parse_timeout` (the conversion ran past
 *   its deadline), `document_too_large` (its output past the cap), `corrupt_document` (LibreOffice could
 *   not read it), and whatever the current format's parser reports.
 */
export async function parseLegacyOffice(bytes: Uint8Array, format: LegacyFormat, context?: ParseContext, options: LegacyOfficeOptions = {}): Promise<ParsedDocument> {
  const target = TARGETS[format];
  const converted = await convertWithLibreOffice(bytes, format, options);
  const document = await (await target.parser())(converted, context);
  return { ...document, format, warnings: [...document.warnings, `Converted from the ${FORMATS[format].label} format by LibreOffice.`] };
}

/** Converts `bytes` (a DOC, XLS or PPT) to DOCX, XLSX or PPTX; see `parseLegacyOffice` for the errors. */
export async function convertWithLibreOffice(bytes: Uint8Array, format: LegacyFormat, options: LegacyOfficeOptions = {}): Promise<Uint8Array> {
  const target = TARGETS[format];
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const maxOutputBytes = options.maxOutputBytes ?? DEFAULT_MAX_OUTPUT_BYTES;
  const dir = await mkdtemp(path.join(tmpdir(), "pustaka-convert-"));
  try {
    const input = path.join(dir, `input.${format}`);
    const outDir = path.join(dir, "out");
    await mkdir(outDir);
    await writeFile(input, bytes);
    const args = ["--headless", "--invisible", "--nologo", "--nodefault", "--norestore", "--nolockcheck", `-env:UserInstallation=${pathToFileURL(path.join(dir, "profile")).href}`, "--convert-to", target.filter, "--outdir", outDir, input];
    let ran = false;
    for (const binary of options.binary ? [options.binary] : CANDIDATES) {
      if (path.isAbsolute(binary) && !existsSync(binary)) continue;
      const outcome = await run(binary, args, { timeoutMs, outDir, maxOutputBytes });
      if (outcome === "missing") continue;
      ran = true;
      break;
    }
    if (!ran) throw unavailable(format);
    const output = path.join(outDir, `input.${target.extension}`);
    const size = await stat(output).then((s) => s.size, () => null);
    if (size === null) throw new ParseError("corrupt_document", `LibreOffice could not read the file as a ${FORMATS[format].label}; it may be damaged, protected by a password, or another kind of file.`);
    if (size > maxOutputBytes) throw tooLarge(format, maxOutputBytes);
    return new Uint8Array(await readFile(output));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

interface RunLimits {
  timeoutMs: number;
  outDir: string;
  maxOutputBytes: number;
}

/**
 * Runs one conversion to its end: "ran", or "missing" when the binary does not exist.
 * @throws ParseError `parse_timeout` past the deadline, `document_too_large` when the output grows past the cap.
 */
function run(binary: string, args: string[], limits: RunLimits): Promise<"ran" | "missing"> {
  const wrapped = process.platform === "linux" && existsSync(TIMEOUT_COMMAND);
  const command = wrapped ? TIMEOUT_COMMAND : binary;
  const commandArgs = wrapped ? ["-s", "KILL", String(Math.ceil(limits.timeoutMs / 1000) + 5), binary, ...args] : args;
  return new Promise((resolve, reject) => {
    // Its own process group, so the converter and everything it starts (soffice.bin) die together.
    const child = spawn(command, commandArgs, { detached: process.platform !== "win32", stdio: "ignore", windowsHide: true });
    let settled = false;
    const killGroup = (): void => {
      try {
        if (child.pid !== undefined && process.platform !== "win32") process.kill(-child.pid, "SIGKILL");
        else child.kill("SIGKILL");
      } catch {
        // already gone
      }
    };
    const finish = (outcome: "ran" | "missing" | ParseError): void => {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      clearInterval(watch);
      killGroup(); // stragglers of a finished conversion, or the whole run when it failed
      if (outcome instanceof ParseError) reject(outcome);
      else resolve(outcome);
    };
    const deadline = setTimeout(() => finish(new ParseError("parse_timeout", `LibreOffice took longer than ${Math.round(limits.timeoutMs / 100) / 10} s to convert the file and was stopped.`)), limits.timeoutMs);
    const watch = setInterval(() => {
      void outputBytes(limits.outDir).then((bytes) => {
        if (bytes > limits.maxOutputBytes) finish(new ParseError("document_too_large", `LibreOffice's conversion grew past ${Math.round(limits.maxOutputBytes / 1024 ** 2)} MB and was stopped.`));
      });
    }, 250);
    child.once("error", (error: NodeJS.ErrnoException) => finish(error.code === "ENOENT" || error.code === "EACCES" ? "missing" : new ParseError("converter_unavailable", `LibreOffice could not be started (${error.message}).`)));
    child.once("exit", (code) => finish(wrapped && code !== null && NOT_FOUND_CODES.has(code) ? "missing" : "ran"));
  });
}

async function outputBytes(dir: string): Promise<number> {
  let total = 0;
  for (const name of await readdir(dir).catch(() => [] as string[])) total += await stat(path.join(dir, name)).then((s) => s.size, () => 0);
  return total;
}

function unavailable(format: LegacyFormat): ParseError {
  const current = { doc: "Word document (.docx)", xls: "Excel workbook (.xlsx)", ppt: "PowerPoint presentation (.pptx)" }[format];
  return new ParseError(
    "converter_unavailable",
    `${FORMATS[format].label}s are read by converting them with LibreOffice, which is not installed. Install LibreOffice, or open the file and save it as a ${current}, then upload that.`,
  );
}

function tooLarge(format: LegacyFormat, maxOutputBytes: number): ParseError {
  return new ParseError("document_too_large", `The ${FORMATS[format].label} converts to more than ${Math.round(maxOutputBytes / 1024 ** 2)} MB.`);
}
