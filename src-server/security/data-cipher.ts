/**
 * AES-256-GCM for records at rest. Each sealed value is `version(1) | iv(12) | tag(16) |
 * ciphertext`, and is bound to its identity through the additional authenticated data
 * (e.g. the chunk id), so ciphertexts cannot be swapped between records unnoticed.
 */
import { createCipheriv, createDecipheriv, randomBytes, type CipherGCM, type DecipherGCM } from "node:crypto";

const VERSION = 1;
const IV_BYTES = 12;
const TAG_BYTES = 16;
export const SEAL_OVERHEAD = 1 + IV_BYTES + TAG_BYTES;

export class DataCipher {
  private readonly key: Buffer;

  /** Copies `key`, so the caller may wipe its own copy. */
  constructor(key: Buffer) {
    if (key.length !== 32) throw new Error("a data key is 32 bytes (AES-256)");
    this.key = Buffer.from(key);
  }

  seal(plaintext: Buffer, aad: string): Buffer {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv("aes-256-gcm", this.key, iv);
    cipher.setAAD(Buffer.from(aad, "utf8"));
    const body = Buffer.concat([cipher.update(plaintext), cipher.final()]);
    return Buffer.concat([Buffer.from([VERSION]), iv, cipher.getAuthTag(), body]);
  }

  /** Throws when the value was altered, sealed under another key or for another record. */
  open(sealed: Buffer, aad: string): Buffer {
    if (sealed.length < SEAL_OVERHEAD || sealed[0] !== VERSION) throw new Error("not a sealed value of a known version");
    const decipher = createDecipheriv("aes-256-gcm", this.key, sealed.subarray(1, 1 + IV_BYTES));
    decipher.setAAD(Buffer.from(aad, "utf8"));
    decipher.setAuthTag(sealed.subarray(1 + IV_BYTES, SEAL_OVERHEAD));
    return Buffer.concat([decipher.update(sealed.subarray(SEAL_OVERHEAD)), decipher.final()]);
  }

  /**
   * Streaming encryption for large values (stored originals): write the header from
   * `header`, pipe through `cipher`, then append `cipher.getAuthTag()` as the trailer.
   */
  sealStream(aad: string): { header: Buffer; cipher: CipherGCM } {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv("aes-256-gcm", this.key, iv);
    cipher.setAAD(Buffer.from(aad, "utf8"));
    return { header: Buffer.concat([Buffer.from([VERSION]), iv]), cipher };
  }

  /** Opens a value written by `sealStream`: `version | iv | ciphertext | tag`. */
  openStreamed(sealed: Buffer, aad: string): Buffer {
    if (sealed.length < SEAL_OVERHEAD || sealed[0] !== VERSION) throw new Error("not a sealed value of a known version");
    const decipher: DecipherGCM = createDecipheriv("aes-256-gcm", this.key, sealed.subarray(1, 1 + IV_BYTES));
    decipher.setAAD(Buffer.from(aad, "utf8"));
    decipher.setAuthTag(sealed.subarray(sealed.length - TAG_BYTES));
    return Buffer.concat([decipher.update(sealed.subarray(1 + IV_BYTES, sealed.length - TAG_BYTES)), decipher.final()]);
  }
}

/** A fresh random 256-bit data key. */
export function newDataKey(): Buffer {
  return randomBytes(32);
}
