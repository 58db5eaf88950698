/**
 * Audit exports on disk: JSON Lines (one entry per line, the manifest last) or CSV (a
 * header, one entry per row, a final `#manifest` row holding the manifest's JSON), and
 * their offline verification: every link, the manifest's count, range and head, and its
 * Ed25519 signature — against a pinned public key when one is given.
 */
import { createReadStream } from "node:fs";
import { createInterface } from "node:readline";
import { parse } from "csv-parse";
import { stringify } from "csv-stringify/sync";
import { ChainVerifier, EXPORT_FORMAT, canonicalJson, keyIdOf, signatureValid, type AuditEntry, type ChainProblem, type ExportManifest } from "./audit-chain.js";

export type ExportFormat = "jsonl" | "csv";

export const CSV_COLUMNS = ["id", "chain", "seq", "time", "type", "actor", "outcome", "request_id", "data", "prev_hash", "hash"] as const;
const MANIFEST_MARK = "#manifest";

export function jsonlLine(value: AuditEntry | ExportManifest): string {
  return `${JSON.stringify(value)}\n`;
}

export function csvHeader(): string {
  return stringify([[...CSV_COLUMNS]]);
}

export function csvRow(entry: AuditEntry): string {
  return stringify([[entry.id, entry.chain, entry.seq, entry.time, entry.type, entry.actor, entry.outcome, entry.request_id ?? "", canonicalJson(entry.data), entry.prev_hash, entry.hash]]);
}

export function csvManifestRow(manifest: ExportManifest): string {
  return stringify([[MANIFEST_MARK, JSON.stringify(manifest)]]);
}

function entryFromCsv(row: string[]): AuditEntry {
  if (row.length !== CSV_COLUMNS.length) throw new Error(`expected ${CSV_COLUMNS.length} columns, found ${row.length}`);
  const [id, chain, seq, time, type, actor, outcome, requestId, data, prevHash, hash] = row as [string, string, string, string, string, string, string, string, string, string, string];
  if (outcome !== "success" && outcome !== "failure") throw new Error(`outcome '${outcome}' is neither success nor failure`);
  const parsed = JSON.parse(data) as unknown;
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) throw new Error("data is not a JSON object");
  return { object: "audit.event", id, chain, seq: Number(seq), time, type, actor, outcome, request_id: requestId === "" ? null : requestId, data: parsed as Record<string, unknown>, prev_hash: prevHash, hash };
}

type Item = { kind: "entry"; entry: AuditEntry } | { kind: "manifest"; manifest: ExportManifest } | { kind: "bad"; line: number; message: string };

async function* readJsonl(file: string): AsyncGenerator<Item> {
  const lines = createInterface({ input: createReadStream(file, { encoding: "utf8" }), crlfDelay: Infinity });
  let n = 0;
  for await (const line of lines) {
    n += 1;
    if (line.trim() === "") continue;
    try {
      const value = JSON.parse(line) as { object?: string };
      if (value.object === "audit.manifest") yield { kind: "manifest", manifest: value as ExportManifest };
      else if (value.object === "audit.event") yield { kind: "entry", entry: value as AuditEntry };
      else yield { kind: "bad", line: n, message: `line ${n} is neither an audit entry nor the manifest` };
    } catch {
      yield { kind: "bad", line: n, message: `line ${n} is not valid JSON (a cut or edited line)` };
    }
  }
}

async function* readCsv(file: string): AsyncGenerator<Item> {
  const parser = createReadStream(file).pipe(parse({ relax_column_count: true, relax_quotes: false }));
  let n = 0;
  try {
    for await (const record of parser as AsyncIterable<string[]>) {
      n += 1;
      if (n === 1) {
        if (record.join(",") !== CSV_COLUMNS.join(",")) yield { kind: "bad", line: 1, message: "the first row is not the audit export's header" };
        continue;
      }
      try {
        if (record[0] === MANIFEST_MARK) yield { kind: "manifest", manifest: JSON.parse(record[1] ?? "") as ExportManifest };
        else yield { kind: "entry", entry: entryFromCsv(record) };
      } catch (error) {
        yield { kind: "bad", line: n, message: `row ${n}: ${(error as Error).message}` };
      }
    }
  } catch (error) {
    yield { kind: "bad", line: n + 1, message: `the CSV is malformed after row ${n} (${(error as Error).message}): a cut or edited file` };
  }
}

export interface ExportVerification {
  valid: boolean;
  format: ExportFormat;
  chain: string | null;
  count: number;
  first_seq: number | null;
  last_seq: number | null;
  head_hash: string | null;
  key_id: string | null;
  /** True when the manifest's key is the pinned one; null when no key was pinned. */
  key_pinned: boolean | null;
  problems: ChainProblem[];
}

