/**
 * `restoreBackup`: a backup into an empty (or new) data folder, all or nothing.
 *
 * The restore is built in a staging folder beside the target and renamed onto it at the
 * end, so a failure at any step (a file that does not match the manifest, a missing or
 * wrong KEK, an altered manifest, a full disk) leaves the target as it was: absent or
 * empty. Checks, in order: the manifest parses and is of a format and schema this build
 * reads; the backup holds no file its manifest does not list; the KEK (or HSM) the backup
 * names unwraps the backup's key, and the manifest's MAC verifies under it; every file
 * matches its size and SHA-256 as it is copied; every corpus data key unwraps; the audit
 * trail verifies. The restore is then recorded in the restored instance's own trail.
 *
 * `dryRun` runs the same checks without a target: files are hashed in place, and only the
 * database, the signed heads and the secrets are copied (to a temporary folder, removed
 * after) so that the keys and the audit trail can be checked too.
 */
import { mkdtemp, mkdir, readdir, readFile, rename, rm, rmdir, stat } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { DEFAULT_WORKSPACE_ID } from "../../admin/admin-service.js";
import { AuditService, type AuditVerification } from "../../audit/audit-service.js";
import { SCOPES } from "../../domain/scopes.js";
import { AuditSigner } from "../../security/audit-chain.js";
import type { KeyProvider } from "../../security/key-provider.js";
import { localKeyFile, type KeyProviderSettings } from "../../security/key-providers.js";
import { LocalKeyFileProvider } from "../../security/local-key-file-provider.js";
import { AuditStore } from "../../store/audit-store.js";
import { latestSchemaVersion, openSqlDatabase } from "../../store/sql-database.js";
import { fsyncDir, isInside, listDirs, writeDurable } from "./backup-files.js";
import { checkListedFiles, verifiedCopy, verifiedRead } from "./backup-verify.js";
import { hsmForRestore, localKekForRestore, openSecret, unwrapBackupKey } from "./backup-keys.js";
import { BackupError, checkManifestMac, readManifest, type BackupManifest, type ManifestFile } from "./backup-manifest.js";

export interface RestoreOptions {
  /** The backup's folder (`<dir>/pustaka-backup-…`). */
  backup: string;
  /** The data folder to create; it must not exist or be empty (ignored with `dryRun`). */
  dataDir: string;
  /** Where models go (`config.modelsDir`); used when the backup carries models. */
  modelsDir: string;
  /** The restored instance's key provider settings (`config.security`). */
  security: KeyProviderSettings;
  /** local-file: the KEK file of the instance the backup came from, when the backup does not carry it. */
  kekFile?: string | undefined;
  /** Check everything, write nothing. */
  dryRun?: boolean;
  onProgress?: (message: string) => void;
}

export interface RestoreResult {
  manifest: BackupManifest;
  dataDir: string;
  dryRun: boolean;
  files: number;
  bytes: number;
  /** Where the KEK came from (local-file) or which HSM key unwrapped the backup. */
  kek: string;
  /** Corpus data keys unwrapped under the KEK. */
  dataKeys: number;
  audit: AuditVerification;
  /** Model files restored, and where. */
  modelsRestored: string[];
  ms: number;
}

const OPERATOR = { workspaceId: DEFAULT_WORKSPACE_ID, keyId: "local-operator", keyName: "cli", scopes: new Set(SCOPES) };

