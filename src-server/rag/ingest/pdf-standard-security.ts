/**
 * Decrypts the streams of PDFs protected by the standard security handler with an empty
 * user password (an "owner password" only: the file opens without asking, so pdf.js reads
 * it), so that their compressed streams can be vetted like those of any other PDF.
 * Covers RC4 and AES-128 (revisions 2–4) and AES-256 (revisions 5 and 6), after
 * PDF 32000-1:2008 §7.6.3 and ISO 32000-2 §7.6.4.
 */
import { createCipheriv, createDecipheriv, createHash } from "node:crypto";

/** Decrypts one stream of object `number`, generation `generation`. */
export type StreamDecryptor = (number: number, generation: number, data: Uint8Array) => Uint8Array;

export type PdfEncryption =
  | { kind: "none" }
  /** Opening needs a password: pdf.js will refuse the file, there is nothing to vet. */
  | { kind: "password" }
  /** Encrypted in a way this module does not read (another handler, malformed dictionary). */
  | { kind: "unsupported"; reason: string }
  | { kind: "empty-password"; decrypt: StreamDecryptor; encryptsMetadata: boolean };

const PAD = Buffer.from("28bf4e5e4e758a4164004e56fffa01082e2e00b6d0683e802f0ca9fe6453697a", "hex");

/** Reads the file's encryption from its last `/Encrypt` reference and `/ID`. */
export function pdfEncryption(pdf: Buffer): PdfEncryption {
  const at = pdf.lastIndexOf("/Encrypt", undefined, "latin1");
  if (at === -1) return { kind: "none" };
  const ref = /^\/Encrypt\s*(\d+)\s+(\d+)\s+R/.exec(pdf.toString("latin1", at, at + 64));
  if (!ref) return { kind: "unsupported", reason: "the /Encrypt entry is not a reference" };
  const dict = objectText(pdf, Number(ref[1]), Number(ref[2]));
  if (!dict) return { kind: "unsupported", reason: "the encryption dictionary cannot be found" };
  if (!/\/Filter\s*\/Standard\b/.test(dict)) return { kind: "unsupported", reason: "not the standard security handler" };
  const v = intOf(dict, "V") ?? 0;
  const r = intOf(dict, "R") ?? 0;
  const p = intOf(dict, "P");
  const o = stringOf(dict, "O");
  const u = stringOf(dict, "U");
  if (p === null || !o || !u) return { kind: "unsupported", reason: "the encryption dictionary lacks /O, /U or /P" };
  const encryptsMetadata = !/\/EncryptMetadata\s*false/.test(dict);
  const streamFilter = /\/StmF\s*\/([A-Za-z0-9]+)/.exec(dict)?.[1] ?? "Identity";
  const method = v >= 4 ? (streamFilter === "Identity" ? "identity" : cryptFilterMethod(dict, streamFilter)) : "rc4";
  if (method === null) return { kind: "unsupported", reason: "unknown crypt filter" };
  if (r >= 5) {
    const key = aes256FileKey(r, u, stringOf(dict, "UE"));
    if (key === "password") return { kind: "password" };
    if (!key) return { kind: "unsupported", reason: "malformed AES-256 encryption dictionary" };
    return { kind: "empty-password", encryptsMetadata, decrypt: method === "identity" ? (_n, _g, d) => d : (_n, _g, d) => aesDecrypt("aes-256-cbc", key, d) };
  }
  const idAt = pdf.lastIndexOf("/ID", undefined, "latin1");
  const firstId = (idAt === -1 ? null : stringAt(pdf.toString("latin1", idAt, idAt + 600), "/ID")) ?? Buffer.alloc(0);
  const length = v >= 4 ? 16 : v === 1 ? 5 : Math.min(16, Math.max(5, Math.floor((intOf(dict, "Length") ?? 40) / 8)));
  const key = rc4FileKey(r, length, o, p, firstId, encryptsMetadata);
  if (!rc4UserPasswordMatches(r, key, u, firstId)) return { kind: "password" };
  if (method === "identity") return { kind: "empty-password", encryptsMetadata, decrypt: (_n, _g, d) => d };
  const aes = method === "aes";
  return {
    kind: "empty-password",
    encryptsMetadata,
    decrypt: (number, generation, data) => {
      const salt = Buffer.from([number & 0xff, (number >> 8) & 0xff, (number >> 16) & 0xff, generation & 0xff, (generation >> 8) & 0xff]);
      const objectKey = md5(key, salt, aes ? Buffer.from("sAlT", "latin1") : Buffer.alloc(0)).subarray(0, Math.min(16, key.length + 5));
      return aes ? aesDecrypt("aes-128-cbc", objectKey, data) : rc4(objectKey, data);
    },
  };
}

