/**
 * Stored originals as opaque bytes, at `<data-dir>/blobs/<corpus id>/<document id>`.
 * This store never sees plaintext: `security/encrypted-blob-store.ts` seals what it
 * writes. Paths are built only from ids this server generated and checked; never from
 * request input.
 */
import { mkdir, open, readdir, readFile, rm } from "node:fs/promises";
import path from "node:path";
import type { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";

const ID = /^(corp|doc)_[0-9A-Za-z]{24}$/;

/** Where sealed originals are kept: files in the data folder (`BlobStore`) or the shared store (`SqlBlobStore`). */
export interface BlobStorage {
  /** Streams `source` into the blob; rejects when `source` fails (leaving nothing readable as the blob, or a partial file). */
  write(corpusId: string, documentId: string, source: Readable | AsyncIterable<Buffer>): Promise<void>;
  read(corpusId: string, documentId: string): Promise<Buffer>;
  /** The stored (sealed) bytes as a stream, or undefined when there is no such blob. */
  openRead(corpusId: string, documentId: string): Promise<Readable | undefined>;
  delete(corpusId: string, documentId: string): Promise<void>;
  list(): Promise<{ corpusId: string; documentId: string }[]>;
  deleteCorpus(corpusId: string): Promise<void>;
}

export class BlobStore implements BlobStorage {
  constructor(private readonly root: string) {}

  private pathOf(corpusId: string, documentId: string): string {
    if (!ID.test(corpusId) || !ID.test(documentId)) throw new Error("invalid blob id");
    return path.join(this.root, corpusId, documentId);
  }

  /** Streams `source` into the blob (0600); rejects, leaving a partial file, when `source` fails. */
  async write(corpusId: string, documentId: string, source: Readable | AsyncIterable<Buffer>): Promise<void> {
    const file = this.pathOf(corpusId, documentId);
    await mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
    // The file is opened before any byte flows: a stream that opened lazily could create the
    // file after a failed upload's clean-up had already run, leaving a partial file behind.
    const handle = await open(file, "w", 0o600);
    await pipeline(source, handle.createWriteStream());
  }

  async read(corpusId: string, documentId: string): Promise<Buffer> {
    return readFile(this.pathOf(corpusId, documentId));
  }

  /** The stored bytes as a stream (as they are on disk: sealed), or undefined when there is no such blob. */
  async openRead(corpusId: string, documentId: string): Promise<Readable | undefined> {
    try {
      return (await open(this.pathOf(corpusId, documentId), "r")).createReadStream();
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
      throw error;
    }
  }

  async delete(corpusId: string, documentId: string): Promise<void> {
    await rm(this.pathOf(corpusId, documentId), { force: true });
  }

  /** Every stored blob, by corpus and document (files that are not blobs of ours are ignored). */
  async list(): Promise<{ corpusId: string; documentId: string }[]> {
    const out: { corpusId: string; documentId: string }[] = [];
    const corpora = await readdir(this.root).catch(() => [] as string[]);
    for (const corpusId of corpora.filter((c) => ID.test(c))) {
      for (const documentId of (await readdir(path.join(this.root, corpusId)).catch(() => [] as string[])).filter((d) => ID.test(d))) out.push({ corpusId, documentId });
    }
    return out;
  }

  async deleteCorpus(corpusId: string): Promise<void> {
    if (!ID.test(corpusId)) throw new Error("invalid blob id");
    await rm(path.join(this.root, corpusId), { recursive: true, force: true });
  }
}
