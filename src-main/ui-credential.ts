/**
 * The workbench's own API key: made by the main process on first run, kept encrypted with
 * the OS keychain (Electron `safeStorage`), handed to the server to register and to the
 * window through the preload. It is never written in clear: without a usable keychain a
 * fresh key is made at each start instead.
 */
import { randomInt } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import type { Log } from "./log.js";
import { writeFileAtomic } from "./write-file-atomic.js";

/** The part of Electron's `safeStorage` used here. */
export interface SafeStorageLike {
  isEncryptionAvailable(): boolean;
  encryptString(plainText: string): Buffer;
  decryptString(encrypted: Buffer): string;
  /** Linux: which keyring backs the encryption; `basic_text` is a hard-coded key, no protection. */
  getSelectedStorageBackend?(): string;
}

export interface UiCredential {
  key: string;
  /** False when the key lives only for this run (no usable keychain). */
  persisted: boolean;
}

const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
export const API_KEY_PATTERN = /^psk-[0-9A-Za-z]{43}$/;

/** A new secret in the server's format: `psk-` + 43 base62 characters (~256 bits). */
export function generateApiKey(): string {
  let out = "psk-";
  for (let i = 0; i < 43; i++) out += BASE62[randomInt(62)];
  return out;
}

/** Why the keychain cannot protect the key, or null when it can. */
export function keychainProblem(safeStorage: SafeStorageLike): string | null {
  if (!safeStorage.isEncryptionAvailable()) return "safeStorage encryption is not available";
  const backend = safeStorage.getSelectedStorageBackend?.();
  if (backend === "basic_text") return "no OS keyring was found (safeStorage would use a hard-coded key, basic_text)";
  return null;
}

/**
 * The workbench key stored (encrypted) in `file`, created on first run. Without a usable
 * keychain: a fresh key for this run only, and the reason in the log.
 */
export function loadUiCredential(options: { safeStorage: SafeStorageLike; file: string; log: Log }): UiCredential {
  const { safeStorage, file, log } = options;
  const problem = keychainProblem(safeStorage);
  if (problem) {
    log.warn("the workbench API key is not stored because it would be in clear; a new key is made at each start", { reason: problem });
    return { key: generateApiKey(), persisted: false };
  }
  if (existsSync(file)) {
    try {
      const key = safeStorage.decryptString(readFileSync(file));
      if (API_KEY_PATTERN.test(key)) return { key, persisted: true };
      log.warn("the stored workbench API key is malformed; making a new one", { file });
    } catch (error) {
      log.warn("the stored workbench API key cannot be decrypted (keychain changed?); making a new one", { file, error: String(error) });
    }
  }
  const key = generateApiKey();
  writeFileAtomic(file, safeStorage.encryptString(key));
  log.info("created the workbench API key", { file });
  return { key, persisted: true };
}
