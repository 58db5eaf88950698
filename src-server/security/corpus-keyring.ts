/**
 * Per-corpus data keys, wrapped by the key provider and stored beside the corpus (they
 * outlive a deleted corpus until its retention ends). Forgetting a corpus drops its
 * cipher from memory.
 */
import { nowSeconds } from "../ids.js";
import type { CorpusStore } from "../store/corpus-store.js";
import { newDataKey } from "./data-cipher.js";
import { DataKeyring } from "./data-keyring.js";
import type { KeyProvider } from "./key-provider.js";

/** How long a key stored ahead of its corpus waits for it before the purge may destroy it. */
const UNCLAIMED_KEY_GRACE_SECONDS = 24 * 60 * 60;

export class CorpusKeyring extends DataKeyring {
  constructor(
    private readonly keyProvider: KeyProvider,
    private readonly corpora: CorpusStore,
  ) {
    super(keyProvider, async (id) => (await corpora.wrappedKey(id))?.wrappedKey);
  }

  /**
   * The corpus's data key, stored before the corpus itself: a new key is inserted unless
   * one is stored already, and the stored one is read back and returned. Its cipher comes
   * only from what is stored (`cipher` unwraps it on first use), so replicas, or callers,
   * creating the same corpus's key at once all seal with the one key stored first.
   * `CorpusStore.insert` claims the key with the corpus; a key never claimed (the corpus
   * was not stored) is destroyed by the purge after a day.
   */
  override async create(id: string): Promise<{ provider: string; wrappedKey: Buffer }> {
    const key = newDataKey();
    let offered: { provider: string; wrappedKey: Buffer };
    try {
      offered = { provider: this.keyProvider.id, wrappedKey: await this.keyProvider.wrapKey(key) };
    } finally {
      key.fill(0);
    }
    const now = nowSeconds();
    const stored = await this.corpora.insertKeyIfAbsent(id, offered, now, now + UNCLAIMED_KEY_GRACE_SECONDS);
    return { provider: stored.provider, wrappedKey: stored.wrappedKey };
  }
}
