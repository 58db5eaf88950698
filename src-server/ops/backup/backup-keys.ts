/**
 * Key material in backups, per key provider.
 *
 * Every backup has a data key of its own, wrapped by the instance's KEK and stored wrapped
 * in the manifest. It seals the instance's plaintext secrets (`keys/audit-signing.pem`,
 * `keys/oauth-signing.json`, …) inside the backup and keys the manifest's MAC. So a backup
 * without its KEK is as protected as the data folder's encrypted records: the corpora's
 * data keys, the secrets and the manifest all need the KEK.
 *
 * - `local-file`: the KEK is a 32-byte file. It is left out unless asked for
 *   (`--include-kek`): a backup that carries its KEK beside the data protects nothing, so
 *   the default backup needs the KEK file at restore (`--kek-file`), kept apart (another
 *   medium, a password manager). The manifest names the KEK by its fingerprint.
 * - `pkcs11`: the KEK never leaves the token. A restore needs the same token (or the
 *   token's own backup restored into an HSM) and its PIN; the manifest names the token,
 *   the key label and the KEK's id.
 */
import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { DataCipher, newDataKey } from "../../security/data-cipher.js";
import type { KeyProvider } from "../../security/key-provider.js";
import { localKeyFile, openKeyProvider, type KeyProviderSettings } from "../../security/key-providers.js";
import { BackupError, type ManifestKeyProvider } from "./backup-manifest.js";

/** Files of `keys/` that are the local KEK (and its retired copies during a rotation), never sealed as secrets. */
export const isKekFileName = (name: string, kekFile: string): boolean => name === path.basename(kekFile) || name.startsWith(`${path.basename(kekFile)}.`);

const secretAad = (backupId: string, name: string) => `pustaka-backup:${backupId}:secret:${name}`;

/** A fresh backup key and its wrapping under the provider's KEK. */
export async function newBackupKey(provider: KeyProvider): Promise<{ key: Buffer; wrapped: Buffer }> {
  const key = newDataKey();
  return { key, wrapped: await provider.wrapKey(key) };
}

/** What the manifest says about the KEK (see the module comment). */
export function describeKeyProvider(provider: KeyProvider, settings: KeyProviderSettings, kekIncluded: boolean): ManifestKeyProvider {
  if (settings.provider === "pkcs11" && settings.pkcs11) {
    return { kind: "pkcs11", kek_id: provider.id, token_label: settings.pkcs11.tokenLabel, key_label: settings.pkcs11.keyLabel };
  }
  return { kind: "local-file", kek_id: provider.id, kek_included: kekIncluded };
}

export function sealSecret(backupKey: Buffer, backupId: string, name: string, bytes: Buffer): Buffer {
  return new DataCipher(backupKey).seal(bytes, secretAad(backupId, name));
}

export function openSecret(backupKey: Buffer, backupId: string, name: string, sealed: Buffer): Buffer {
  try {
    return new DataCipher(backupKey).open(sealed, secretAad(backupId, name));
  } catch {
    throw new BackupError(`the backup's sealed secret '${name}' does not open under the backup's key: it was altered`, "secret_altered");
  }
}

/** The id the local provider gives a KEK (`local-file:` and 16 hex digits of its SHA-256). */
export function localKekId(kek: Buffer): string {
  return `local-file:${createHash("sha256").update(kek).digest("hex").slice(0, 16)}`;
}

/** Where a KEK the restore needs comes from. */
export interface KekSources {
  /** `--kek-file`. */
  kekFile?: string | undefined;
  /** The KEK inside the backup (already checked against the manifest), when it carries one. */
  fromBackup?: Buffer | undefined;
}

/**
 * The local KEK a restore uses: `--kek-file`, else the one in the backup, else the
 * configured key file when it exists outside the data folder. Checked against the KEK the
 * backup names; every way it can fail says what to supply.
 */
