/**
 * A backup's files checked against its manifest as a restore reads them: nothing it does
 * not list, each a regular file inside it, each of the size and SHA-256 it lists. Each way
 * one can be wrong says so, and that nothing was restored.
 */
import { createHash } from "node:crypto";
import { lstat, readFile } from "node:fs/promises";
import path from "node:path";
import { copyHashed, hashFile, isInside, listFiles, type Copied } from "./backup-files.js";
import { BackupError, MANIFEST_FILE, type BackupManifest, type ManifestFile } from "./backup-manifest.js";

/** A backup holding files its manifest does not list was altered (or is not what it says). */
export async function checkListedFiles(backupDir: string, manifest: BackupManifest): Promise<void> {
  const listed = new Set([MANIFEST_FILE, ...manifest.files.map((f) => f.path)]);
  const extra = (await listFiles(backupDir)).filter((f) => !listed.has(f));
  if (extra.length > 0) throw new BackupError(`the backup holds files its manifest does not list (${extra.slice(0, 3).join(", ")}${extra.length > 3 ? ", …" : ""}): it was altered; nothing was restored`, "backup_altered");
}

/** A file of the backup: inside it, and a regular file (a link could point anywhere). */
async function backupFile(backupDir: string, file: ManifestFile): Promise<string> {
  const full = path.join(backupDir, ...file.path.split("/"));
  if (!isInside(backupDir, full)) throw new BackupError(`the manifest lists a path outside the backup (${file.path})`, "manifest_invalid");
  const info = await lstat(full).catch((error: unknown) => missing(file, error));
  if (!info.isFile()) throw new BackupError(`${file.path} in the backup is not a regular file (a link or a device): the backup was altered; nothing was restored`, "backup_altered");
  return full;
}

function mismatch(file: ManifestFile, got: Copied): BackupError {
  const what = got.bytes !== file.bytes ? `${got.bytes} bytes where the manifest says ${file.bytes}` : `its SHA-256 is ${got.sha256.slice(0, 16)}…, the manifest says ${file.sha256.slice(0, 16)}…`;
  return new BackupError(`${file.path} does not match the backup's manifest (${what}): the backup was altered or damaged; nothing was restored`, "file_mismatch");
}

function missing(file: ManifestFile, error: unknown): never {
  if ((error as NodeJS.ErrnoException).code === "ENOENT") throw new BackupError(`the backup lacks ${file.path}, which its manifest lists: it is incomplete or was altered; nothing was restored`, "file_missing");
  throw error;
}

/** A small file of the backup, read whole and checked against the manifest. */
export async function verifiedRead(backupDir: string, file: ManifestFile | undefined): Promise<Buffer> {
  if (!file) throw new BackupError("the manifest lists no such file", "manifest_invalid");
  const bytes = await readFile(await backupFile(backupDir, file)).catch((error: unknown) => missing(file, error));
  const got = { bytes: bytes.length, sha256: createHash("sha256").update(bytes).digest("hex") };
  if (got.bytes !== file.bytes || got.sha256 !== file.sha256) throw mismatch(file, got);
  return bytes;
}

/** Copies (or, with no destination, hashes) a file of the backup, checked against the manifest. */
export async function verifiedCopy(backupDir: string, file: ManifestFile, destination: string | null): Promise<void> {
  const source = await backupFile(backupDir, file);
  const got = await (destination ? copyHashed(source, destination) : hashFile(source)).catch((error: unknown) => missing(file, error));
  if (got.bytes !== file.bytes || got.sha256 !== file.sha256) throw mismatch(file, got);
}

