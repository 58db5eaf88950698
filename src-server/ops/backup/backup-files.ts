/**
 * File work of backups and restores: copies that hash what they copy (one read), durable
 * writes (file fsynced, then its folder), and a bounded pool for many small originals.
 */
import { createHash } from "node:crypto";
import { createReadStream } from "node:fs";
import { mkdir, open, readdir } from "node:fs/promises";
import path from "node:path";

export interface Copied {
  bytes: number;
  sha256: string;
}

const CHUNK = 1024 * 1024;

/**
 * Streams `source` into `destination` (a new file, 0600, its folder created 0700), hashing
 * the bytes as they pass, and fsyncs it. `source` missing rejects with ENOENT and writes nothing.
 */
export async function copyHashed(source: string, destination: string, signal?: AbortSignal): Promise<Copied> {
  const input = await open(source, "r");
  try {
    await mkdir(path.dirname(destination), { recursive: true, mode: 0o700 });
    const output = await open(destination, "wx", 0o600);
    try {
      const hash = createHash("sha256");
      const buffer = Buffer.allocUnsafe(CHUNK);
      let bytes = 0;
      for (;;) {
        signal?.throwIfAborted();
        const { bytesRead } = await input.read(buffer, 0, CHUNK, null);
        if (bytesRead === 0) break;
        const slice = buffer.subarray(0, bytesRead);
        hash.update(slice);
        let written = 0;
        while (written < bytesRead) written += (await output.write(slice, written, bytesRead - written)).bytesWritten;
        bytes += bytesRead;
      }
      await output.sync();
      return { bytes, sha256: hash.digest("hex") };
    } finally {
      await output.close();
    }
  } finally {
    await input.close();
  }
}

/** Size and SHA-256 of a file, streamed. */
export async function hashFile(file: string, signal?: AbortSignal): Promise<Copied> {
  const hash = createHash("sha256");
  let bytes = 0;
  for await (const chunk of createReadStream(file, { highWaterMark: CHUNK, signal })) {
    hash.update(chunk as Buffer);
    bytes += (chunk as Buffer).length;
  }
  return { bytes, sha256: hash.digest("hex") };
}

/** Writes `bytes` to a new file (0600) and fsyncs it. */
export async function writeDurable(file: string, bytes: Buffer | string): Promise<Copied> {
  await mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
  const handle = await open(file, "wx", 0o600);
  try {
    await handle.writeFile(bytes);
    await handle.sync();
  } finally {
    await handle.close();
  }
  const data = typeof bytes === "string" ? Buffer.from(bytes) : bytes;
  return { bytes: data.length, sha256: createHash("sha256").update(data).digest("hex") };
}

/** Flushes a folder's entries (names created or renamed in it) to disk. */
export async function fsyncDir(dir: string): Promise<void> {
  const handle = await open(dir, "r");
  try {
    await handle.sync();
  } catch (error) {
    // Some file systems cannot fsync a folder (EINVAL); their entries are as durable as they get.
    if ((error as NodeJS.ErrnoException).code !== "EINVAL") throw error;
  } finally {
    await handle.close();
  }
}

/** Every regular file under `root`, as paths relative to it with '/' separators (sorted). */
export async function listFiles(root: string): Promise<string[]> {
  const out: string[] = [];
  const walk = async (dir: string, prefix: string): Promise<void> => {
    let entries;
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return;
      throw error;
    }
    for (const entry of entries) {
      const rel = prefix ? `${prefix}/${entry.name}` : entry.name;
      if (entry.isDirectory()) await walk(path.join(dir, entry.name), rel);
      else out.push(rel);
    }
  };
  await walk(root, "");
  return out.sort();
}

/** Every folder under `root`, deepest first, then `root` itself (for fsyncing a finished tree). */
export async function listDirs(root: string): Promise<string[]> {
  const out: string[] = [];
  const walk = async (dir: string): Promise<void> => {
    for (const entry of await readdir(dir, { withFileTypes: true })) if (entry.isDirectory()) await walk(path.join(dir, entry.name));
    out.push(dir);
  };
  await walk(root);
  return out;
}

/** Runs `work` over `items`, at most `limit` at a time; the first failure rejects (after the running ones settle). */
export async function inPool<T>(items: readonly T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  let failed: Error | undefined;
  const worker = async () => {
    while (failed === undefined && next < items.length) {
      const item = items[next++]!;
      try {
        await work(item);
      } catch (error) {
        failed ??= error instanceof Error ? error : new Error(String(error));
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  if (failed !== undefined) throw failed;
}

/** `child` resolved lies inside `parent` (or is it). */
export function isInside(parent: string, child: string): boolean {
  const rel = path.relative(path.resolve(parent), path.resolve(child));
  return rel === "" || (rel.split(path.sep)[0] !== ".." && !path.isAbsolute(rel));
}
