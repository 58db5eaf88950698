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
import type { InferenceEngine } from "./engine/types.js";
import type { ChatService } from "./inference/chat-service.js";
import type { EmbeddingsService } from "./inference/embeddings-service.js";
import type { ModelRegistry } from "./models/model-registry.js";
import type { QueryService } from "./rag/answer/query-service.js";
import type { CorpusEvents } from "./rag/corpus-events.js";
import type { CorpusService } from "./rag/corpus-service.js";
import type { DocumentService } from "./rag/document-service.js";
import type { SourceService } from "./rag/answer/source-service.js";
import type { ConversationService } from "./conversations/conversation-service.js";
import { corporaRoutes } from "./http/routes/corpora-routes.js";
import { queryRoutes } from "./http/routes/query-routes.js";
import { sourceRoutes } from "./http/routes/source-routes.js";
import { conversationRoutes } from "./http/routes/conversation-routes.js";
import { authenticate } from "./http/authenticate.js";
import { errorHandler, notFoundHandler } from "./http/error-handler.js";
import { hostGuard } from "./http/host-guard.js";
import "./http/locals.js";
import { requestContext } from "./http/request-context.js";
import { adminRoutes } from "./http/routes/admin-routes.js";
import { chatRoutes } from "./http/routes/chat-routes.js";
import { embeddingsRoutes } from "./http/routes/embeddings-routes.js";
import { modelsRoutes, type ModelDefaults } from "./http/routes/models-routes.js";
import { sessionRoutes } from "./http/routes/session-routes.js";
import { workbenchStatic } from "./http/workbench-static.js";

export interface AppDeps {
  logger: Logger;
  admin: AdminService;
  sessions: SessionService;
  registry: ModelRegistry;
  modelDefaults: ModelDefaults;
  engine: InferenceEngine;
  chat: ChatService;
  embeddings: EmbeddingsService;
  rag: { corpora: CorpusService; documents: DocumentService; queries: QueryService; sources: SourceService; events: CorpusEvents; upload: { maxFiles: number; maxFileBytes: number } };
  conversations: ConversationService;
  pulls: ModelPullService;
  rateLimits: RateLimitService;
  http: { host: string; allowedHosts: string[]; maxJsonBodyBytes: number };
  version: string;
  /** The built workbench, served at `/` (browser mode); null = API only. */
  rendererDir: string | null;
}

export function createApp(deps: AppDeps): Express {
  const app = express();
  const startedAt = Math.floor(Date.now() / 1000);
  app.disable("x-powered-by");
  app.set("etag", false);
  app.set("query parser", "simple");
  app.use(requestContext(deps.logger));
  app.use(hostGuard(deps.http.host, deps.http.allowedHosts));
  app.get("/healthz", (_req, res) => {
    // No credential needed here, so nothing about this machine's files: model ids, not paths.
    const engine = deps.engine.status();
    res.json({ status: "ok", version: deps.version, engine: { ...engine, loadedModels: engine.loadedModels.map(({ path: _path, ...m }) => m) } });
  });
  if (deps.rendererDir) app.use(workbenchStatic(deps.rendererDir));
  app.use(sessionRoutes(deps.sessions, deps.rateLimits));
  // Authenticate before reading a body: strangers cannot make us parse megabytes.
  app.use("/v1", authenticate(deps.admin, deps.sessions));
  app.use("/v1", rateLimitHeaders(deps.rateLimits));
  const admit = costly(deps.rateLimits);
  // Only JSON bodies are parsed here; multipart uploads stream through their route untouched.
  app.use(express.json({ limit: deps.http.maxJsonBodyBytes, strict: true }));
  app.use(corporaRoutes({ ...deps.rag, costly: admit }));
  app.use(modelAdminRoutes(deps.pulls));
  app.use(modelsRoutes(deps.registry, deps.modelDefaults, startedAt));
  app.use(chatRoutes(deps.chat, admit));
  app.use(embeddingsRoutes(deps.embeddings, admit));
  app.use(adminRoutes(deps.admin, deps.rateLimits));
  app.use(queryRoutes(deps.rag.queries, admit));
  app.use(sourceRoutes(deps.rag.sources));
  app.use(conversationRoutes(deps.conversations, deps.rag.corpora));
  app.use(notFoundHandler);
  app.use(errorHandler);
  return app;
}
