/**
 * KEK in a local file (`<data-dir>/keys/kek.bin`, mode 0600), created on first use.
 * For development and single-user machines; governance adds the HSM (PKCS#11) and OS
 * keychain providers behind the same interface.
 */
import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { DataCipher, newDataKey } from "./data-cipher.js";
import type { KeyProvider } from "./key-provider.js";

const WRAP_AAD = "pustaka:wrapped-data-key:v1";

export class LocalKeyFileProvider implements KeyProvider {
  readonly id: string;
  private readonly kek: DataCipher;

  /** Reads the KEK from `file`, creating a random one (0600) when the file does not exist. */
  constructor(file: string) {
    let kek: Buffer;
    try {
      kek = readFileSync(file);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
      mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
      kek = newDataKey();
      writeFileSync(file, kek, { mode: 0o600, flag: "wx" });
    }
    if (kek.length !== 32) throw new Error(`key file ${file} must hold exactly 32 bytes`);
    this.kek = new DataCipher(kek);
    this.id = `local-file:${createHash("sha256").update(kek).digest("hex").slice(0, 16)}`;
  }

  wrapKey(dataKey: Buffer): Promise<Buffer> {
    return Promise.resolve(this.kek.seal(dataKey, WRAP_AAD));
  }

  unwrapKey(wrapped: Buffer): Promise<Buffer> {
    return Promise.resolve(this.kek.open(wrapped, WRAP_AAD));
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}