export async function restoreBackup(options: RestoreOptions): Promise<RestoreResult> {
  const started = performance.now();
  const say = options.onProgress ?? (() => undefined);
  const backupDir = path.resolve(options.backup);
  const target = path.resolve(options.dataDir);
  const dryRun = options.dryRun === true;
  const manifest = await readManifest(backupDir);
  if (manifest.schema_version > latestSchemaVersion()) {
    throw new BackupError(`this backup was made by a newer Pustaka (${manifest.pustaka_version}, database schema ${manifest.schema_version}; this build knows up to ${latestSchemaVersion()}): restore it with that version or later`, "backup_too_new");
  }
  if (!dryRun) await checkEmptyTarget(target, backupDir);
  const staging = dryRun ? await mkdtemp(path.join(os.tmpdir(), "pustaka-restore-check-")) : await stagingFor(target);
  const staged = (dataPath: string) => path.join(staging, ...dataPath.split("/"));
  let provider: KeyProvider | undefined;
  let backupKey: Buffer | undefined;
  try {
    await checkListedFiles(backupDir, manifest);
    const byPath = new Map(manifest.files.map((f) => [f.path, f]));
    // The key: the backup's own data key, unwrapped by the KEK the manifest names.
    const key = await openKek(manifest, options, target, staging, (p) => verifiedRead(backupDir, byPath.get(p)));
    provider = key.provider;
    backupKey = await unwrapBackupKey(provider, manifest);
    checkManifestMac(manifest, backupKey);
    // Every file, checked against the manifest as it is copied (or hashed, in a dry run).
    const modelsInside = isInside(target, options.modelsDir);
    const laterModels: ManifestFile[] = [];
    let bytes = 0;
    say(`${dryRun ? "checking" : "restoring"} ${manifest.files.length} files`);
    for (const file of manifest.files) {
      bytes += file.bytes;
      if (file.role === "kek") {
        await verifiedCopy(backupDir, file, null); // checked here; openKek placed the KEK
        continue;
      }
      if (file.role === "secret") {
        const name = file.path.slice("secrets/".length);
        if (name.includes("/")) throw new BackupError(`the manifest lists a secret in a sub-folder (${file.path}): it was altered`, "manifest_invalid");
        await writeDurable(staged(`keys/${name}`), openSecret(backupKey, manifest.id, name, await verifiedRead(backupDir, file)));
        continue;
      }
      if (file.role === "model") {
        if (dryRun) await verifiedCopy(backupDir, file, null);
        else if (modelsInside) await verifiedCopy(backupDir, file, path.join(staging, path.relative(target, options.modelsDir), ...file.path.slice("models/".length).split("/")));
        else laterModels.push(file);
        continue;
      }
      const rel = file.path.slice("data/".length);
      const materialize = !dryRun || rel === "pustaka.db" || rel === "audit-heads.json";
      await verifiedCopy(backupDir, file, materialize ? staged(rel) : null);
    }
    // The restored folder opens: data keys unwrap, the audit trail verifies, the restore is recorded.
    const { dataKeys, audit } = await checkRestored(staging, provider, manifest, dryRun);
    await rm(path.join(staging, key.checkFile), { force: true });
    if (dryRun) return result(manifest, target, true, key.from, dataKeys, audit, [], bytes, started);
    for (const dir of await listDirs(staging)) await fsyncDir(dir);
    if (await stat(target).catch(() => null)) await rmdir(target);
    await rename(staging, target);
    await fsyncDir(path.dirname(target));
    // Outside the data folder, last: the configured KEK location and models folder.
    if (key.writeOutside) await writeDurable(key.writeOutside.file, key.writeOutside.kek);
    const restoredModels: string[] = [];
    for (const file of laterModels) {
      const destination = path.join(options.modelsDir, ...file.path.slice("models/".length).split("/"));
      if ((await stat(destination).catch(() => null))?.size === file.bytes) continue;
      await verifiedCopy(backupDir, file, `${destination}.restoring`);
      await rename(`${destination}.restoring`, destination);
      restoredModels.push(destination);
    }
    if (modelsInside) for (const f of manifest.files.filter((f) => f.role === "model")) restoredModels.push(path.join(options.modelsDir, ...f.path.slice("models/".length).split("/")));
    return result(manifest, target, false, key.from, dataKeys, audit, restoredModels, bytes, started);
  } catch (error) {
    await rm(staging, { recursive: true, force: true }).catch(() => undefined);
    throw error;
  } finally {
    backupKey?.fill(0);
    if (dryRun) await rm(staging, { recursive: true, force: true }).catch(() => undefined);
    await provider?.close();
  }
}

function result(manifest: BackupManifest, dataDir: string, dryRun: boolean, kek: string, dataKeys: number, audit: AuditVerification, modelsRestored: string[], bytes: number, started: number): RestoreResult {
  return { manifest, dataDir, dryRun, files: manifest.files.length, bytes, kek, dataKeys, audit, modelsRestored, ms: Math.round(performance.now() - started) };
}

/** The target must be absent or an empty folder: a restore never overwrites or mixes data. */
async function checkEmptyTarget(target: string, backupDir: string): Promise<void> {
  if (isInside(backupDir, target)) throw new BackupError(`cannot restore into the backup itself (${target})`, "target_not_empty");
  const info = await stat(target).catch(() => null);
  if (!info) return;
  if (!info.isDirectory()) throw new BackupError(`${target} is a file, not a folder: restore into an empty or new folder`, "target_not_empty");
  const entries = await readdir(target);
  if (entries.length > 0) {
    throw new BackupError(`the data folder ${target} is not empty (${entries.slice(0, 3).join(", ")}${entries.length > 3 ? ", …" : ""}): restore only into an empty or new folder, so that nothing is overwritten or mixed`, "target_not_empty");
  }
}

