/**
 * `createApp(deps)`: the Express application, built from ready components; it never
 * listens. Order: request context → host guard → health → workbench files → sign-in →
 * auth → body parsing → routes → 404 → error mapping.
 */
import express, { type Express } from "express";
import type { Logger } from "pino";
import type { AdminService } from "./admin/admin-service.js";
import type { SessionService } from "./admin/session-service.js";
import type { ModelPullService } from "./admin/model-pull-service.js";
import type { RateLimitService } from "./admin/rate-limit-service.js";
import { costly, rateLimitHeaders } from "./http/rate-limit.js";
import { modelAdminRoutes } from "./http/routes/model-admin-routes.js";
import { remoteModelRoutes } from "./http/routes/remote-model-routes.js";
import type { RemoteModelService } from "./admin/remote-model-service.js";
import type { InferenceEngine } from "./engine/types.js";
import type { ChatService } from "./inference/chat-service.js";
import type { EmbeddingsService } from "./inference/embeddings-service.js";
import type { RerankService } from "./inference/rerank-service.js";
import type { ModelRegistry } from "./models/model-registry.js";
import type { QueryService } from "./rag/answer/query-service.js";
import type { SearchTuningService } from "./rag/search-tuning-service.js";
import type { CorpusEvents } from "./rag/corpus-events.js";
import type { CorpusService } from "./rag/corpus-service.js";
import type { DocumentService } from "./rag/document-service.js";
import type { SourceService } from "./rag/answer/source-service.js";
import type { OcrStatusService } from "./rag/ocr-status.js";
import type { ConversationService } from "./conversations/conversation-service.js";
import { corporaRoutes } from "./http/routes/corpora-routes.js";
import { queryRoutes } from "./http/routes/query-routes.js";
import { sourceRoutes } from "./http/routes/source-routes.js";
import { conversationRoutes } from "./http/routes/conversation-routes.js";
import { tombstoneRoutes } from "./http/routes/tombstone-routes.js";
import { filesRoutes } from "./http/routes/files-routes.js";
import { vectorStoreRoutes } from "./http/routes/vector-store-routes.js";
import type { VectorStores } from "./rag/vector-stores/compose-vector-stores.js";
import type { TombstoneService } from "./rag/tombstone-service.js";
import type { BundleService } from "./rag/bundles/bundle-service.js";
import { bundleRoutes } from "./http/routes/bundle-routes.js";
import { authenticate, requireScope } from "./http/authenticate.js";
import { AuthThrottle } from "./http/auth-throttle.js";
import type { AuditService } from "./audit/audit-service.js";
import { trailOf } from "./http/audit-trail.js";
import { auditRoutes } from "./http/routes/audit-routes.js";
import type { ServiceAccountService } from "./admin/service-account-service.js";
import type { OAuthKeys } from "./security/oauth-keys.js";
import type { SecurityStatus } from "./contract/index.js";
import { oauthRoutes } from "./http/routes/oauth-routes.js";
import { serviceAccountRoutes } from "./http/routes/service-account-routes.js";
import { securityRoutes } from "./http/routes/security-routes.js";
import { errorHandler, notFoundHandler } from "./http/error-handler.js";
import { hostGuard } from "./http/host-guard.js";
import "./http/locals.js";
import { requestContext } from "./http/request-context.js";
import { adminRoutes } from "./http/routes/admin-routes.js";
import { openApiDocument } from "./http/openapi/openapi-document.js";
import { doc } from "./http/openapi/route-doc.js";
import { docsPage } from "./http/openapi/docs-page.js";
import type { Metrics } from "./http/metrics.js";
import type { Readiness } from "./ops/readiness.js";
import { chatRoutes } from "./http/routes/chat-routes.js";
import { completionsRoutes } from "./http/routes/completions-routes.js";
import { messagesRoutes } from "./http/routes/messages-routes.js";
import { ollamaRoutes } from "./http/routes/ollama-routes.js";
import { responsesRoutes } from "./http/routes/responses-routes.js";
import type { ResponseArchive } from "./inference/response-archive.js";
import { embeddingsRoutes } from "./http/routes/embeddings-routes.js";
import { rerankRoutes } from "./http/routes/rerank-routes.js";
import { modelsRoutes, type ModelDefaults } from "./http/routes/models-routes.js";
import { sessionRoutes } from "./http/routes/session-routes.js";
import { workbenchStatic } from "./http/workbench-static.js";
import { refuseDeepJson } from "./http/json-body.js";
import { mcpMetadataRoutes, mcpRoutes } from "./http/routes/mcp-routes.js";
import { ollamaListenerRoutes } from "./http/routes/ollama-listener-routes.js";
import type { OllamaListenerService } from "./admin/ollama-listener-service.js";

