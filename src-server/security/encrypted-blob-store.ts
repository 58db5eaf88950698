/**
 * Stored originals sealed under their corpus key: wraps the plain `BlobStore`, so
 * storage never calls encryption. A blob is `version | iv | ciphertext | tag`
 * (AES-256-GCM, streamed), bound to its document id through the AAD.
 */
import type { Readable } from "node:stream";
import type { BlobStorage } from "../store/blob-store.js";
import type { CorpusKeyring } from "./corpus-keyring.js";

export class EncryptedBlobStore {
  constructor(
    private readonly blobs: BlobStorage,
    private readonly keyring: CorpusKeyring,
  ) {}

  /**
   * Encrypts `source` into the blob as it streams; nothing is written in clear.
   * `observe` sees every plaintext chunk first (a hash, a byte count). An error in the
   * source or the storage fails the write; a storage failure stops reading the source.
   */
  async write(corpusId: string, documentId: string, source: Readable, observe?: (chunk: Buffer) => void): Promise<void> {
    const cipher = await this.keyring.cipher(corpusId);
    const { header, cipher: gcm } = cipher.sealStream(`blob:${documentId}`);
    async function* sealed(): AsyncGenerator<Buffer> {
      yield header;
      for await (const chunk of source as AsyncIterable<Buffer>) {
        observe?.(chunk);
        const out = gcm.update(chunk);
        if (out.length > 0) yield out;
      }
      const last = gcm.final();
      if (last.length > 0) yield last;
      yield gcm.getAuthTag();
    }
    await this.blobs.write(corpusId, documentId, sealed());
  }

  /** The original bytes; throws when the blob was altered or its key is gone. */
  async read(corpusId: string, documentId: string): Promise<Buffer> {
    const cipher = await this.keyring.cipher(corpusId);
    return cipher.openStreamed(await this.blobs.read(corpusId, documentId), `blob:${documentId}`);
  }

  delete(corpusId: string, documentId: string): Promise<void> {
    return this.blobs.delete(corpusId, documentId);
  }

  list(): Promise<{ corpusId: string; documentId: string }[]> {
    return this.blobs.list();
  }

  deleteCorpus(corpusId: string): Promise<void> {
    return this.blobs.deleteCorpus(corpusId);
  }
}
