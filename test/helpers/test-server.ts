/**
 * The real server (startServer: SQLite, registry, node-llama-cpp) on a free port with a
 * temporary data directory, for integration tests over HTTP.
 */
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import pino from "pino";
import { loadConfig, mergeConfig, type ConfigInput } from "../../src-server/config.js";
import { randomBase62 } from "../../src-server/ids.js";
import { startServer, type RunningServer } from "../../src-server/server.js";

export interface TestServer {
  url: string;
  /** Admin key of the default workspace. */
  key: string;
  dataDir: string;
  server: RunningServer;
  /** fetch relative to the server with the admin key (or `key`) and JSON handling. */
  call(method: string, route: string, body?: unknown, key?: string | null): Promise<{ status: number; headers: Headers; json: any }>;
  close(): Promise<void>;
}

export async function startTestServer(options: { bindings: Record<string, string>; config?: ConfigInput }): Promise<TestServer> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), "pustaka-it-"));
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
  };
  const config = loadConfig({ env: {}, overrides: mergeConfig(defaults, options.config) });
  const server = await startServer(config, { logger: pino({ level: process.env.PUSTAKA_TEST_LOG ?? "silent" }) });
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
      rmSync(dataDir, { recursive: true, force: true });
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
