/**
 * The real server (startServer: SQLite, registry, node-llama-cpp) on a free port with a
 * temporary data directory, for integration tests over HTTP.
 */
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import pino from "pino";
import type { Clock } from "../../src-server/domain/clock.js";
import { randomBase62 } from "../../src-server/ids.js";
import { loadConfig, mergeConfig, packageLayout, startServer, type ConfigInput, type PustakaServer } from "../../src-server/index.js";

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
  /** Serve a workbench build from here (browser mode). */
  rendererDir?: string;
  /** Reuse a data directory (restarts); it is then left in place on close. */
  dataDir?: string;
  /** Where the server's JSON log lines go (default: silent unless PUSTAKA_TEST_LOG). */
  logStream?: NodeJS.WritableStream;
  /** `models/starter/fetch_starter.py`, for starter pulls. */
  starterScript?: string;
  /** The server's clock for retention (tombstone expiry, purge); default: the system clock. */
  clock?: Clock;
}

export async function startTestServer(options: TestServerOptions): Promise<TestServer> {
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
  const layout = packageLayout();
  const config = loadConfig({ env: {}, defaults: { catalogPath: layout.catalogPath }, overrides: mergeConfig(defaults, options.config) });
  const logger = options.logStream ? pino({ level: "debug" }, options.logStream) : pino({ level: process.env.PUSTAKA_TEST_LOG ?? "silent" });
  const server = await startServer(config, { version: layout.version, logger, rendererDir: options.rendererDir ?? null, starterScript: options.starterScript, clock: options.clock });
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
