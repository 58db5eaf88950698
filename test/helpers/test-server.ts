/**
 * The real server (startServer: SQLite, registry, node-llama-cpp) on a free port with a
 * temporary data directory, for integration tests over HTTP — in the configuration
 * `npm start` runs: the built workbench mounted at `/`, so a route the workbench shadows
 * fails a test, not a user.
 */
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import pino from "pino";
import type { Clock } from "../../src-server/domain/clock.js";
import { randomBase62 } from "../../src-server/ids.js";
import { loadConfig, mergeConfig, packageLayout, startServer, type ConfigInput, type PackageLayout, type PustakaServer } from "../../src-server/index.js";

export interface TestServer {
  url: string;
  /** Admin key of the default workspace. */
  key: string;
  dataDir: string;
  server: PustakaServer & { url: string };
  /** fetch relative to the server with the admin key (or `key`) and JSON handling. */
  call(method: string, route: string, body?: unknown, key?: string | null): Promise<{ status: number; headers: Headers; json: any }>;
  close(): Promise<void>;
}

export interface TestServerOptions {
  bindings: Record<string, string>;
  config?: ConfigInput;
  /**
   * The workbench build served at `/` (browser mode). Default: the package's own build
   * (`dist/renderer`), as `npm start` serves it; a missing build fails the test with what to run.
   * `null` = API only, for a test that truly needs the server without the workbench.
   */
  rendererDir?: string | null;
  /** Reuse a data directory (restarts); it is then left in place on close. */
  dataDir?: string;
  /** Where the server's JSON log lines go (default: silent unless PUSTAKA_TEST_LOG). */
  logStream?: NodeJS.WritableStream;
  /** `models/starter/fetch_starter.py`, for starter pulls. */
  starterScript?: string;
  /** The server's clock for retention (tombstone expiry, purge); default: the system clock. */
  clock?: Clock;
}

/**
 * The built workbench, found as the CLI finds it when serving (`packageLayout()`); throws
 * with what to do when it has not been built.
 */
export function builtWorkbench(layout: PackageLayout = packageLayout()): string {
  if (layout.rendererDir) return layout.rendererDir;
  throw new Error(
    `the workbench is not built (no ${path.join(layout.root, "dist", "renderer", "index.html")}): run \`npm run build\` first. ` +
      "Test servers serve it at / as `npm start` does, so that a route it shadows fails a test.",
  );
}

export async function startTestServer(options: TestServerOptions): Promise<TestServer> {
  const layout = packageLayout();
  const rendererDir = options.rendererDir === undefined ? builtWorkbench(layout) : options.rendererDir;
  const dataDir = options.dataDir ?? mkdtempSync(path.join(os.tmpdir(), "pustaka-it-"));
  const key = `psk-test-${randomBase62(32)}`;
  const defaults: ConfigInput = {
    port: 0,
    dataDir,
    modelsDir: path.join(dataDir, "models"),
    apiKey: key,
    logLevel: "silent",
    // Never let llama.cpp guess the thread count. One thread: on a 2-core machine the
    // test's own HTTP client shares the CPU, and llama.cpp's spinning workers then stall.
    engine: { threads: 1, idleUnloadSeconds: 0, gpu: "cpu" },
    models: { bindings: options.bindings },
    // Tests that are not about rate limits must not trip them; the rate-limit tests set their own tiers.
    rateLimits: { defaultTier: "unlimited" },
    // Tests that are not about the relevance gate must not depend on a tiny model's judgement
    // of its sources; the gate's tests turn the judge on.
    rag: { relevanceJudge: false },
  };
  const config = loadConfig({ env: {}, defaults: { catalogPath: layout.catalogPath }, overrides: mergeConfig(defaults, options.config) });
  const logger = options.logStream ? pino({ level: "debug" }, options.logStream) : pino({ level: process.env.PUSTAKA_TEST_LOG ?? "silent" });
  const server = await startServer(config, { version: layout.version, logger, rendererDir, starterScript: options.starterScript, clock: options.clock });
  return {
    url: server.url,
    key,
    dataDir,
    server,
    async call(method, route, body, useKey = key) {
      const headers: Record<string, string> = {};
      if (useKey !== null) headers.authorization = `Bearer ${useKey}`;
      if (body !== undefined) headers["content-type"] = "application/json";
      const response = await fetch(server.url + route, { method, headers, body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body) });
      const text = await response.text();
      let json: unknown = text;
      try {
        json = JSON.parse(text);
      } catch {
        // not JSON (e.g. an SSE body): keep the text
      }
      return { status: response.status, headers: response.headers, json };
    },
    async close() {
      await server.close();
      if (!options.dataDir) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Reads an SSE response body into its `data:` payloads (JSON-parsed, except [DONE]). */
export async function readSse(response: Response): Promise<unknown[]> {
  const text = await response.text();
  return text
    .split("\n\n")
    .filter((block) => block.startsWith("data: "))
    .map((block) => block.slice(6))
    .map((data) => (data === "[DONE]" ? "[DONE]" : JSON.parse(data)));
}
