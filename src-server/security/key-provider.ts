/**
 * Key-encryption keys (KEKs) live with a key provider; only wrapped data keys are stored
 * in the data directory. Implementations: a local key file (development and single-user
 * desktops) and a PKCS#11 HSM (`security.provider`); the desktop's OS-keychain provider
 * (Electron safeStorage) fits the same interface.
 */
export interface KeyProvider {
  /** Stable description stored beside each wrapped key, e.g. `local-file:3f9a…`. */
  readonly id: string;
  /** Encrypts (wraps) a data key under the provider's KEK. */
  wrapKey(dataKey: Buffer): Promise<Buffer>;
  /** Decrypts a wrapped data key; throws when it was not wrapped by this KEK or was altered. */
  unwrapKey(wrapped: Buffer): Promise<Buffer>;
  close(): Promise<void>;
}

/**
 * A provider whose KEK can be replaced (`pustaka keys rotate-kek`): during a rotation the
 * new KEK wraps while every earlier one still unwraps, so stored keys can be rewrapped
 * without touching the data they protect.
 */
export interface RotatableKeyProvider extends KeyProvider {
  /** Makes a fresh KEK the one `wrapKey` uses (and `id` names); earlier KEKs keep unwrapping. */
  beginRotation(): Promise<KekSwitch>;
}

export interface KekSwitch {
  /** The provider id before the switch. */
  readonly previousId: string;
  /** The provider id of the new KEK. */
  readonly id: string;
  /**
   * Called once every stored key is rewrapped under the new KEK: retires the earlier KEKs
   * (a key file is removed; HSM keys are destroyed only with `destroyOld`). Returns the ids retired.
   */
  commit(options?: { destroyOld?: boolean }): Promise<string[]>;
  /** Called when the rewrap failed: the earlier KEK wraps again and the new one is discarded. */
  abort(): Promise<void>;
}