export async function localKekForRestore(expected: Extract<ManifestKeyProvider, { kind: "local-file" }>, settings: KeyProviderSettings, targetDataDir: string, sources: KekSources): Promise<{ kek: Buffer; from: string }> {
  let kek: Buffer | undefined;
  let from: string;
  if (sources.kekFile) {
    from = sources.kekFile;
    try {
      kek = await readFile(sources.kekFile);
    } catch (error) {
      throw new BackupError(`cannot read the KEK file ${sources.kekFile} (--kek-file): ${(error as Error).message}`, "kek_unreadable");
    }
  } else if (sources.fromBackup) {
    from = "the backup (taken with --include-kek)";
    kek = sources.fromBackup;
  } else {
    const configured = localKeyFile(settings, targetDataDir);
    from = configured;
    kek = settings.keyFile ? await readFile(configured).catch(() => undefined) : undefined;
    if (!kek) {
      throw new BackupError(
        `this backup does not hold its key-encryption key (KEK ${expected.kek_id}), which it leaves out on purpose (a backup that carries its KEK protects nothing): ` +
          "pass --kek-file with the KEK file of the instance it came from (its <data-dir>/keys/kek.bin, 32 bytes; an earlier one if `pustaka keys rotate-kek` ran since the backup). Nothing was restored",
        "kek_missing",
      );
    }
  }
  if (kek.length !== 32) throw new BackupError(`${from} is not a KEK file: a KEK file holds exactly 32 bytes, this one ${kek.length}`, "kek_invalid");
  const id = localKekId(kek);
  if (id !== expected.kek_id) {
    throw new BackupError(
      `the KEK from ${from} is ${id}, but this backup's keys are wrapped by ${expected.kek_id}: pass the KEK file of the instance the backup came from (an earlier one if its KEK was rotated since). Nothing was restored`,
      "kek_mismatch",
    );
  }
  return { kek, from };
}

/**
 * Opens the HSM the configuration names for a restore of a PKCS#11 backup; a missing
 * configuration, token, key or PIN gets a message that says what the backup needs.
 */
export async function hsmForRestore(expected: Extract<ManifestKeyProvider, { kind: "pkcs11" }>, settings: KeyProviderSettings, dataDir: string): Promise<KeyProvider> {
  const needs =
    `this backup's keys are wrapped by the KEK '${expected.key_label}' (${expected.kek_id}) in the PKCS#11 token '${expected.token_label}', and a KEK in an HSM never leaves it: ` +
    `restore with a configuration (--config) naming that token — security.provider 'pkcs11', security.pkcs11 { module, tokenLabel: '${expected.token_label}', keyLabel: '${expected.key_label}' } — ` +
    "and its PIN (PUSTAKA_HSM_PIN or security.pkcs11.pinFile); on another machine, restore the token's own backup into its HSM first";
  if (settings.provider !== "pkcs11" || !settings.pkcs11) throw new BackupError(`${needs}. Nothing was restored`, "hsm_required");
  try {
    return await openKeyProvider(settings, { dataDir });
  } catch (error) {
    throw new BackupError(`cannot open the HSM: ${(error as Error).message}. ${needs}. Nothing was restored`, "hsm_unavailable");
  }
}

/** Unwraps the backup key; a KEK that is not the one that wrapped it gets the reason. */
export async function unwrapBackupKey(provider: KeyProvider, manifest: { backup_key: string; key_provider: ManifestKeyProvider }): Promise<Buffer> {
  try {
    return await provider.unwrapKey(Buffer.from(manifest.backup_key, "base64"));
  } catch {
    const what = manifest.key_provider.kind === "pkcs11" ? `the token '${manifest.key_provider.token_label}' as configured does not hold the KEK` : "the KEK given is not the one";
    throw new BackupError(`${what} this backup's keys are wrapped with (${manifest.key_provider.kek_id}); nothing was restored`, "kek_mismatch");
  }
}
