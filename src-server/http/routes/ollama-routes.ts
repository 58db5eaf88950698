/**
 * Ollama's API under `/api` (chat, generate, embed, embeddings, tags, show, ps, version) over
 * the same services, limits and audit trail as the OpenAI routes. Streams are NDJSON
 * (Ollama's default when `stream` is absent); errors are Ollama's `{"error":"…"}` (see
 * `error-handler.ts`), mid-stream too.
 */
import { stat } from "node:fs/promises";
import express, { Router, type RequestHandler, type Response } from "express";
import type { ChatRun, InferenceEngine } from "../../engine/types.js";
import { invalidRequest } from "../../errors.js";
import type { ChatService } from "../../inference/chat-service.js";
import type { EmbeddingsService } from "../../inference/embeddings-service.js";
import type { ModelEntry, ModelRegistry } from "../../models/model-registry.js";
import type { Trail } from "../audit-trail.js";
import { principalOf, requireScope } from "../authenticate.js";
import { streamError } from "../error-handler.js";
import { jsonBody, refuseDeepJson } from "../json-body.js";
import { pipeNdjson } from "../ndjson.js";
import { doc } from "../openapi/route-doc.js";
import { inputStrings } from "../wire/embeddings-wire.js";
import { ollamaName, psObject, resolveOllamaModel, showObject, tagObject, type FileFacts } from "../wire/ollama-models-wire.js";
import { chatLoadReply, collectChat, collectGenerate, embedObject, generateLoadReply, ollamaChatChunks, ollamaGenerateChunks, ollamaVector } from "../wire/ollama-replies-wire.js";
import {
  imagesAt,
  keepAliveSeconds,
  OLLAMA_API_VERSION,
  ollamaError,
  OllamaChatRequestSchema,
  OllamaEmbeddingsRequestSchema,
  OllamaEmbedRequestSchema,
  OllamaGenerateRequestSchema,
  OllamaShowRequestSchema,
  refuseUnsupported,
  toGeneratePlan,
  toOllamaChatInput,
} from "../wire/ollama-wire.js";
import { begin, metered } from "./chat-routes.js";

export interface OllamaRouteDeps {
  chat: ChatService;
  embeddings: EmbeddingsService;
  registry: Pick<ModelRegistry, "entries" | "find">;
  engine: Pick<InferenceEngine, "status" | "contextFor">;
  costly: RequestHandler;
  trail: Trail;
  /** Largest JSON body in bytes (the server's limit). */
  maxJsonBodyBytes: number;
  /** Seconds an idle model stays loaded (0: until the server stops), for `/api/ps`'s `expires_at`. */
  idleUnloadSeconds: number;
  /** Unix seconds the server started: the modification time of a model that has no file. */
  startedAt: number;
}

const NDJSON = { contentType: "application/x-ndjson" as const, description: "An NDJSON stream (Ollama's default), or one JSON object when stream is false" };

