/**
 * Data keys of records kept sealed at rest (a corpus, a conversation): created wrapped by
 * the key provider, unwrapped on first use and kept in memory as ciphers. Where the
 * wrapped key is stored is the caller's: `lookup` finds it.
 */
import { DataCipher, newDataKey } from "./data-cipher.js";
import type { KeyProvider } from "./key-provider.js";

/** The record's wrapped data key is not stored (destroyed when its retention ended, or never created): its data cannot be decrypted. */
export class DataKeyGoneError extends Error {
  constructor(readonly recordId: string) {
    super(`the data key of ${recordId} is gone (destroyed when its retention ended, or never created): its data cannot be decrypted`);
    this.name = "DataKeyGoneError";
  }
}

export class DataKeyring {
  private readonly ciphers = new Map<string, Promise<DataCipher>>();

  constructor(
    private readonly provider: KeyProvider,
    private readonly lookup: (id: string) => Buffer | undefined | Promise<Buffer | undefined>,
  ) {}

  /** A new data key for a record about to be created: its cipher is remembered, the key returned wrapped for storage. */
  async create(id: string): Promise<{ provider: string; wrappedKey: Buffer }> {
    const key = newDataKey();
    try {
      const wrappedKey = await this.provider.wrapKey(key);
      this.ciphers.set(id, Promise.resolve(new DataCipher(key)));
      return { provider: this.provider.id, wrappedKey };
    } finally {
      key.fill(0);
    }
  }

  /** The record's cipher; throws when its key is gone (deleted, or retention over). */
  cipher(id: string): Promise<DataCipher> {
    let cipher = this.ciphers.get(id);
    if (!cipher) {
      cipher = (async () => {
        const wrapped = await this.lookup(id);
        if (!wrapped) throw new DataKeyGoneError(id);
        const key = await this.provider.unwrapKey(wrapped);
        try {
          return new DataCipher(key);
        } finally {
          key.fill(0);
        }
      })();
      cipher.catch(() => this.ciphers.delete(id));
      this.ciphers.set(id, cipher);
    }
    return cipher;
  }

  forget(id: string): void {
    this.ciphers.delete(id);
  }
}