/** `/CFM` of the named crypt filter in `/CF`: RC4 (`/V2`), AES (`/AESV2`, `/AESV3`), or none. */
function cryptFilterMethod(dict: string, name: string): "rc4" | "aes" | "identity" | null {
  const filter = new RegExp(`/${name}\\s*<<([^>]*)>>`).exec(dict)?.[1] ?? "";
  const cfm = /\/CFM\s*\/([A-Za-z0-9]+)/.exec(filter)?.[1] ?? "None";
  if (cfm === "V2") return "rc4";
  if (cfm === "AESV2" || cfm === "AESV3") return "aes";
  return cfm === "None" ? "identity" : null;
}

/** Algorithm 2: the file key from the (empty) user password. */
function rc4FileKey(r: number, length: number, o: Buffer, p: number, id: Buffer, encryptsMetadata: boolean): Buffer {
  const permissions = Buffer.alloc(4);
  permissions.writeInt32LE(p | 0);
  let hash = md5(PAD, o.subarray(0, 32), permissions, id, r >= 4 && !encryptsMetadata ? Buffer.from([0xff, 0xff, 0xff, 0xff]) : Buffer.alloc(0));
  if (r >= 3) for (let i = 0; i < 50; i++) hash = md5(hash.subarray(0, length));
  return hash.subarray(0, length);
}

/** Algorithms 4 and 5: does the empty password open the file? */
function rc4UserPasswordMatches(r: number, key: Buffer, u: Buffer, id: Buffer): boolean {
  if (r === 2) return rc4(key, PAD).equals(u.subarray(0, 32));
  let x: Uint8Array = rc4(key, md5(PAD, id));
  for (let i = 1; i <= 19; i++) x = rc4(Buffer.from(key.map((b) => b ^ i)), x);
  return Buffer.from(x).equals(u.subarray(0, 16));
}

/** Revisions 5 and 6: validates the empty password against /U and unwraps the file key from /UE. */
function aes256FileKey(r: number, u: Buffer, ue: Buffer | null): Buffer | "password" | null {
  if (u.length < 48 || !ue || ue.length < 32) return null;
  const hash = (input: Buffer): Buffer => (r === 5 ? createHash("sha256").update(input).digest() : hardenedHash(input));
  if (!hash(u.subarray(32, 40)).equals(u.subarray(0, 32))) return "password";
  const intermediate = hash(u.subarray(40, 48));
  const decipher = createDecipheriv("aes-256-cbc", intermediate, Buffer.alloc(16));
  decipher.setAutoPadding(false);
  return Buffer.concat([decipher.update(ue.subarray(0, 32)), decipher.final()]);
}

/** ISO 32000-2 Algorithm 2.B for the empty password (no user-key data). */
function hardenedHash(input: Buffer): Buffer {
  let k = createHash("sha256").update(input).digest();
  for (let round = 0; ; round++) {
    const k1 = Buffer.concat(Array.from({ length: 64 }, () => k));
    const cipher = createCipheriv("aes-128-cbc", k.subarray(0, 16), k.subarray(16, 32));
    cipher.setAutoPadding(false);
    const e = Buffer.concat([cipher.update(k1), cipher.final()]);
    let sum = 0;
    for (let i = 0; i < 16; i++) sum += e[i]!;
    k = createHash(["sha256", "sha384", "sha512"][sum % 3]!).update(e).digest();
    if (round >= 63 && e[e.length - 1]! <= round - 31) return k.subarray(0, 32);
  }
}