/** `.<target>.restoring-<pid>` beside the target (same file system: the final rename is atomic); stale ones of dead restores are removed. */
async function stagingFor(target: string): Promise<string> {
  const parent = path.dirname(target);
  await mkdir(parent, { recursive: true, mode: 0o700 });
  const prefix = `.${path.basename(target)}.restoring-`;
  for (const name of (await readdir(parent)).filter((n) => n.startsWith(prefix))) {
    const pid = Number(name.slice(prefix.length));
    let alive = false;
    try {
      process.kill(pid, 0);
      alive = true;
    } catch (error) {
      alive = (error as NodeJS.ErrnoException).code === "EPERM";
    }
    if (!alive || pid === process.pid) await rm(path.join(parent, name), { recursive: true, force: true });
  }
  const staging = path.join(parent, `${prefix}${process.pid}`);
  await mkdir(staging, { mode: 0o700 });
  return staging;
}

interface OpenedKek {
  provider: KeyProvider;
  from: string;
  /** A file in the staging folder holding the KEK only for the check, removed before the rename. */
  checkFile: string;
  writeOutside?: { file: string; kek: Buffer };
}

/** The provider that unwraps the backup's key (see backup-keys.ts), with the KEK put where the restored instance looks for it. */
async function openKek(manifest: BackupManifest, options: RestoreOptions, target: string, staging: string, readFromBackup: (p: string) => Promise<Buffer>): Promise<OpenedKek> {
  const expected = manifest.key_provider;
  const checkFile = ".restore-kek-check";
  if (expected.kind === "pkcs11") {
    const provider = await hsmForRestore(expected, options.security, staging);
    return { provider, from: `the HSM token '${expected.token_label}' (${expected.kek_id})`, checkFile };
  }
  if (options.security.provider === "pkcs11") {
    throw new BackupError(
      `this backup's keys are wrapped by a local key file (KEK ${expected.kek_id}), but the configuration names an HSM (security.provider 'pkcs11'): restore with security.provider 'local-file' (and the KEK file), then move the keys into the HSM with \`pustaka keys rotate-kek\``,
      "kek_provider_mismatch",
    );
  }
  const fromBackup = expected.kek_included && !options.kekFile ? await readFromBackup("data/keys/kek.bin") : undefined;
  const { kek, from } = await localKekForRestore(expected, options.security, target, { kekFile: options.kekFile, fromBackup });
  await writeDurable(path.join(staging, checkFile), kek);
  const provider = new LocalKeyFileProvider(path.join(staging, checkFile));
  const destination = localKeyFile(options.security, target);
  if (options.dryRun) return { provider, from, checkFile };
  if (isInside(target, destination)) {
    await writeDurable(path.join(staging, path.relative(target, destination)), kek);
    return { provider, from, checkFile };
  }
  const there = await readFile(destination).catch(() => null);
  if (there && !there.equals(kek)) throw new BackupError(`the configured key file ${destination} (security.keyFile) holds another KEK than this backup needs; point security.keyFile elsewhere or remove that file`, "kek_conflict");
  return { provider, from, checkFile, ...(there ? {} : { writeOutside: { file: destination, kek } }) };
}

/** Opens the restored database: every corpus data key unwraps, the audit trail verifies; a real restore is recorded in it. */
async function checkRestored(staging: string, provider: KeyProvider, manifest: BackupManifest, dryRun: boolean): Promise<{ dataKeys: number; audit: AuditVerification }> {
  const store = await openSqlDatabase({ kind: "sqlite", dataDir: staging });
  try {
    const keys = store.sqlite!.prepare("SELECT corpus_id, wrapped_key FROM corpus_keys").all() as { corpus_id: string; wrapped_key: Buffer }[];
    for (const k of keys) {
      try {
        (await provider.unwrapKey(k.wrapped_key)).fill(0);
      } catch {
        throw new BackupError(`the KEK unwraps the backup's key but not the data key of corpus ${k.corpus_id}: the backup's database does not belong to this KEK; nothing was restored`, "data_key_unwrap_failed");
      }
    }
    const trail = await AuditService.open(new AuditStore(store), AuditSigner.open(path.join(staging, "keys", "audit-signing.pem")), { headsFile: path.join(staging, "audit-heads.json") });
    try {
      const audit = await trail.verify(OPERATOR);
      if (!dryRun) {
        await trail.recordNow({
          type: "backup.restore",
          workspaceId: null,
          actor: "cli",
          outcome: "success",
          data: { backup_id: manifest.id, backup_name: manifest.name, backup_created_at: manifest.created_at, source_host: manifest.source.host, files: manifest.files.length, audit_valid: audit.valid },
        });
      }
      return { dataKeys: keys.length, audit };
    } finally {
      await trail.close();
    }
  } finally {
    await store.close();
  }
}
