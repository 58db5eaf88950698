/**
 * Per-corpus data keys: created wrapped by the key provider, unwrapped on first use and
 * kept in memory as ciphers. Forgetting a corpus drops its cipher from memory.
 */
import type { CorpusStore } from "../store/corpus-store.js";
import { DataCipher, newDataKey } from "./data-cipher.js";
import type { KeyProvider } from "./key-provider.js";

export class CorpusKeyring {
  private readonly ciphers = new Map<string, Promise<DataCipher>>();

  constructor(
    private readonly provider: KeyProvider,
    private readonly corpora: CorpusStore,
  ) {}

  /** A new data key for a corpus about to be created: the cipher, and the key wrapped for storage. */
  async create(corpusId: string): Promise<{ provider: string; wrappedKey: Buffer }> {
    const key = newDataKey();
    const wrappedKey = await this.provider.wrapKey(key);
    this.ciphers.set(corpusId, Promise.resolve(new DataCipher(key)));
    key.fill(0);
    return { provider: this.provider.id, wrappedKey };
  }

  /** The corpus's cipher; throws when its key is gone (corpus deleted and retention over). */
  cipher(corpusId: string): Promise<DataCipher> {
    let cipher = this.ciphers.get(corpusId);
    if (!cipher) {
      cipher = (async () => {
        const stored = this.corpora.wrappedKey(corpusId);
        if (!stored) throw new Error(`no data key for corpus ${corpusId}`);
        const key = await this.provider.unwrapKey(stored.wrappedKey);
        try {
          return new DataCipher(key);
        } finally {
          key.fill(0);
        }
      })();
      cipher.catch(() => this.ciphers.delete(corpusId));
      this.ciphers.set(corpusId, cipher);
    }
    return cipher;
  }

  forget(corpusId: string): void {
    this.ciphers.delete(corpusId);
  }
}
