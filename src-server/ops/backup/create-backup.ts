/**
 * `createBackup`: a complete, consistent backup of a running (or stopped) data folder.
 *
 * Order, and why it is consistent:
 *  1. the signed audit heads are read first: the server signs heads only after their
 *     entries commit, so every head read now is in the database snapshot taken next;
 *  2. the primary database is copied as of one instant (SQLite's online backup API);
 *  3. the originals (and `/v1/files` uploads) that snapshot references are copied. An
 *     original is written completely before its document row is inserted, and removed only
 *     after its row is deleted, so an original that is gone now belongs to a document
 *     deleted since the snapshot: the snapshot is taken again and only what it newly
 *     references is copied (an original still referenced after that was missing from the
 *     data folder itself, and is reported so). Originals of documents uploaded after the
 *     snapshot are not copied: the snapshot does not know them;
 *  4. the cold store (tombstones) is copied after the primary, so it holds every tombstone
 *     the primary's catalogue records; tombstones the catalogue does not know yet (deletions
 *     after the snapshot, whose documents the snapshot still holds) are dropped from the copy;
 *  5. the secrets are sealed, the rest copied, the manifest written last; everything is
 *     fsynced, and `<name>.partial/` is renamed to `<name>/`.
 * The in-memory search index is not copied: it is built from the passages when a corpus is
 * first searched (its snapshot files are a cache of that, left out).
 */
import { randomBase62 } from "../../ids.js";
import { hostname } from "node:os";
import { readFile, readdir, rename, rm, stat } from "node:fs/promises";
import path from "node:path";
import type { KeyProvider } from "../../security/key-provider.js";
import { localKeyFile, type KeyProviderSettings } from "../../security/key-providers.js";
import { copyHashed, fsyncDir, isInside, listDirs, writeDurable, type Copied } from "./backup-files.js";
import { BackupFolder, backupName } from "./backup-folder.js";
import { describeKeyProvider, isKekFileName, newBackupKey, sealSecret } from "./backup-keys.js";
import { BACKUP_FORMAT, BackupError, MANIFEST_FILE, manifestMac, type BackupManifest, type ManifestFile } from "./backup-manifest.js";
import { listModels } from "./backup-models.js";
import { copyColdStore, snapshotWithOriginals } from "./consistent-copy.js";

/** What is backed up: a data folder, its configuration's key provider (open) and models. */
export interface BackupSource {
  dataDir: string;
  modelsDir: string;
  /** `config.models.bindings` (id → GGUF file). */
  bindings: Record<string, string>;
  security: KeyProviderSettings;
  provider: KeyProvider;
}

export interface CreateBackupOptions {
  /** The folder backups go to (created); never inside the data folder. */
  dir: string;
  /** local-file only: put the KEK in the backup (it then restores on its own; keep it as safe as the KEK). */
  includeKek?: boolean;
  /** Copy the model files (large) instead of recording their names and SHA-256 only. */
  withModels?: boolean;
  /** Complete backups to keep in `dir` after this one (older ones are deleted); absent = keep all. */
  keep?: number;
  version: string;
  trigger: "cli" | "schedule";
  onProgress?: (message: string) => void;
  signal?: AbortSignal;
}

export interface BackupResult {
  id: string;
  name: string;
  path: string;
  manifest: BackupManifest;
  files: number;
  bytes: number;
  ms: number;
  /** Unfinished backups removed before this one. */
  cleaned: string[];
  /** Old backups deleted by retention after this one. */
  pruned: string[];
}

/** Top-level entries of the data folder and what the backup does with them. */
const HANDLED = new Set(["pustaka.db", "cold", "blobs", "openai-files", "audit-heads.json", "keys", "ocr", "models"]);
/** The database's own side files: their contents are in the snapshot. */
const SNAPSHOT_PARTS = new Set(["pustaka.db-wal", "pustaka.db-shm", "pustaka.db-journal"]);
const LEFT_OUT: Record<string, string> = {
  "index-snapshots": "a cache of the search index, rebuilt from the passages when a corpus is first searched",
  logs: "server logs",
  cache: "downloads in progress and temporary files",
  imports: "corpus bundles being imported (an import in progress is not part of the data yet)",
  "server.pid": "names the running server process",
};

