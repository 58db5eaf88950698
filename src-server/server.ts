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
import path from "node:path";
import { QueryService } from "./rag/answer/query-service.js";
import { CorpusEvents } from "./rag/corpus-events.js";
import { CorpusService } from "./rag/corpus-service.js";
import { DocumentService } from "./rag/document-service.js";
import { Indexer } from "./rag/indexer.js";
import { CorpusIndexes } from "./rag/retrieval/corpus-indexes.js";
import { CorpusKeyring } from "./security/corpus-keyring.js";
import { LocalKeyFileProvider } from "./security/local-key-file-provider.js";
import { ApiKeyStore } from "./store/api-key-store.js";
import { BlobStore } from "./store/blob-store.js";
import { ChunkStore } from "./store/chunk-store.js";
import { CorpusStore } from "./store/corpus-store.js";
import { DocumentStore } from "./store/document-store.js";
import { openDatabase } from "./store/database.js";
import { WorkspaceStore } from "./store/workspace-store.js";
import { VERSION } from "./version.js";

export interface RunningServer {
  url: string;
  /** Set on the first start without PUSTAKA_API_KEY: the admin secret, to show once. */
  generatedAdminKey: string | undefined;
  registry: ModelRegistry;
  engine: InferenceEngine;
  /** In-memory corpus indexes (diagnostics and tests). */
  indexes: CorpusIndexes;
  close(): Promise<void>;
}

export interface StartOptions {
  logger?: Logger;
}

export async function startServer(config: Config, options: StartOptions = {}): Promise<RunningServer> {
  const logger = options.logger ?? pino({ level: config.logLevel }, pino.destination(2));
  const db = openDatabase(config.dataDir);
  let engine: LlamaEngine | undefined;
  let indexer: Indexer | undefined;
  let indexes: CorpusIndexes | undefined;
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
    const rag = composeRag(config, db, registry, engine, logger);
    indexer = rag.indexer;
    indexes = rag.indexes;
    const app = createApp({
      logger,
      admin,
      registry,
      engine,
      chat,
      embeddings,
      rag: rag.services,
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
    rag.indexer.start();
    const purge = setInterval(() => rag.services.corpora.purgeExpiredKeys(), 3600_000);
    purge.unref();
    const runningIndexer = rag.indexer;
    const runningIndexes = rag.indexes;

    let closing: Promise<void> | undefined;
    const runningEngine = engine;
    return {
      url,
      generatedAdminKey: generatedSecret,
      registry,
      engine: runningEngine,
      indexes: runningIndexes,
      close: () => {
        closing ??= (async () => {
          await new Promise<void>((resolve) => {
            server.close(() => resolve());
            server.closeIdleConnections();
            // Streams still open after a grace period are cut.
            setTimeout(() => server.closeAllConnections(), 2000).unref();
          });
          clearInterval(purge);
          await runningIndexer.close();
          await runningIndexes.close();
          await runningEngine.close();
          db.close();
        })();
        return closing;
      },
    };
  } catch (error) {
    await indexer?.close();
    await indexes?.close();
    await engine?.close();
    db.close();
    throw error;
  }
}

/** The grounded-answer half: stores, keys, indexes, services and the indexing worker. */
function composeRag(config: Config, db: ReturnType<typeof openDatabase>, registry: ModelRegistry, engine: LlamaEngine, logger: Logger) {
  const corpusStore = new CorpusStore(db);
  const documentStore = new DocumentStore(db);
  const chunkStore = new ChunkStore(db);
  const keyring = new CorpusKeyring(new LocalKeyFileProvider(config.security.keyFile ?? path.join(config.dataDir, "keys", "kek.bin")), corpusStore);
  const blobs = new BlobStore(path.join(config.dataDir, "blobs"));
  const indexes = new CorpusIndexes(chunkStore, keyring);
  const events = new CorpusEvents();
  const corpora = new CorpusService({ corpora: corpusStore, keyring, blobs, indexes, events, registry });
  const indexer = new Indexer(
    { corpora: corpusStore, documents: documentStore, chunks: chunkStore, blobs, keyring, indexes, events, registry, engine, logger },
    {
      targetTokens: config.rag.chunkTargetTokens,
      maxTokens: config.rag.chunkMaxTokens,
      overlapTokens: config.rag.chunkOverlapTokens,
      embedBatch: config.rag.embedBatch,
      parseTimeoutMs: config.rag.parseTimeoutSeconds * 1000,
    },
  );
  const documents = new DocumentService({ documents: documentStore, corpora, keyring, blobs, indexes, events, onQueued: () => indexer.wake(), maxFileBytes: config.rag.maxFileBytes });
  const queries = new QueryService({
    corpora,
    documents: documentStore,
    chunks: chunkStore,
    keyring,
    indexes,
    registry,
    engine,
    defaultChatModel: config.models.defaultChat,
    minSimilarity: config.rag.minSimilarity,
    fusion: { method: config.rag.hybridFusion, vectorWeight: config.rag.hybridVectorWeight },
  });
  corpora.purgeExpiredKeys();
  return {
    indexer,
    indexes,
    services: { corpora, documents, queries, events, upload: { maxFiles: config.rag.maxFilesPerUpload, maxFileBytes: config.rag.maxFileBytes } },
  };
}