export interface AppDeps {
  logger: Logger;
  admin: AdminService;
  sessions: SessionService;
  registry: ModelRegistry;
  modelDefaults: ModelDefaults;
  engine: InferenceEngine;
  chat: ChatService;
  embeddings: EmbeddingsService;
  rerank: RerankService;
  rag: { corpora: CorpusService; documents: DocumentService; queries: QueryService; tuning: SearchTuningService; sources: SourceService; ocr?: OcrStatusService; events: CorpusEvents; tombstones: TombstoneService; bundles?: BundleService; upload: { maxFiles: number; maxFileBytes: number } };
  conversations: ConversationService;
  /** OpenAI's Files and Vector Stores over corpora. */
  vectorStores: VectorStores;
  responses: ResponseArchive;
  pulls: ModelPullService;
  /** Remote models added and tested through the admin API. */
  remoteModels: RemoteModelService;
  rateLimits: RateLimitService;
  audit: AuditService;
  oauth: { accounts: ServiceAccountService; keys: OAuthKeys };
  /** Prometheus metrics (the server makes them first: the remote engine reports into them). */
  metrics: Metrics;
  /** What `GET /readyz` reports. */
  readiness: Readiness;
  /** Sent as `X-Pustaka-Replica` on every response (replicas sharing a store); null = none. */
  replicaHeader: string | null;
  /** Seconds an idle model stays loaded (0: until the server stops); Ollama's `/api/ps` reports it. */
  idleUnloadSeconds: number;
  /** What `GET /v1/admin/security` reports. */
  securityStatus: () => Promise<SecurityStatus>;
  /** The Ollama-compatible listener on 127.0.0.1 (`/v1/admin/ollama-listener`). */
  ollamaListener: OllamaListenerService;
  http: { host: string; allowedHosts: string[]; maxJsonBodyBytes: number };
  version: string;
  /** The built workbench, served at `/` (browser mode); null = API only. */
  rendererDir: string | null;
}

