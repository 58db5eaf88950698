/**
 * Reads a bundle (`bundle-format.ts`): decrypts it as it streams, walks its tar entries in
 * order, hashes each, hands each to a visitor, and at the end checks the manifest: its
 * signature, and that it lists exactly the entries read, with their sizes and hashes.
 *
 * The visitor sees entries before the signature can be checked (it is in the last entry), so
 * an import reads a bundle twice: once to verify it (the visitor only checks what it reads),
 * then again to write it, undoing everything if the second reading does not verify too.
 *
 * Failures are `BundleError`s whose codes tell a person what happened: the wrong passphrase
 * or key, a file that is not a bundle, one cut short, one altered, one signed by another key.
 */
import { createHash } from "node:crypto";
import { once } from "node:events";
import type { z } from "zod";
import { invalidRequest, type ServiceError } from "../../errors.js";
import { keyIdOf, signatureValid } from "../../security/audit-chain.js";
import { webStreamOf } from "./bundle-writer.js";
import { BUNDLE_VERSION, ENTRY_NAME, FORMAT_ENTRY, FormatEntrySchema, MANIFEST_ENTRY, ManifestSchema, MAX_BUFFERED_ENTRY, type Manifest, type ManifestEntry } from "./bundle-format.js";

export type BundleErrorCode =
  | "bundle_format_unknown"
  | "bundle_version_unsupported"
  | "bundle_key_mismatch"
  | "bundle_truncated"
  | "bundle_tampered"
  | "bundle_signature_invalid"
  | "bundle_signer_mismatch"
  | "bundle_invalid";

export class BundleError extends Error {
  constructor(
    readonly code: BundleErrorCode,
    message: string,
  ) {
    super(message);
    this.name = "BundleError";
  }

  toServiceError(param = "file"): ServiceError {
    return invalidRequest(this.message, this.code, param);
  }
}

/** A passphrase, or the age identities (`AGE-SECRET-KEY-1…`) of recipients it may have been made for. */
export interface BundleDecryption {
  passphrase?: string;
  identities?: string[];
}

export interface ReadOptions {
  /** The signer's key id (`ed25519:…`) the reader expects: any other is refused. */
  expectedSigner?: string;
  /** The largest entry (an original) read into memory. */
  maxEntryBytes?: number;
  /** Called with each entry's bytes, in order, before the manifest is checked. */
  visit?: (name: string, bytes: Buffer) => Promise<void> | void;
}

export interface VerifiedBundle {
  manifest: Manifest;
  /** The key id of the instance that signed it. */
  signer: string;
  /** Bytes of the decrypted tar stream. */
  plaintextBytes: number;
}

/**
 * Reads and verifies a bundle from its encrypted bytes.
 * @throws BundleError (what a person can act on), or the visitor's own error
 */
