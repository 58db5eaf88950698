/**
 * Bundles the preload (src-main/preload.ts and what it imports) into one CommonJS file:
 * a sandboxed preload cannot require other files, only `electron` itself.
 * Usage: node --import tsx scripts/build-preload.ts [outfile]
 */
import path from "node:path";
import { fileURLToPath } from "node:url";
import { build, type BuildOptions } from "esbuild";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

export const PRELOAD_OUTFILE = path.join(root, "dist", "src-main", "preload.cjs");

/** esbuild options for the preload bundle. */
export function preloadBuildOptions(outfile = PRELOAD_OUTFILE): BuildOptions {
  return {
    entryPoints: [path.join(root, "src-main", "preload.ts")],
    outfile,
    bundle: true,
    format: "cjs",
    platform: "browser",
    // Electron 41 is Chromium 146.
    target: "chrome130",
    external: ["electron"],
    sourcemap: false,
    legalComments: "none",
    logLevel: "warning",
  };
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  await build(preloadBuildOptions(process.argv[2] ? path.resolve(process.argv[2]) : undefined));
}
