/**
 * The models a backup records: the GGUF files of the models folder (as the registry finds
 * them: three levels deep, hidden folders skipped) and the files `--model ID=PATH` binds.
 * Each is recorded by name, size and SHA-256, and copied only with `--with-models`.
 * Hashing gigabytes at every scheduled backup would cost minutes, so a file whose path,
 * size and modification time match the previous backup's record keeps its hash.
 */
import { readdir, readFile, stat } from "node:fs/promises";
import path from "node:path";
import { hashFile, isInside } from "./backup-files.js";
import { MANIFEST_FILE, type ManifestModel } from "./backup-manifest.js";

export type ModelRecord = Omit<ManifestModel, "included">;

async function ggufFiles(dir: string, depth = 3): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
  const found: string[] = [];
  for (const entry of entries) {
    const full = path.join(dir, entry.name);
    if (entry.isFile() && entry.name.toLowerCase().endsWith(".gguf")) found.push(full);
    else if (entry.isDirectory() && depth > 1 && !entry.name.startsWith(".")) found.push(...(await ggufFiles(full, depth - 1)));
  }
  return found;
}

/** Hashes recorded by the previous backup's manifest, by path, size and mtime. */
async function previousHashes(previousBackup: string | undefined): Promise<Map<string, string>> {
  const known = new Map<string, string>();
  if (!previousBackup) return known;
  try {
    const manifest = JSON.parse(await readFile(path.join(previousBackup, MANIFEST_FILE), "utf8")) as { models?: { files?: ModelRecord[] } };
    for (const m of manifest.models?.files ?? []) known.set(`${m.source_path}\0${m.bytes}\0${m.mtime_ms}`, m.sha256);
  } catch {
    // No usable previous manifest: every model is hashed.
  }
  return known;
}

export async function listModels(source: { modelsDir: string; bindings: Record<string, string> }, previousBackup: string | undefined, signal?: AbortSignal): Promise<ModelRecord[]> {
  const modelsDir = path.resolve(source.modelsDir);
  const files = new Set(await ggufFiles(modelsDir));
  const boundAs = new Map<string, string[]>();
  for (const [id, file] of Object.entries(source.bindings)) {
    const full = path.resolve(file);
    files.add(full);
    boundAs.set(full, [...(boundAs.get(full) ?? []), id]);
  }
  const known = await previousHashes(previousBackup);
  const names = new Set<string>();
  const out: ModelRecord[] = [];
  for (const file of [...files].sort()) {
    signal?.throwIfAborted();
    const info = await stat(file).catch(() => null);
    if (!info?.isFile()) continue;
    let name = isInside(modelsDir, file) ? path.relative(modelsDir, file).split(path.sep).join("/") : `bound/${path.basename(file)}`;
    for (let n = 2; names.has(name); n++) name = `bound/${n}-${path.basename(file)}`;
    names.add(name);
    const sha256 = known.get(`${file}\0${info.size}\0${info.mtimeMs}`) ?? (await hashFile(file, signal)).sha256;
    out.push({ name, source_path: file, bytes: info.size, mtime_ms: info.mtimeMs, sha256, bound_as: (boundAs.get(file) ?? []).sort() });
  }
  return out;
}