export function createApp(deps: AppDeps): Express {
  const app = express();
  const startedAt = Math.floor(Date.now() / 1000);
  let openApi: Record<string, unknown> | undefined;
  app.disable("x-powered-by");
  app.set("etag", false);
  app.set("query parser", "simple");
  app.use(requestContext(deps.logger));
  // Behind a load balancer: which replica answered (for operators reading logs beside a client's report).
  if (deps.replicaHeader) {
    const replica = deps.replicaHeader;
    app.use((_req, res, next) => {
      res.setHeader("X-Pustaka-Replica", replica);
      next();
    });
  }
  const metrics = deps.metrics;
  app.use(metrics.middleware());
  app.use(hostGuard(deps.http.host, deps.http.allowedHosts));
  app.get("/readyz", doc({ summary: "Readiness for a load balancer: the store answers, its schema is current, the key provider works, the replica is not draining (503 otherwise); no key needed", tag: "Discovery", public: true }), async (_req, res) => {
    const report = await deps.readiness.report();
    res.status(report.status === "ready" ? 200 : 503).json(report);
  });
  app.get("/healthz", doc({ summary: "Liveness and the engine's state (GPU, threads, loaded models); no key needed", tag: "Discovery", public: true }), (_req, res) => {
    // No credential needed here, so nothing about this machine's files: model ids, not paths.
    const engine = deps.engine.status();
    res.json({ status: "ok", version: deps.version, replica: deps.readiness.replica, engine: { ...engine, loadedModels: engine.loadedModels.map(({ path: _path, ...m }) => m) } });
  });
  // The token endpoint, JWKS and OAuth metadata come before authentication (they are how a
  // service account gets a credential) and before the workbench's page fallback.
  // One backoff for failed authentication, so bad API keys and bad client secrets share a source's budget.
  const authThrottle = new AuthThrottle();
  app.use(oauthRoutes(deps.oauth.accounts, deps.oauth.keys, deps.audit, authThrottle));
  // Where MCP clients learn which authorization server issues tokens for /mcp (public, like the OAuth metadata).
  const issuer = () => deps.oauth.accounts.settings.issuer();
  app.locals.publicUrl = issuer;
  app.use(mcpMetadataRoutes(issuer));
  // The API reference as a page, from the OpenAPI document, authenticated as the document is (before the workbench's page fallback).
  app.use(docsPage({ document: () => (openApi ??= openApiDocument(app, { version: deps.version })), authenticate: authenticate(deps.admin, deps.sessions, deps.audit, deps.oauth.accounts, authThrottle), authenticated: rateLimitHeaders(deps.rateLimits) }));
  // The workbench's files and pages; it never answers a path under the API's prefixes
  // (http/api-paths.ts), so those reach the routes below or the JSON 404.
  if (deps.rendererDir) app.use(workbenchStatic(deps.rendererDir));
  app.use(sessionRoutes(deps.sessions, deps.rateLimits, deps.audit));
  // Authenticate before reading a body: strangers cannot make us parse megabytes.
  app.use(["/v1", "/metrics", "/mcp", "/api"], authenticate(deps.admin, deps.sessions, deps.audit, deps.oauth.accounts, authThrottle));
  // Prometheus scrapes with a bearer key holding `metrics.read` (the path it expects, and under /v1).
  app.get(["/metrics", "/v1/metrics"], doc({ summary: "Prometheus metrics: requests, latency, tokens, time to first token, queues, loaded models, indexing", tag: "Discovery", response: { contentType: "text/plain" } }), requireScope("metrics.read"), async (_req, res) => {
    const { contentType, text } = await metrics.exposition();
    res.type(contentType).send(text);
  });
  app.use(["/v1", "/mcp", "/api"], rateLimitHeaders(deps.rateLimits));
  const admit = costly(deps.rateLimits);
  const trail = trailOf(deps.audit);
  // Only JSON bodies are parsed here; multipart uploads stream through their route untouched.
  app.use(express.json({ limit: deps.http.maxJsonBodyBytes, strict: true, verify: refuseDeepJson }));
  app.use(corporaRoutes({ ...deps.rag, costly: admit, trail, audit: deps.audit }));
  if (deps.rag.bundles) app.use(bundleRoutes({ bundles: deps.rag.bundles, corpora: deps.rag.corpora, trail }));
  // OpenAI's Files (uploads stream through untouched, like the corpus upload) and Vector Stores.
  app.use(filesRoutes({ files: deps.vectorStores.files, maxFileBytes: deps.rag.upload.maxFileBytes, costly: admit, trail }));
  app.use(vectorStoreRoutes({ stores: deps.vectorStores.stores, files: deps.vectorStores.storeFiles, search: deps.vectorStores.search, costly: admit, trail }));
  app.use(modelAdminRoutes(deps.pulls));
  app.use(remoteModelRoutes(deps.remoteModels, trail));
  app.use(modelsRoutes(deps.registry, deps.modelDefaults, startedAt, deps.engine));
  app.use(chatRoutes(deps.chat, admit, trail));
  app.use(completionsRoutes(deps.chat, admit, trail));
  app.use(messagesRoutes(deps.chat, admit, trail));
  app.use(responsesRoutes(deps.chat, deps.responses, admit, trail, deps.vectorStores.search));
  app.use(embeddingsRoutes(deps.embeddings, admit, trail));
  app.use(ollamaRoutes({ chat: deps.chat, embeddings: deps.embeddings, registry: deps.registry, engine: deps.engine, costly: admit, trail, maxJsonBodyBytes: deps.http.maxJsonBodyBytes, idleUnloadSeconds: deps.idleUnloadSeconds, startedAt }));
  app.use(rerankRoutes(deps.rerank, admit, trail));
  app.use(adminRoutes(deps.admin, deps.rateLimits, trail));
  app.use(queryRoutes(deps.rag.queries, deps.rag.tuning, admit, trail));
  app.use(auditRoutes(deps.audit));
  app.use(serviceAccountRoutes(deps.oauth.accounts, deps.admin, deps.rateLimits, trail));
  app.use(securityRoutes(deps.admin, deps.securityStatus, async () => ({ kid: await deps.oauth.keys.rotate(deps.oauth.accounts.settings.tokenTtlSeconds), published: deps.oauth.keys.kids() }), trail));
  app.use(ollamaListenerRoutes(deps.ollamaListener, trail));
  app.use(sourceRoutes(deps.rag.sources, deps.rag.ocr));
  app.use(conversationRoutes(deps.conversations, deps.rag.corpora));
  app.use(tombstoneRoutes(deps.rag.tombstones));
  app.use(mcpRoutes({ corpora: deps.rag.corpora, documents: deps.rag.documents, queries: deps.rag.queries, sources: deps.rag.sources, version: deps.version }, admit, trail));
  app.get("/v1/openapi.json", doc({ summary: "This API as an OpenAPI 3.1 document, generated from the routes served and the schemas they validate with", tag: "Discovery" }), (_req, res) => {
    res.json((openApi ??= openApiDocument(app, { version: deps.version })));
  });
  app.use(notFoundHandler);
  app.use(errorHandler);
  return app;
}