export async function createBackup(source: BackupSource, options: CreateBackupOptions): Promise<BackupResult> {
  const started = performance.now();
  const dataDir = path.resolve(source.dataDir);
  const dir = path.resolve(options.dir);
  const say = options.onProgress ?? (() => undefined);
  if (!(await stat(path.join(dataDir, "pustaka.db")).catch(() => null))) throw new BackupError(`${dataDir} is not a Pustaka data folder (it has no pustaka.db)`, "not_a_data_folder");
  if (isInside(dataDir, dir)) throw new BackupError(`the backup folder ${dir} is inside the data folder ${dataDir}: put backups elsewhere (another disk, ideally)`, "backup_inside_data");
  const kekFile = localKeyFile(source.security, dataDir);
  if (source.security.provider === "local-file") {
    const retired = (await readdir(path.dirname(kekFile)).catch(() => [] as string[])).filter((n) => n.startsWith(`${path.basename(kekFile)}.`) && n.endsWith(".retired"));
    if (retired.length > 0) throw new BackupError("a KEK rotation was interrupted (a retired key file is still there): run `pustaka keys rotate-kek` again to finish it, then back up", "kek_rotation_unfinished");
  } else if (options.includeKek) {
    throw new BackupError("--include-kek: this instance's KEK is in an HSM (security.provider 'pkcs11') and never leaves it; a restore needs the same token and its PIN", "kek_in_hsm");
  }

  const folder = new BackupFolder(dir);
  const unlock = await folder.lock();
  const name = backupName(Date.now());
  const partial = path.join(dir, `${name}.partial`);
  try {
    const cleaned = await folder.cleanPartials();
    if (cleaned.length > 0) say(`removed unfinished backups: ${cleaned.join(", ")}`);
    const id = `bkp_${randomBase62(24)}`;
    const files: ManifestFile[] = [];
    const add = (rel: string, copied: Copied, role: ManifestFile["role"]) => files.push({ path: rel, bytes: copied.bytes, sha256: copied.sha256, role });
    const backupKey = await newBackupKey(source.provider);
    try {
      // 1. The signed heads, before the snapshot (see the module comment).
      const heads = await readFile(path.join(dataDir, "audit-heads.json")).catch(() => null);
      // 2–3. The database and the originals it references.
      say("copying the database");
      const { snapshot, attempts, missing } = await snapshotWithOriginals(dataDir, partial, add, options.signal, say);
      // 4. The cold store, after the primary.
      await copyColdStore(dataDir, partial, snapshot.tombstones, add, options.signal);
      if (heads) add("data/audit-heads.json", await writeDurable(path.join(partial, "data", "audit-heads.json"), heads), "data");
      // 5. Secrets sealed, the KEK if asked, OCR language data, models.
      const keysDir = path.join(dataDir, "keys");
      for (const entry of await readdir(keysDir, { withFileTypes: true }).catch(() => [])) {
        if (!entry.isFile() || isKekFileName(entry.name, kekFile) || isKekFileName(entry.name, "kek.bin") || entry.name.endsWith(".tmp")) continue;
        const sealed = sealSecret(backupKey.key, id, entry.name, await readFile(path.join(keysDir, entry.name)));
        add(`secrets/${entry.name}`, await writeDurable(path.join(partial, "secrets", entry.name), sealed), "secret");
      }
      const kekIncluded = source.security.provider === "local-file" && options.includeKek === true;
      if (kekIncluded) add("data/keys/kek.bin", await copyHashed(kekFile, path.join(partial, "data", "keys", "kek.bin")), "kek");
      for (const file of (await readdir(path.join(dataDir, "ocr", "tessdata")).catch(() => [] as string[])).filter((f) => f.endsWith(".traineddata"))) {
        add(`data/ocr/tessdata/${file}`, await copyHashed(path.join(dataDir, "ocr", "tessdata", file), path.join(partial, "data", "ocr", "tessdata", file), options.signal), "data");
      }
      const previous = (await folder.complete()).at(-1);
      const models = await listModels(source, previous?.path, options.signal);
      if (options.withModels) {
        say(`copying ${models.length} model files`);
        for (const model of models) {
          const copied = await copyHashed(model.source_path, path.join(partial, "models", ...model.name.split("/")), options.signal);
          if (copied.sha256 !== model.sha256) throw new BackupError(`the model ${model.source_path} changed while it was copied; run the backup again`, "model_changed");
          add(`models/${model.name}`, copied, "model");
        }
      }
      const leftOut = await leftOutOf(dataDir, source.modelsDir, options, kekIncluded);
      const unsigned: Omit<BackupManifest, "mac"> = {
        format: BACKUP_FORMAT,
        id,
        name,
        created_at: new Date().toISOString(),
        pustaka_version: options.version,
        schema_version: snapshot.schemaVersion,
        source: { host: hostname(), data_dir: dataDir, trigger: options.trigger },
        key_provider: describeKeyProvider(source.provider, source.security, kekIncluded),
        backup_key: backupKey.wrapped.toString("base64"),
        contents: {
          workspaces: snapshot.counts.workspaces ?? 0,
          corpora: snapshot.counts.corpora ?? 0,
          documents: snapshot.documents.length,
          documents_pending: snapshot.counts.pending ?? 0,
          chunks: snapshot.counts.chunks ?? 0,
          audit_entries: snapshot.counts.audit ?? 0,
          tombstones: snapshot.tombstones.length,
          originals_missing_at_source: missing,
          snapshot_attempts: attempts,
        },
        left_out: leftOut,
        models: { included: options.withModels === true, files: models.map((m) => ({ ...m, included: options.withModels === true })), corpus_models: snapshot.corpusModels },
        files: files.sort((a, b) => a.path.localeCompare(b.path)),
      };
      const manifest: BackupManifest = { ...unsigned, mac: manifestMac(unsigned, backupKey.key) };
      await writeDurable(path.join(partial, MANIFEST_FILE), `${JSON.stringify(manifest, null, 2)}\n`);
      for (const folderPath of await listDirs(partial)) await fsyncDir(folderPath);
      const final = path.join(dir, name);
      await rename(partial, final);
      await fsyncDir(dir);
      const pruned = options.keep === undefined ? [] : await folder.prune(options.keep);
      const bytes = files.reduce((sum, f) => sum + f.bytes, 0);
      return { id, name, path: final, manifest, files: files.length, bytes, ms: Math.round(performance.now() - started), cleaned, pruned };
    } finally {
      backupKey.key.fill(0);
    }
  } catch (error) {
    await rm(partial, { recursive: true, force: true }).catch(() => undefined);
    throw error;
  } finally {
    await unlock();
  }
}

/** What the data folder holds that the backup does not, and why. */
async function leftOutOf(dataDir: string, modelsDir: string, options: CreateBackupOptions, kekIncluded: boolean): Promise<{ path: string; reason: string }[]> {
  const out: { path: string; reason: string }[] = [];
  for (const entry of (await readdir(dataDir)).sort()) {
    if (entry === "models" && path.resolve(modelsDir) === path.join(dataDir, "models")) {
      if (!options.withModels) out.push({ path: "models", reason: "model files are large: recorded by name and SHA-256 (back them up with --with-models)" });
      continue;
    }
    if (HANDLED.has(entry) || SNAPSHOT_PARTS.has(entry)) continue;
    out.push({ path: entry, reason: LEFT_OUT[entry] ?? "not part of Pustaka's data as this version knows it" });
  }
  if (!kekIncluded) out.push({ path: "keys/kek.bin", reason: "the key-encryption key: a backup that carries it protects nothing (a restore asks for it; --include-kek puts it in)" });
  return out;
}