/** AES-CBC with the IV in the first 16 bytes; padding is not checked (readers do not either). */
function aesDecrypt(algorithm: "aes-128-cbc" | "aes-256-cbc", key: Buffer, data: Uint8Array): Uint8Array {
  if (data.length < 32) return new Uint8Array(0);
  const decipher = createDecipheriv(algorithm, key, data.subarray(0, 16));
  decipher.setAutoPadding(false);
  const body = data.subarray(16, 16 + Math.floor((data.length - 16) / 16) * 16);
  return Buffer.concat([decipher.update(body), decipher.final()]);
}

/** RC4 (OpenSSL 3 ships it only in its legacy provider). */
export function rc4(key: Uint8Array, data: Uint8Array): Buffer {
  const s = Uint8Array.from({ length: 256 }, (_, i) => i);
  for (let i = 0, j = 0; i < 256; i++) {
    j = (j + s[i]! + key[i % key.length]!) & 0xff;
    [s[i], s[j]] = [s[j]!, s[i]!];
  }
  const out = Buffer.alloc(data.length);
  for (let n = 0, i = 0, j = 0; n < data.length; n++) {
    i = (i + 1) & 0xff;
    j = (j + s[i]!) & 0xff;
    [s[i], s[j]] = [s[j]!, s[i]!];
    out[n] = data[n]! ^ s[(s[i]! + s[j]!) & 0xff]!;
  }
  return out;
}

function md5(...parts: Uint8Array[]): Buffer {
  const hash = createHash("md5");
  for (const part of parts) hash.update(part);
  return hash.digest();
}

/** The text of object `number generation obj … endobj` (the last definition wins, as in incremental updates), at most 64 KiB. */
export function objectText(pdf: Buffer, number: number, generation: number): string | null {
  const header = `${number} ${generation} obj`;
  let at = pdf.lastIndexOf(header, undefined, "latin1");
  while (at > 0 && pdf[at - 1]! >= 0x30 && pdf[at - 1]! <= 0x39) at = pdf.lastIndexOf(header, at - 1, "latin1");
  if (at === -1) return null;
  const end = pdf.indexOf("endobj", at, "latin1");
  return pdf.toString("latin1", at, end === -1 ? Math.min(pdf.length, at + 65_536) : Math.min(end, at + 65_536));
}

function intOf(dict: string, key: string): number | null {
  const m = new RegExp(`/${key}\\s+(-?\\d+)`).exec(dict);
  return m ? Number(m[1]) : null;
}

function stringOf(dict: string, key: string): Buffer | null {
  return stringAt(dict, `/${key}`);
}

/** The PDF string (literal or hexadecimal) right after `key` in `text`. */
function stringAt(text: string, key: string): Buffer | null {
  const at = new RegExp(`${key.replace("/", "\\/")}(?![A-Za-z0-9])\\s*\\[?\\s*`).exec(text);
  if (!at) return null;
  let i = at.index + at[0].length;
  if (text[i] === "<") {
    const end = text.indexOf(">", i);
    if (end === -1) return null;
    const hex = text.slice(i + 1, end).replace(/\s+/g, "");
    return Buffer.from(hex.length % 2 ? `${hex}0` : hex, "hex");
  }
  if (text[i] !== "(") return null;
  const out: number[] = [];
  let depth = 0;
  for (i++; i < text.length; i++) {
    const c = text[i]!;
    if (c === "\\") {
      const next = text[++i] ?? "";
      const escapes: Record<string, number> = { n: 10, r: 13, t: 9, b: 8, f: 12, "(": 40, ")": 41, "\\": 92 };
      if (next in escapes) out.push(escapes[next]!);
      else if (/[0-7]/.test(next)) {
        let octal = next;
        while (octal.length < 3 && /[0-7]/.test(text[i + 1] ?? "")) octal += text[++i];
        out.push(parseInt(octal, 8) & 0xff);
      } else if (next === "\r") {
        if (text[i + 1] === "\n") i++;
      } else if (next !== "\n") out.push(next.charCodeAt(0));
      continue;
    }
    if (c === "(") depth++;
    if (c === ")" && depth-- === 0) break;
    out.push(c.charCodeAt(0));
  }
  return Buffer.from(out);
}
