/**
 * Per-corpus data keys, wrapped by the key provider and stored beside the corpus (they
 * outlive a deleted corpus until its retention ends). Forgetting a corpus drops its
 * cipher from memory.
 */
import type { CorpusStore } from "../store/corpus-store.js";
import { DataKeyring } from "./data-keyring.js";
import type { KeyProvider } from "./key-provider.js";

export class CorpusKeyring extends DataKeyring {
  constructor(provider: KeyProvider, corpora: CorpusStore) {
    super(provider, (id) => corpora.wrappedKey(id)?.wrappedKey);
  }
}
