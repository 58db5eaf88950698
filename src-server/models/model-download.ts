/**
 * Downloads a model file over HTTP(S): resumes a partial download (`.part` file and a
 * Range request), verifies the SHA-256 when known, and moves the file into place only
 * once it is complete and verified.
 */
import { createHash, type Hash } from "node:crypto";
import { createReadStream, createWriteStream } from "node:fs";
import { mkdir, rename, rm, stat } from "node:fs/promises";
import path from "node:path";
import { Readable, Transform } from "node:stream";
import { pipeline } from "node:stream/promises";

export interface DownloadProgress {
  /** Bytes on disk so far, resumed bytes included. */
  received: number;
  /** Total size when the server says, else null. */
  total: number | null;
  /** Bytes that were already on disk when this attempt started. */
  resumedFrom: number;
}

export interface DownloadOptions {
  url: string;
  /** Final path; the partial file is `<dest>.part`. */
  dest: string;
  expectedSha256?: string | null;
  expectedBytes?: number | null;
  onProgress?: (progress: DownloadProgress) => void;
  signal?: AbortSignal;
}

export interface DownloadResult {
  path: string;
  bytes: number;
  sha256: string;
  /** False when no expected hash was known: the hash was computed, not checked. */
  verified: boolean;
  resumedFrom: number;
}

export class DownloadError extends Error {
  override name = "DownloadError";
}

async function sizeOf(file: string): Promise<number> {
  try {
    return (await stat(file)).size;
  } catch {
    return 0;
  }
}

async function hashFile(file: string, hash: Hash): Promise<void> {
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
}

export async function downloadModel(options: DownloadOptions): Promise<DownloadResult> {
  const partial = `${options.dest}.part`;
  await mkdir(path.dirname(options.dest), { recursive: true });
  let offset = await sizeOf(partial);
  const headers: Record<string, string> = { "user-agent": "pustaka-model-downloader" };
  if (offset > 0) headers.range = `bytes=${offset}-`;
  const response = await fetch(options.url, { headers, signal: options.signal, redirect: "follow" });

  let total: number | null = null;
  if (response.status === 416 && offset > 0) {
    // Nothing left to fetch: the partial file is already whole.
    total = offset;
    await response.body?.cancel();
  } else if (response.status === 206 && offset > 0) {
    const range = /\/(\d+)$/.exec(response.headers.get("content-range") ?? "");
    total = range?.[1] ? Number(range[1]) : null;
  } else if (response.ok) {
    offset = 0; // the server ignored the range: start over
    const length = response.headers.get("content-length");
    total = length ? Number(length) : null;
  } else {
    await response.body?.cancel();
    throw new DownloadError(`download failed: HTTP ${response.status} ${response.statusText} for ${options.url}`);
  }
  if (options.expectedBytes && total !== null && total !== options.expectedBytes) {
    await response.body?.cancel();
    throw new DownloadError(`server reports ${total} bytes but the catalog expects ${options.expectedBytes}`);
  }

  const hash = createHash("sha256");
  if (offset > 0) await hashFile(partial, hash);
  const resumedFrom = offset;
  let received = offset;
  options.onProgress?.({ received, total, resumedFrom });
  if (response.status !== 416 && response.body) {
    const meter = new Transform({
      transform(chunk: Buffer, _encoding, callback) {
        hash.update(chunk);
        received += chunk.length;
        options.onProgress?.({ received, total, resumedFrom });
        callback(null, chunk);
      },
    });
    await pipeline(Readable.fromWeb(response.body as never), meter, createWriteStream(partial, { flags: offset > 0 ? "a" : "w" }), { signal: options.signal });
  }
  if (total !== null && received !== total) {
    throw new DownloadError(`download incomplete: ${received} of ${total} bytes; run the command again to resume`);
  }
  const sha256 = hash.digest("hex");
  if (options.expectedSha256 && sha256 !== options.expectedSha256) {
    await rm(partial, { force: true });
    throw new DownloadError(`checksum mismatch: expected sha256 ${options.expectedSha256}, got ${sha256}; the partial file was deleted`);
  }
  await rename(partial, options.dest);
  return { path: options.dest, bytes: received, sha256, verified: Boolean(options.expectedSha256), resumedFrom };
}