/** JSONL unless the file starts with the CSV header. */
async function sniff(file: string): Promise<ExportFormat> {
  const stream = createReadStream(file, { encoding: "utf8", start: 0, end: 255 });
  let head = "";
  for await (const chunk of stream) head += chunk as string;
  return head.startsWith(CSV_COLUMNS.join(",")) ? "csv" : "jsonl";
}

/** Verifies an export file offline. `pinnedPublicKey` (base64 SPKI): the instance's key, fetched beforehand from `/v1/audit/signing-key`. */
export async function verifyExportFile(file: string, pinnedPublicKey?: string): Promise<ExportVerification> {
  const format = await sniff(file);
  const problems: ChainProblem[] = [];
  let verifier: ChainVerifier | null = null;
  let manifest: ExportManifest | null = null;
  let entriesAfterManifest = 0;
  let firstPrevHash: string | null = null;
  for await (const item of format === "csv" ? readCsv(file) : readJsonl(file)) {
    if (item.kind === "bad") {
      problems.push({ chain: verifier?.chain ?? "", seq: null, id: null, reason: "malformed", message: item.message });
      continue;
    }
    if (item.kind === "manifest") {
      manifest = item.manifest;
      continue;
    }
    if (manifest) entriesAfterManifest += 1;
    // The first entry's link is checked against the manifest's anchor below.
    if (!verifier) {
      verifier = new ChainVerifier(item.entry.chain, null, null);
      firstPrevHash = item.entry.prev_hash;
    }
    verifier.add(item.entry);
  }
  const chain = manifest?.chain ?? verifier?.chain ?? null;
  const where = { chain: chain ?? "", seq: null, id: null };
  if (verifier) problems.push(...verifier.problems);
  if (!manifest) {
    problems.push({ ...where, reason: "manifest_missing", message: "the export has no manifest: it was cut short (truncated) or is not a Pustaka audit export" });
  } else {
    const { signature, ...unsigned } = manifest;
    if (manifest.format !== EXPORT_FORMAT) problems.push({ ...where, reason: "manifest_mismatch", message: `unknown export format '${String(manifest.format)}'` });
    if (typeof manifest.public_key !== "string" || keyIdOf(manifest.public_key) !== manifest.key_id || !signatureValid(manifest.public_key, unsigned, signature)) {
      problems.push({ ...where, reason: "bad_signature", message: "the manifest's signature is not valid: the manifest was altered or not made by a Pustaka instance" });
    }
    if (pinnedPublicKey !== undefined && manifest.public_key !== pinnedPublicKey) {
      problems.push({ ...where, reason: "untrusted_key", message: `the manifest was signed by ${String(manifest.key_id)}, not by the pinned key ${keyIdOf(pinnedPublicKey)}` });
    }
    const count = verifier?.count ?? 0;
    if (entriesAfterManifest > 0) problems.push({ ...where, reason: "manifest_mismatch", message: `${entriesAfterManifest} entries follow the manifest` });
    if (count !== manifest.count) {
      problems.push({ ...where, reason: count < manifest.count ? "truncated" : "manifest_mismatch", message: `the manifest lists ${manifest.count} entries, the file holds ${count}${count < manifest.count ? ": entries were removed" : ""}` });
    }
    if (verifier && verifier.chain !== manifest.chain) problems.push({ ...where, reason: "manifest_mismatch", message: `entries are from chain '${verifier.chain}', the manifest names '${manifest.chain}'` });
    const first = verifier?.firstSeq ?? null;
    if (first !== manifest.first_seq) problems.push({ ...where, seq: first, reason: "manifest_mismatch", message: `the first entry is ${first ?? "absent"}, the manifest says ${manifest.first_seq ?? "none"}` });
    if (verifier?.lastSeq !== undefined && (verifier?.lastSeq ?? null) !== manifest.last_seq) {
      problems.push({ ...where, seq: verifier?.lastSeq ?? null, reason: "truncated", message: `the last entry is ${verifier?.lastSeq ?? "absent"}, the manifest says ${manifest.last_seq ?? "none"}` });
    }
    const head = verifier?.head ?? manifest.anchor_hash;
    if (head !== manifest.head_hash) problems.push({ ...where, reason: "manifest_mismatch", message: "the last entry's hash is not the manifest's head hash" });
    if (verifier && firstPrevHash !== manifest.anchor_hash) {
      problems.push({ ...where, seq: verifier.firstSeq, reason: "broken_link", message: "the first entry does not link to the manifest's anchor hash" });
    }
  }
  return {
    valid: problems.length === 0,
    format,
    chain,
    count: verifier?.count ?? 0,
    first_seq: verifier?.firstSeq ?? null,
    last_seq: verifier?.lastSeq ?? null,
    head_hash: verifier?.head ?? null,
    key_id: manifest?.key_id ?? null,
    key_pinned: pinnedPublicKey === undefined ? null : manifest?.public_key === pinnedPublicKey,
    problems,
  };
}