export async function readBundle(input: AsyncIterable<Uint8Array>, decryption: BundleDecryption, options: ReadOptions = {}): Promise<VerifiedBundle> {
  // Both loaded before decryption starts: nothing waits between its start and the first read.
  const [{ Decrypter }, { default: tarStream }] = await Promise.all([import("age-encryption"), import("tar-stream")]);
  const decrypter = new Decrypter();
  if (decryption.passphrase !== undefined) decrypter.addPassphrase(decryption.passphrase);
  for (const identity of decryption.identities ?? []) decrypter.addIdentity(identity);
  // What the encrypted input held, to tell a chunk that fails in the middle of the payload
  // (altered) from a failing last chunk (cut short, or its last bytes altered): age's streams
  // read ahead of decryption, so whether the input had ended says neither.
  const layout = new PayloadLayout();
  async function* tracked(): AsyncGenerator<Uint8Array> {
    for await (const chunk of input) {
      layout.saw(chunk);
      yield chunk;
    }
    layout.ended = true;
  }
  let plain: ReadableStream<Uint8Array>;
  try {
    plain = await decrypter.decrypt(webStreamOf(tracked()));
  } catch (error) {
    throw headerError(error);
  }

  const extract = tarStream.extract();
  let plaintextBytes = 0;
  const feeding = (async () => {
    const reader = plain.getReader();
    try {
      // A read is always waiting on the decrypted stream, so each chunk that decrypts is taken
      // (and counted) as it comes out: one still queued when a later chunk fails is dropped.
      let next = reader.read();
      for (;;) {
        const { done, value } = await next;
        if (done) break;
        plaintextBytes += value.length;
        next = reader.read();
        next.catch(() => undefined);
        // The reader stopped (it found the bundle wrong): stop decrypting too.
        if (extract.destroyed) {
          await reader.cancel().catch(() => undefined);
          return;
        }
        if (!extract.write(value)) await Promise.race([once(extract, "drain"), once(extract, "close")]);
      }
      // streamx's end() takes no argument; its typings ask for one.
      (extract as unknown as { end(): void }).end();
    } catch (error) {
      const failure = error instanceof BundleError ? error : payloadError(error, layout.failedInLastChunk(plaintextBytes));
      extract.destroy(failure);
      throw failure;
    }
  })();
  feeding.catch(() => undefined);

  const maxEntry = Math.max(options.maxEntryBytes ?? 0, MAX_BUFFERED_ENTRY);
  const seen: ManifestEntry[] = [];
  const names = new Set<string>();
  let manifestBytes: Buffer | null = null;
  try {
    for await (const entry of extract) {
      const { name, size = 0, type } = entry.header;
      if (seen.length === 0 && name !== FORMAT_ENTRY) throw new BundleError("bundle_format_unknown", "The file is encrypted with age but is not a Pustaka corpus bundle.");
      if (manifestBytes !== null) throw new BundleError("bundle_invalid", `The bundle has an entry ('${clip(name)}') after its manifest.`);
      if (type !== "file" || !ENTRY_NAME.test(name)) throw new BundleError("bundle_invalid", `The bundle holds an entry it should not ('${clip(name)}').`);
      if (names.has(name)) throw new BundleError("bundle_invalid", `The bundle holds '${clip(name)}' twice.`);
      if (size > maxEntry) throw new BundleError("bundle_invalid", `The bundle's entry '${clip(name)}' is larger (${size} bytes) than any a bundle holds.`);
      names.add(name);
      const parts: Buffer[] = [];
      for await (const chunk of entry as AsyncIterable<Buffer>) parts.push(chunk);
      const bytes = Buffer.concat(parts);
      if (name === MANIFEST_ENTRY) {
        manifestBytes = bytes;
        continue;
      }
      seen.push({ name, bytes: bytes.length, sha256: createHash("sha256").update(bytes).digest("hex") });
      if (name === FORMAT_ENTRY) checkFormat(bytes);
      await options.visit?.(name, bytes);
    }
    await feeding;
  } catch (error) {
    extract.destroy();
    // A decryption failure surfaces in the tar reader as well: report the decryption's.
    const fed = await feeding.then(
      () => null,
      (failure: unknown) => failure,
    );
    if (fed instanceof BundleError) throw fed;
    if (error instanceof BundleError) throw error;
    if (isTarError(error)) {
      throw seen.length === 0
        ? new BundleError("bundle_format_unknown", "The file is encrypted with age but is not a Pustaka corpus bundle.")
        : new BundleError("bundle_invalid", "The bundle's contents are not a valid archive.");
    }
    throw error;
  }
  if (seen.length === 0) throw new BundleError("bundle_format_unknown", "The file is encrypted with age but holds nothing: it is not a Pustaka corpus bundle.");
  if (manifestBytes === null) throw new BundleError("bundle_truncated", "The bundle ends before its manifest: it was cut short when it was written.");
  const manifest = parseManifest(manifestBytes);
  const { signature, ...signed } = manifest;
  if (keyIdOf(manifest.public_key) !== manifest.key_id || !signatureValid(manifest.public_key, signed, signature)) {
    throw new BundleError("bundle_signature_invalid", "The bundle's signature does not verify: its manifest was altered after it was signed.");
  }
  if (!sameEntries(manifest.entries, seen)) throw new BundleError("bundle_tampered", "The bundle's contents do not match its signed manifest: entries were added, removed or altered.");
  if (options.expectedSigner !== undefined && options.expectedSigner !== manifest.key_id) {
    throw new BundleError("bundle_signer_mismatch", `The bundle was signed by ${manifest.key_id}, not by ${options.expectedSigner} as expected.`);
  }
  return { manifest, signer: manifest.key_id, plaintextBytes };
}

function checkFormat(bytes: Buffer): void {
  let parsed: z.infer<typeof FormatEntrySchema>;
  try {
    parsed = FormatEntrySchema.parse(JSON.parse(bytes.toString("utf8")));
  } catch {
    throw new BundleError("bundle_format_unknown", "The file is encrypted with age but is not a Pustaka corpus bundle.");
  }
  if (parsed.version !== BUNDLE_VERSION) throw new BundleError("bundle_version_unsupported", `The bundle is of version ${parsed.version}; this Pustaka reads version ${BUNDLE_VERSION}.`);
}

