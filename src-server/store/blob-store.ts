/**
 * Stored originals, encrypted (AES-256-GCM, streamed) under the corpus key, at
 * `<data-dir>/blobs/<corpus id>/<document id>`. Paths are built only from ids this
 * server generated and checked; never from request input.
 */
import { createWriteStream } from "node:fs";
import { mkdir, readFile, rm } from "node:fs/promises";
import path from "node:path";
import type { Readable, Transform } from "node:stream";
import { pipeline } from "node:stream/promises";
import type { DataCipher } from "../security/data-cipher.js";

const ID = /^(corp|doc)_[0-9A-Za-z]{24}$/;

export class BlobStore {
  constructor(private readonly root: string) {}

  private pathOf(corpusId: string, documentId: string): string {
    if (!ID.test(corpusId) || !ID.test(documentId)) throw new Error("invalid blob id");
    return path.join(this.root, corpusId, documentId);
  }

  /**
   * Encrypts `source` into the blob as it streams (through `transforms` first, e.g. a
   * hash); nothing is written in clear. One pipeline: an error anywhere fails the write.
   */
  async write(cipher: DataCipher, corpusId: string, documentId: string, source: Readable, transforms: Transform[] = []): Promise<void> {
    const file = this.pathOf(corpusId, documentId);
    await mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
    const { header, cipher: gcm } = cipher.sealStream(`blob:${documentId}`);
    const out = createWriteStream(file, { mode: 0o600 });
    out.write(header);
    await pipeline([source, ...transforms, gcm, out], { end: false });
    await new Promise<void>((resolve, reject) => out.end(gcm.getAuthTag(), (error?: Error | null) => (error ? reject(error) : resolve())));
  }

  async read(cipher: DataCipher, corpusId: string, documentId: string): Promise<Buffer> {
    return cipher.openStreamed(await readFile(this.pathOf(corpusId, documentId)), `blob:${documentId}`);
  }

  async delete(corpusId: string, documentId: string): Promise<void> {
    await rm(this.pathOf(corpusId, documentId), { force: true });
  }

  async deleteCorpus(corpusId: string): Promise<void> {
    if (!ID.test(corpusId)) throw new Error("invalid blob id");
    await rm(path.join(this.root, corpusId), { recursive: true, force: true });
  }
}
