/**
 * A backup's manifest (`manifest.json`): every file of the backup with its size and
 * SHA-256, the key material a restore needs (the provider and KEK that wrap the backup's
 * own key), what the data folder held that the backup leaves out and why, and the models
 * the corpora use. It ends with a MAC under a key derived from the backup's key, which
 * only the KEK unwraps: whoever lacks the KEK cannot alter the manifest and its files
 * together without the restore noticing.
 */
import { createHmac, hkdfSync, timingSafeEqual } from "node:crypto";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { z } from "zod";
import { canonicalJson } from "../../security/audit-chain.js";

export const BACKUP_FORMAT = "pustaka-backup/1";
export const MANIFEST_FILE = "manifest.json";

/** A problem a user can act on (the CLI prints the message alone); `code` is stable. */
export class BackupError extends Error {
  override name = "BackupError";
  constructor(
    message: string,
    readonly code: string,
  ) {
    super(message);
  }
}

/** A relative path inside the backup: `data/…`, `secrets/…` or `models/…`, no `.`/`..` segment, no backslash. */
const BackupPath = z
  .string()
  .max(1024)
  .regex(/^(data|secrets|models)(\/[^/\\\0]+)+$/, "must be a relative path under data/, secrets/ or models/")
  .refine((p) => p.split("/").every((segment) => segment !== "." && segment !== ".."), "must not contain '.' or '..' segments");

const FileEntrySchema = z
  .object({
    path: BackupPath,
    bytes: z.number().int().min(0),
    sha256: z.string().regex(/^[0-9a-f]{64}$/),
    /** `data`: restored as it is under the data folder; `secret`: sealed under the backup key, restored into `keys/`; `kek`: the local KEK (only with --include-kek); `model`: a GGUF file for the models folder. */
    role: z.enum(["data", "secret", "kek", "model"]),
  })
  .strict();

const KeyProviderSchema = z.discriminatedUnion("kind", [
  z.object({ kind: z.literal("local-file"), kek_id: z.string().min(1), kek_included: z.boolean() }).strict(),
  z.object({ kind: z.literal("pkcs11"), kek_id: z.string().min(1), token_label: z.string().min(1), key_label: z.string().min(1) }).strict(),
]);

const ModelSchema = z
  .object({
    /** Where it is restored: its path under the models folder. */
    name: z.string().min(1),
    /** Where it was found (the models folder or a `--model` binding). */
    source_path: z.string(),
    bytes: z.number().int().min(0),
    mtime_ms: z.number(),
    sha256: z.string().regex(/^[0-9a-f]{64}$/),
    /** Ids bound to this file by the configuration (`--model ID=PATH`). */
    bound_as: z.array(z.string()),
    included: z.boolean(),
  })
  .strict();

export const ManifestSchema = z
  .object({
    format: z.literal(BACKUP_FORMAT),
    id: z.string().regex(/^bkp_[0-9A-Za-z]{24}$/),
    name: z.string().min(1),
    created_at: z.iso.datetime(),
    pustaka_version: z.string(),
    /** The primary database's schema version (a newer one than this build knows cannot be restored by it). */
    schema_version: z.number().int().min(0),
    source: z.object({ host: z.string(), data_dir: z.string(), trigger: z.enum(["cli", "schedule"]) }).strict(),
    key_provider: KeyProviderSchema,
    /** The backup's own data key, wrapped by the KEK (base64): it seals the secrets and keys the MAC. */
    backup_key: z.string().min(1),
    contents: z
      .object({
        workspaces: z.number().int(),
        corpora: z.number().int(),
        documents: z.number().int(),
        /** Documents still queued or being indexed at the snapshot: the restored server indexes them. */
        documents_pending: z.number().int(),
        chunks: z.number().int(),
        audit_entries: z.number().int(),
        tombstones: z.number().int(),
        /** Documents whose original was already missing from the data folder (not from the backup's doing). */
        originals_missing_at_source: z.array(z.string()),
        /** Database snapshots taken: more than one when documents were deleted while their originals were being copied. */
        snapshot_attempts: z.number().int().min(1),
      })
      .strict(),
    left_out: z.array(z.object({ path: z.string(), reason: z.string() }).strict()),
    models: z.object({ included: z.boolean(), files: z.array(ModelSchema), corpus_models: z.array(z.string()) }).strict(),
    files: z.array(FileEntrySchema),
    mac: z.string().regex(/^[0-9a-f]{64}$/),
  })
  .strict();

export type BackupManifest = z.infer<typeof ManifestSchema>;
export type ManifestFile = BackupManifest["files"][number];
export type ManifestKeyProvider = BackupManifest["key_provider"];
export type ManifestModel = BackupManifest["models"]["files"][number];

function macKey(backupKey: Buffer, id: string): Buffer {
  return Buffer.from(hkdfSync("sha256", backupKey, Buffer.from(id, "utf8"), Buffer.from("pustaka-backup:manifest-mac", "utf8"), 32));
}

/** The MAC of a manifest (every field but `mac`, canonical JSON) under the backup key. */
export function manifestMac(manifest: Omit<BackupManifest, "mac"> | BackupManifest, backupKey: Buffer): string {
  const { mac: _mac, ...rest } = manifest as BackupManifest;
  return createHmac("sha256", macKey(backupKey, rest.id)).update(canonicalJson(rest)).digest("hex");
}

/** Throws unless the manifest's MAC was made with this backup key over exactly these fields. */
export function checkManifestMac(manifest: BackupManifest, backupKey: Buffer): void {
  const expected = Buffer.from(manifestMac(manifest, backupKey), "hex");
  const given = Buffer.from(manifest.mac, "hex");
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
    throw new BackupError("the backup's manifest was altered: its MAC does not verify under the backup's key (nothing was restored)", "manifest_altered");
  }
}

/** Reads and checks `<backup>/manifest.json`; each way it can be wrong gets its own message. */
export async function readManifest(backupDir: string): Promise<BackupManifest> {
  const file = path.join(backupDir, MANIFEST_FILE);
  if (backupDir.endsWith(".partial")) {
    throw new BackupError(`${backupDir} is an unfinished backup (a '.partial' folder: the backup was interrupted); use a complete one`, "backup_incomplete");
  }
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT") throw new BackupError(`${backupDir} is not a Pustaka backup: it has no ${MANIFEST_FILE}`, "manifest_missing");
    throw new BackupError(`cannot read ${file}: ${(error as Error).message}`, "manifest_unreadable");
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new BackupError(`the backup's ${MANIFEST_FILE} is truncated or damaged (not valid JSON: ${(error as Error).message}); nothing was restored`, "manifest_damaged");
  }
  if (typeof parsed === "object" && parsed !== null && "format" in parsed && parsed.format !== BACKUP_FORMAT) {
    throw new BackupError(`the backup's format is '${String(parsed.format)}', which this version of Pustaka does not read (it reads ${BACKUP_FORMAT})`, "backup_format_unknown");
  }
  const checked = ManifestSchema.safeParse(parsed);
  if (!checked.success) {
    const problems = checked.error.issues.slice(0, 5).map((i) => `${i.path.join(".") || "(root)"}: ${i.message}`);
    throw new BackupError(`the backup's ${MANIFEST_FILE} is not a valid Pustaka backup manifest (${problems.join("; ")}); nothing was restored`, "manifest_invalid");
  }
  return checked.data;
}
