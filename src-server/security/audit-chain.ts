/**
 * The audit log's tamper evidence, shared by the server and the offline verifier
 * (`pustaka audit verify FILE`):
 * - an entry's hash is the SHA-256 of its RFC 8785 canonical JSON (every field but
 *   `hash`), and each entry carries the previous entry's hash, so one chain per workspace
 *   (and one for the instance) commits to its whole history;
 * - exports end with a manifest (count, first and last sequence numbers, the hash before
 *   the first entry and the head hash) signed with the instance's Ed25519 audit key, so a
 *   copy taken off the machine can be checked offline and a truncated tail is detected;
 * - the live database's heads are signed the same way after every write, so rows deleted
 *   from the end of a chain are detected too.
 */
import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, hkdfSync, sign, verify, type KeyObject } from "node:crypto";
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import canonicalize from "canonicalize";
import type { AuditEvent, AuditExportManifest, AuditProblem, AuditProblemReason } from "../contract/audit.js";

/** The hash before a chain's first entry. */
export const GENESIS_HASH = "0".repeat(64);
export const EXPORT_FORMAT = "pustaka-audit-export/1";

/** What the audit trail records; the hashed and exported form is the API's own (`contract/audit.ts`). */
export type AuditEntry = AuditEvent;
export type ExportManifest = AuditExportManifest;

/** Canonical JSON (RFC 8785), the bytes that get hashed and signed. */
export function canonicalJson(value: unknown): string {
  const text = canonicalize(value);
  if (text === undefined) throw new Error("value cannot be canonicalized");
  return text;
}

export function sha256Hex(data: string | Buffer): string {
  return createHash("sha256").update(data).digest("hex");
}

/** The hash of an entry: SHA-256 of the canonical JSON of every field but `hash`. */
export function entryHash(entry: Omit<AuditEntry, "hash"> | AuditEntry): string {
  const { hash: _hash, ...hashed } = entry as AuditEntry;
  return sha256Hex(canonicalJson(hashed));
}

/** An entry's fields as stored: `data` already as its canonical JSON. */
export interface StoredEntryFields {
  actor: string;
  chain: string;
  id: string;
  outcome: string;
  prev_hash: string;
  request_id: string | null;
  seq: number;
  time: string;
  type: string;
}

/**
 * `entryHash` without parsing and re-serialising `data`: the canonical JSON written out in
 * RFC 8785's key order around the stored canonical `data` (strings serialise as
 * JSON.stringify does; `seq` is an integer). Equal to `entryHash` of the parsed entry
 * whenever `canonicalData` is canonical (tested); the writer and the database check use it.
 */
export function storedEntryHash(e: StoredEntryFields, canonicalData: string): string {
  const q = JSON.stringify;
  return sha256Hex(
    `{"actor":${q(e.actor)},"chain":${q(e.chain)},"data":${canonicalData},"id":${q(e.id)},"object":"audit.event","outcome":${q(e.outcome)},"prev_hash":${q(e.prev_hash)},"request_id":${q(e.request_id)},"seq":${e.seq},"time":${q(e.time)},"type":${q(e.type)}}`,
  );
}

export type ProblemReason = AuditProblemReason;
export type ChainProblem = AuditProblem;

/**
 * Walks one chain's entries in order and records every broken link: an entry whose hash
 * does not match its content (altered), whose `prev_hash` is not the previous entry's hash
 * (an entry before it was removed or altered), or whose sequence number skips.
 */
export class ChainVerifier {
  readonly problems: ChainProblem[] = [];
  count = 0;
  firstSeq: number | null = null;
  lastSeq: number | null = null;
  private expectedPrev: string | null;
  private expectedSeq: number | null;
  /** The hash of the last entry seen (the anchor until one is seen). */
  head: string;

  /** `anchor`: the hash the first entry must link to (null = take the first entry's word for it, as for a filtered export checked against its manifest). */
  constructor(
    readonly chain: string,
    anchor: string | null = GENESIS_HASH,
    firstSeq: number | null = 1,
    private readonly maxProblems = 100,
  ) {
    this.expectedPrev = anchor;
    this.expectedSeq = firstSeq;
    this.head = anchor ?? GENESIS_HASH;
  }

  private report(problem: Omit<ChainProblem, "chain">): void {
    if (this.problems.length < this.maxProblems) this.problems.push({ chain: this.chain, ...problem });
  }

  /** Checks the next entry; `actualHash` is its recomputed hash (default: `entryHash(entry)`). */
  add(entry: Pick<AuditEntry, "chain" | "seq" | "id" | "prev_hash" | "hash">, actualHash = entryHash(entry as AuditEntry)): void {
    this.count += 1;
    this.firstSeq ??= entry.seq;
    const where = { seq: entry.seq, id: entry.id };
    if (entry.chain !== this.chain) this.report({ ...where, reason: "malformed", message: `entry ${entry.id} belongs to chain '${entry.chain}', not '${this.chain}'` });
    if (this.expectedSeq !== null && entry.seq !== this.expectedSeq) {
      this.report({ ...where, reason: "sequence_gap", message: `expected entry ${this.expectedSeq}, found ${entry.seq}: ${entry.seq > this.expectedSeq ? `${entry.seq - this.expectedSeq} entries missing` : "an entry repeats or is out of order"}` });
    }
    if (this.expectedPrev !== null && entry.prev_hash !== this.expectedPrev) {
      this.report({ ...where, reason: "broken_link", message: `entry ${entry.seq} does not link to the entry before it (an entry was removed, inserted or altered before it)` });
    }
    if (actualHash !== entry.hash) this.report({ ...where, reason: "hash_mismatch", message: `entry ${entry.seq} was altered: its content does not match its hash` });
    // Continue from what the entry claims, so one bad row is reported once, not for every row after it.
    this.expectedPrev = entry.hash;
    this.expectedSeq = entry.seq + 1;
    this.lastSeq = entry.seq;
    this.head = entry.hash;
  }
}

