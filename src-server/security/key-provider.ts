/**
 * Key-encryption keys (KEKs) live with a key provider; only wrapped data keys are stored
 * in the data directory. Implementations: a local key file (development and single-user
 * desktops), and, with governance, a PKCS#11 HSM and the OS keychain.
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