export function ollamaRoutes(deps: OllamaRouteDeps): Router {
  const router = Router();
  const { chat, embeddings, registry, engine, costly, trail } = deps;
  // Ollama reads every body as JSON whatever its Content-Type (its documented `curl -d`
  // examples send form encoding): JSON bodies the app's parser skipped are read here.
  router.use("/api", express.json({ limit: deps.maxJsonBodyBytes, strict: true, verify: refuseDeepJson, type: () => true }));
  const find = (name: string) => registry.find(name);

  /** When a model's file last changed (a remote model, or a file gone: when the server started). */
  const fileFacts = async (entry: ModelEntry): Promise<FileFacts> => {
    const fallback = { modifiedAt: new Date(deps.startedAt * 1000) };
    if (!entry.gguf) return fallback;
    return stat(entry.gguf.path).then((s) => ({ modifiedAt: s.mtime }), () => fallback);
  };

  /** Refuses images by the place they are in: no model here reads them. */
  const refuseImages = (request: Parameters<typeof imagesAt>[0], model: string) => {
    const at = imagesAt(request);
    if (at) throw invalidRequest(`model '${model}' does not support images: the models of this server read text only`, "unsupported_content_type", at);
  };

  /** Sends a single object, as one NDJSON line when the client asked for a stream. */
  const reply = async (res: Response, stream: boolean, body: object) => {
    if (stream) await pipeNdjson(res, [body], (error) => ollamaError(streamError(res, error)));
    else res.json(body);
  };

  /** Reserves a run's most tokens before it generates (settled to the real count as it ends), as `/v1/chat/completions` does. */
  const admitRun = async (res: Response, run: ChatRun, maxTokens: number | undefined) => {
    try {
      await res.locals.admission?.reserve(run.promptTokens + (maxTokens ?? run.contextSize - run.promptTokens));
    } catch (error) {
      await run.events.return();
      throw error;
    }
    await begin(run, res.locals.admission);
    const facts = res.locals.audit?.data ?? {};
    return metered(
      run.events,
      (completion, counted) => {
        facts.completion_tokens = completion;
        facts.prompt_tokens = counted ?? run.promptTokens;
        return res.locals.admission?.settle((counted ?? run.promptTokens) + completion);
      },
      () => (res.locals.firstTokenAt ??= performance.now()),
    );
  };

  /**
   * A request without a prompt loads the model. With `keep_alive: 0` Ollama unloads it; the
   * engine has no call to unload one model (it unloads idle ones itself), so it is answered
   * `unload` and left to the idle unload.
   */
  const loadOnly = async (name: string, keepAlive: number | string | null | undefined): Promise<"load" | "unload"> => {
    if (keepAlive != null && keepAliveSeconds(keepAlive) === 0) return "unload";
    await chat.countPromptTokens(name, { messages: [], tools: [], toolChoice: "auto" });
    return "load";
  };

  const chatAudit = trail("chat.completion", { digest: { name: "prompt", of: (body) => body.messages ?? [] } });
  router.post("/api/chat", doc({ summary: "Chat (Ollama), NDJSON-streamed by default", tag: "Ollama", body: OllamaChatRequestSchema, response: NDJSON }), chatAudit, requireScope("inference"), costly, async (req, res) => {
    const startedAt = performance.now();
    const body = jsonBody(req, OllamaChatRequestSchema);
    const stream = body.stream !== false;
    const facts = res.locals.audit?.data ?? {};
    Object.assign(facts, { model: body.model, stream, api: "ollama" });
    const { name } = resolveOllamaModel(find, body.model);
    refuseUnsupported(body, body.model);
    refuseImages(body, body.model);
    if (!body.messages?.length) {
      await reply(res, stream, chatLoadReply(body.model, await loadOnly(name, body.keep_alive)));
      return;
    }
    const input = toOllamaChatInput(body);
    const started = await chat.start(name, input, res.locals.signal);
    Object.assign(facts, { model: started.model, prompt_tokens: started.run.promptTokens, completion_tokens: 0 });
    const events = await admitRun(res, started.run, input.maxTokens);
    const chunks = ollamaChatChunks(body.model, events, { startedAt, admittedAt: performance.now() }, started.run.promptTokens);
    if (!stream) res.json(await collectChat(chunks));
    else await pipeNdjson(res, chunks, (error) => ollamaError(streamError(res, error)));
  });

  const generateAudit = trail("text.completion", { digest: { name: "prompt", of: (body) => ({ system: body.system ?? null, prompt: body.prompt ?? "", suffix: body.suffix ?? null }) } });
  router.post("/api/generate", doc({ summary: "Generate a completion for a prompt (Ollama), NDJSON-streamed by default", tag: "Ollama", body: OllamaGenerateRequestSchema, response: NDJSON }), generateAudit, requireScope("inference"), costly, async (req, res) => {
    const startedAt = performance.now();
    const body = jsonBody(req, OllamaGenerateRequestSchema);
    const stream = body.stream !== false;
    const facts = res.locals.audit?.data ?? {};
    Object.assign(facts, { model: body.model, stream, api: "ollama" });
    const { name } = resolveOllamaModel(find, body.model);
    refuseUnsupported(body, body.model);
    refuseImages(body, body.model);
    const plan = toGeneratePlan(body);
    if (!body.prompt && !body.suffix && !body.system) {
      await reply(res, stream, generateLoadReply(body.model, await loadOnly(name, body.keep_alive)));
      return;
    }
    const started = plan.kind === "chat" ? await chat.start(name, plan.input, res.locals.signal) : await chat.startCompletion(name, plan.input, res.locals.signal);
    Object.assign(facts, { model: started.model, prompt_tokens: started.run.promptTokens, completion_tokens: 0, raw: plan.kind === "completion" });
    const events = await admitRun(res, started.run, plan.input.maxTokens);
    const chunks = ollamaGenerateChunks(body.model, events, { startedAt, admittedAt: performance.now() }, started.run.promptTokens);
    if (!stream) res.json(await collectGenerate(chunks));
    else await pipeNdjson(res, chunks, (error) => ollamaError(streamError(res, error)));
  });

  const embedAudit = trail("embeddings.create", { digest: { name: "input", of: (body) => body.input ?? null } });
  router.post("/api/embed", doc({ summary: "Embeddings for one input or many (Ollama)", tag: "Ollama", body: OllamaEmbedRequestSchema }), embedAudit, requireScope("inference"), costly, async (req, res) => {
    const startedAt = performance.now();
    const body = jsonBody(req, OllamaEmbedRequestSchema);
    const facts = res.locals.audit?.data ?? {};
    Object.assign(facts, { model: body.model, api: "ollama" });
    const { name } = resolveOllamaModel(find, body.model);
    const given = body.input ?? [];
    // No input (or ""): Ollama loads the model and answers no vector.
    if (given === "" || given.length === 0) {
      await embeddings.countTokens(name, []);
      res.json(embedObject(body.model, [], { startedAt, admittedAt: performance.now(), endedAt: performance.now() }, 0));
      return;
    }
    const inputs = inputStrings(given);
    facts.inputs = inputs.length;
    await res.locals.admission?.reserve(await embeddings.countTokens(name, inputs));
    const admittedAt = performance.now();
    const result = await embeddings.embed(name, inputs, res.locals.signal, body.dimensions ?? undefined);
    await res.locals.admission?.settle(result.promptTokens);
    Object.assign(facts, { model: result.model, prompt_tokens: result.promptTokens });
    res.json(embedObject(body.model, result.vectors, { startedAt, admittedAt, endedAt: performance.now() }, result.promptTokens));
  });

  const embeddingsAudit = trail("embeddings.create", { digest: { name: "input", of: (body) => body.prompt ?? null } });
  router.post("/api/embeddings", doc({ summary: "One embedding for a prompt (Ollama's older endpoint)", tag: "Ollama", body: OllamaEmbeddingsRequestSchema }), embeddingsAudit, requireScope("inference"), costly, async (req, res) => {
    const body = jsonBody(req, OllamaEmbeddingsRequestSchema);
    const facts = res.locals.audit?.data ?? {};
    Object.assign(facts, { model: body.model, api: "ollama" });
    const { name } = resolveOllamaModel(find, body.model);
    if (!body.prompt) {
      await embeddings.countTokens(name, []);
      res.json({ embedding: [] });
      return;
    }
    const inputs = inputStrings(body.prompt);
    facts.inputs = 1;
    await res.locals.admission?.reserve(await embeddings.countTokens(name, inputs));
    const result = await embeddings.embed(name, inputs, res.locals.signal);
    await res.locals.admission?.settle(result.promptTokens);
    Object.assign(facts, { model: result.model, prompt_tokens: result.promptTokens });
    res.json({ embedding: ollamaVector(result.vectors[0]!) });
  });

  router.get("/api/tags", doc({ summary: "The chat and embedding models, with each alias (Ollama)", tag: "Ollama" }), requireScope("inference"), async (_req, res) => {
    const listed = registry.entries.filter((e) => e.type !== "rerank").flatMap((entry) => [entry.id, ...entry.aliases].map((name) => ({ name, entry })));
    const models = await Promise.all(listed.map(async ({ name, entry }) => tagObject(name, entry, await fileFacts(entry))));
    res.json({ models });
  });

  router.post("/api/show", doc({ summary: "A model's details, template, parameters and capabilities (Ollama)", tag: "Ollama", body: OllamaShowRequestSchema }), requireScope("inference"), async (req, res) => {
    const body = jsonBody(req, OllamaShowRequestSchema);
    const { entry } = resolveOllamaModel(find, (body.model ?? body.name)!);
    // Where files lie on this machine is for its administrator, as in /v1/models.
    const fullPath = principalOf(res.locals).scopes.has("workspaces.manage");
    res.json(showObject(entry, await fileFacts(entry), engine.contextFor(entry), fullPath));
  });

  router.get("/api/ps", doc({ summary: "The models loaded in memory (Ollama)", tag: "Ollama" }), requireScope("inference"), async (_req, res) => {
    const now = Date.now();
    // An idle model is unloaded after the idle time, which each use starts again: at the latest then.
    const expiresAt = new Date(deps.idleUnloadSeconds > 0 ? now + deps.idleUnloadSeconds * 1000 : Date.UTC(9999, 11, 31));
    const loaded = engine.status().loadedModels.flatMap((m) => {
      const entry = registry.find(m.id);
      return entry ? [entry] : [];
    });
    const models = await Promise.all(loaded.map(async (entry) => psObject(ollamaName(entry.id), entry, await fileFacts(entry), expiresAt, engine.contextFor(entry))));
    res.json({ models });
  });

  router.get("/api/version", doc({ summary: "The Ollama API version this server speaks (any valid key)", tag: "Ollama" }), (_req, res) => {
    res.json({ version: OLLAMA_API_VERSION });
  });
  return router;
}