/** The instance's Ed25519 signing key for audit manifests and heads. */
export class AuditSigner {
  readonly keyId: string;
  /** base64 SPKI DER. */
  readonly publicKey: string;

  private constructor(private readonly privateKey: KeyObject) {
    const spki = createPublicKey(privateKey).export({ type: "spki", format: "der" });
    this.publicKey = spki.toString("base64");
    this.keyId = keyIdOf(this.publicKey);
  }

  /** Reads the PKCS#8 PEM key at `file`, creating one (0600, folder 0700) when absent. */
  static open(file: string): AuditSigner {
    let pem: string;
    try {
      pem = readFileSync(file, "utf8");
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
      mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
      const { privateKey } = generateKeyPairSync("ed25519");
      pem = privateKey.export({ type: "pkcs8", format: "pem" }).toString();
      try {
        writeFileSync(file, pem, { mode: 0o600, flag: "wx" });
      } catch (raced) {
        // Another process (the CLI beside the server) created it first: use theirs.
        if ((raced as NodeJS.ErrnoException).code !== "EEXIST") throw raced;
        pem = readFileSync(file, "utf8");
      }
    }
    chmodSync(file, 0o600);
    const key = createPrivateKey(pem);
    if (key.asymmetricKeyType !== "ed25519") throw new Error(`audit signing key ${file} is not an Ed25519 key`);
    return new AuditSigner(key);
  }

  /** A signer from a PKCS#8 PEM Ed25519 key (the shared store's, for replicas). */
  static fromPem(pem: string): AuditSigner {
    const key = createPrivateKey(pem);
    if (key.asymmetricKeyType !== "ed25519") throw new Error("the audit signing key is not an Ed25519 key");
    return new AuditSigner(key);
  }

  /** A new Ed25519 key as PKCS#8 PEM, with the key id and public key the signer will report. */
  static generatePem(): { pem: string; keyId: string; publicKey: string } {
    const { privateKey } = generateKeyPairSync("ed25519");
    const signer = new AuditSigner(privateKey);
    return { pem: privateKey.export({ type: "pkcs8", format: "pem" }).toString(), keyId: signer.keyId, publicKey: signer.publicKey };
  }

  /** PEM of the public key, for pinning by whoever checks exports (`--public-key`). */
  publicKeyPem(): string {
    return createPublicKey(this.privateKey).export({ type: "spki", format: "pem" }).toString();
  }

  /**
   * 32 bytes derived from the private key for another purpose (HKDF-SHA256, `label` as its
   * info): replicas that share the signing key share what is derived from it, and nothing
   * more need be stored. The bundle identity (`rag/bundles/bundle-identity.ts`) is one.
   */
  derive(label: string): Buffer {
    const der = this.privateKey.export({ type: "pkcs8", format: "der" });
    try {
      return Buffer.from(hkdfSync("sha256", der, Buffer.alloc(0), `pustaka:${label}`, 32));
    } finally {
      der.fill(0);
    }
  }

  /** base64 Ed25519 signature of the canonical JSON of `value`. */
  sign(value: unknown): string {
    return sign(null, Buffer.from(canonicalJson(value)), this.privateKey).toString("base64");
  }
}

/** `ed25519:` + the first 16 hex digits of the SHA-256 of the SPKI DER. */
export function keyIdOf(publicKeyB64: string): string {
  return `ed25519:${sha256Hex(Buffer.from(publicKeyB64, "base64")).slice(0, 16)}`;
}

/** Checks a base64 signature made by `AuditSigner.sign` over `value`. */
export function signatureValid(publicKeyB64: string, value: unknown, signature: string): boolean {
  try {
    const key = createPublicKey({ key: Buffer.from(publicKeyB64, "base64"), format: "der", type: "spki" });
    return verify(null, Buffer.from(canonicalJson(value)), key, Buffer.from(signature, "base64"));
  } catch {
    return false;
  }
}

/** Public key (base64 SPKI DER) from a PEM file's text or a base64 string. */
export function publicKeyFromText(text: string): string {
  const trimmed = text.trim();
  const key = trimmed.startsWith("-----BEGIN") ? createPublicKey(trimmed) : createPublicKey({ key: Buffer.from(trimmed, "base64"), format: "der", type: "spki" });
  if (key.asymmetricKeyType !== "ed25519") throw new Error("the public key is not an Ed25519 key");
  return key.export({ type: "spki", format: "der" }).toString("base64");
}

/** Signs an unsigned manifest. */
export function signManifest(signer: AuditSigner, manifest: Omit<ExportManifest, "signature" | "key_id" | "public_key">): ExportManifest {
  const unsigned = { ...manifest, key_id: signer.keyId, public_key: signer.publicKey };
  return { ...unsigned, signature: signer.sign(unsigned) };
}