function parseManifest(bytes: Buffer): Manifest {
  try {
    return ManifestSchema.parse(JSON.parse(bytes.toString("utf8")));
  } catch {
    throw new BundleError("bundle_signature_invalid", "The bundle's manifest is not one Pustaka signs: it cannot be verified.");
  }
}

function sameEntries(listed: readonly ManifestEntry[], seen: readonly ManifestEntry[]): boolean {
  return listed.length === seen.length && listed.every((e, i) => e.name === seen[i]!.name && e.bytes === seen[i]!.bytes && e.sha256 === seen[i]!.sha256);
}

/** What a failure to read the age header means to the person importing. */
function headerError(error: unknown): BundleError {
  const message = error instanceof Error ? error.message : String(error);
  if (/no identity matched|invalid header HMAC/.test(message)) {
    return new BundleError("bundle_key_mismatch", "The bundle cannot be opened with this passphrase or key: the passphrase is wrong, or the bundle was made for another recipient.");
  }
  if (/work factor is too high/.test(message)) return new BundleError("bundle_format_unknown", "The bundle asks for more key-derivation work than a Pustaka bundle does.");
  if (/stream ended before reading/.test(message)) return new BundleError("bundle_truncated", "The bundle is cut short: it ends inside its header.");
  return new BundleError("bundle_format_unknown", "The file is not a Pustaka corpus bundle (it is not an age-encrypted file).");
}

/** What a failure to decrypt the body means: a failing last chunk is a bundle cut short (or its last bytes altered). */
function payloadError(error: unknown, lastChunk: boolean): BundleError {
  const message = error instanceof Error ? error.message : String(error);
  if (lastChunk || /final chunk is empty|ciphertext is too small/.test(message)) return new BundleError("bundle_truncated", "The bundle is cut short, or its last bytes were changed.");
  return new BundleError("bundle_tampered", "The bundle was altered: part of it does not decrypt.");
}

/** age's payload: after the header (ending with its `--- <mac>` line) a 16-byte nonce, then chunks of 64 KiB of plaintext and a 16-byte tag, the last one shorter. */
const AGE_NONCE_BYTES = 16;
const AGE_CHUNK_PLAINTEXT = 64 * 1024;
const AGE_CHUNK_CIPHERTEXT = AGE_CHUNK_PLAINTEXT + 16;
const HEADER_END = Buffer.from("\n--- ");

/** How many bytes an age file held and where its header ended, from its bytes as they were read. */
class PayloadLayout {
  ended = false;
  private total = 0;
  private headerBytes: number | null = null;
  private head = Buffer.alloc(0);

  saw(chunk: Uint8Array): void {
    if (this.headerBytes === null && this.head.length < 1 << 20) {
      this.head = Buffer.concat([this.head, chunk]);
      const mac = this.head.indexOf(HEADER_END);
      const lineEnd = mac < 0 ? -1 : this.head.indexOf(0x0a, mac + HEADER_END.length);
      if (lineEnd >= 0) {
        this.headerBytes = lineEnd + 1;
        this.head = Buffer.alloc(0);
      }
    }
    this.total += chunk.length;
  }

  /**
   * Whether a decryption failure after `decrypted` bytes of plaintext (every chunk that
   * decrypted) is in the payload's last chunk. Only once the input has ended: before, more was
   * still to come, so the chunk that failed was not the last.
   */
  failedInLastChunk(decrypted: number): boolean {
    if (!this.ended || this.headerBytes === null) return this.ended;
    const payload = this.total - this.headerBytes - AGE_NONCE_BYTES;
    const chunks = Math.max(1, Math.ceil(payload / AGE_CHUNK_CIPHERTEXT));
    return Math.floor(decrypted / AGE_CHUNK_PLAINTEXT) >= chunks - 1;
  }
}

function isTarError(error: unknown): boolean {
  return error instanceof Error && /Invalid tar header|Unexpected end of data|Invalid header/i.test(error.message);
}

// eslint-disable-next-line no-control-regex -- control characters in a hostile name are what is replaced
const clip = (name: string) => (name.length > 80 ? `${name.slice(0, 80)}…` : name).replace(/[\u0000-\u001f]/g, "?");
