/**
 * `startServer(config)`: composes the stores, security, engine and services, builds the
 * app and listens. Returns the URL and an idempotent `close()`.
 */
import type { AddressInfo } from "node:net";
import http from "node:http";
import pino, { type Logger } from "pino";
import { AdminService } from "./admin/admin-service.js";
import { createApp } from "./app.js";
import type { Config } from "./config.js";
import { LlamaEngine } from "./engine/llama-engine.js";
import type { InferenceEngine } from "./engine/types.js";
import { ChatService } from "./inference/chat-service.js";
import { EmbeddingsService } from "./inference/embeddings-service.js";
import { loadCatalog } from "./models/catalog.js";
import { ModelRegistry } from "./models/model-registry.js";
import { ApiKeyStore } from "./store/api-key-store.js";
import { openDatabase } from "./store/database.js";
import { WorkspaceStore } from "./store/workspace-store.js";
import { VERSION } from "./version.js";

export interface RunningServer {
  url: string;
  /** Set on the first start without PUSTAKA_API_KEY: the admin secret, to show once. */
  generatedAdminKey: string | undefined;
  registry: ModelRegistry;
  engine: InferenceEngine;
  close(): Promise<void>;
}

export interface StartOptions {
  logger?: Logger;
}

export async function startServer(config: Config, options: StartOptions = {}): Promise<RunningServer> {
  const logger = options.logger ?? pino({ level: config.logLevel }, pino.destination(2));
  const db = openDatabase(config.dataDir);
  let engine: LlamaEngine | undefined;
  try {
    const admin = new AdminService(new WorkspaceStore(db), new ApiKeyStore(db));
    const { generatedSecret } = admin.bootstrap(config.apiKey);
    const registry = await ModelRegistry.build({
      modelsDir: config.modelsDir,
      catalog: loadCatalog(config.catalogPath),
      bindings: config.models.bindings,
      onWarning: (message) => logger.warn(message),
    });
    engine = new LlamaEngine(
      { gpu: config.engine.gpu, threads: config.engine.threads, idleUnloadSeconds: config.engine.idleUnloadSeconds, chat: config.chat, embeddings: config.embeddings },
      logger,
    );
    const chat = new ChatService(registry, engine, config.models.defaultChat);
    const embeddings = new EmbeddingsService(registry, engine, { defaultModel: config.models.defaultEmbedding, maxInputs: config.embeddings.maxInputs });
    const app = createApp({
      logger,
      admin,
      registry,
      engine,
      chat,
      embeddings,
      http: { host: config.host, allowedHosts: config.allowedHosts, maxJsonBodyBytes: config.limits.maxJsonBodyBytes },
      version: VERSION,
    });
    const server = http.createServer(app);
    // Generations can be long: no socket timeout while a response is being written.
    server.requestTimeout = 0;
    server.keepAliveTimeout = 65_000;
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(config.port, config.host, () => {
        server.off("error", reject);
        resolve();
      });
    });
    const address = server.address() as AddressInfo;
    const hostForUrl = address.family === "IPv6" ? `[${address.address}]` : address.address;
    const url = `http://${hostForUrl}:${address.port}`;
    logger.info({ url, models: registry.entries.map((e) => e.id) }, "listening");

    let closing: Promise<void> | undefined;
    const runningEngine = engine;
    return {
      url,
      generatedAdminKey: generatedSecret,
      registry,
      engine: runningEngine,
      close: () => {
        closing ??= (async () => {
          await new Promise<void>((resolve) => {
            server.close(() => resolve());
            server.closeIdleConnections();
            // Streams still open after a grace period are cut.
            setTimeout(() => server.closeAllConnections(), 2000).unref();
          });
          await runningEngine.close();
          db.close();
        })();
        return closing;
      },
    };
  } catch (error) {
    await engine?.close();
    db.close();
    throw error;
  }
}
