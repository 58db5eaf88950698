/**
 * The engine for remote models: every request goes to one replica of the model's upstream
 * servers (OpenAI-compatible: llama-server, vLLM, Ollama, another Pustaka), chosen by the
 * replica pool (least outstanding requests, prefix affinity, caps and queueing, ejection),
 * checked in the background (`GET /v1/models`), retried on another replica only while nothing
 * has reached the client, and cancelled upstream when the client goes away.
 *
 * Tokens: the upstream's tokenizer is not here, so what admission needs before the call is a
 * bounded estimate (`token-estimate.ts`), settled to the upstream's reported usage at the end.
 */
import { createHash, type Hash } from "node:crypto";
import type { Logger } from "pino";
import { noteUpstream } from "../../domain/request-scope.js";
import { isAbortError, ServiceError, unavailable, upstreamError, upstreamTimeout } from "../../errors.js";
import type { ModelEntry } from "../../models/model-registry.js";
import type { UpstreamTarget } from "../../models/remote-binding.js";
import type {
  ChatEvent,
  ChatGenerationInput,
  ChatMessage,
  ChatRun,
  ChoiceScores,
  CompletionRun,
  EmbeddingResult,
  RerankScores,
  TextCompletionInput,
  TokenizerLease,
  UpstreamStatus,
} from "../types.js";
import { chatBody, choiceProbabilities, completionBody, embeddingVectors, firstTokenAlternatives, rerankScores, StreamDecoder, type UpstreamDialect } from "./openai-upstream.js";
import { forcedToolSpec, type ForcedToolSpec } from "../forced-tool-call.js";
import { primed } from "./primed.js";
import { ReplicaPool, type ReplicaLease } from "./replica-pool.js";
import { CALIBRATION_SAMPLES, TokenEstimator } from "./token-estimate.js";
import { UpstreamClient, UpstreamFailure, type UpstreamTimeouts } from "./upstream-client.js";

export interface RemoteEngineOptions {
  timeouts: UpstreamTimeouts;
  /** Requests in flight on one replica; beyond that they queue. */
  maxInFlight: number;
  /** Requests waiting for a replica of one model; beyond that: 503 upstream_unavailable. */
  maxQueued: number;
  queueTimeoutMs: number;
  /** Interval of the active health checks; 0 = none (passive ejection only). */
  healthIntervalMs: number;
  /** Tokens per request when neither the configuration nor the upstream says. */
  defaultContextTokens: number;
  /** Inputs per upstream embeddings request. */
  embedBatch: number;
  /** Route a conversation's turns to the replica holding its prompt (default true). */
  prefixAffinity?: boolean;
  /** Told when a replica's health changes, and each request's outcome (metrics). */
  onRequest?: (event: UpstreamRequestEvent) => void;
}

/** One finished attempt on a replica (metrics). */
export interface UpstreamRequestEvent {
  model: string;
  upstream: string;
  op: string;
  outcome: "success" | "failure" | "cancelled" | "rejected";
  seconds: number;
}

interface Replica {
  id: string;
  target: UpstreamTarget;
  client: UpstreamClient;
  /** What the upstream is, learnt from its model list (until then: the plain OpenAI dialect). */
  dialect: UpstreamDialect;
  /** Tokens per request the upstream serves, when it says. */
  contextLength: number | null;
  checkedAt: number | null;
}

interface RemoteModel {
  entry: ModelEntry;
  replicas: Replica[];
  pool: ReplicaPool<Replica>;
  timer: NodeJS.Timeout | null;
  /** Token counts before the upstream counts: calibrated on its tokenizer when it has one. */
  estimator: TokenEstimator;
  /** A health check has run on every replica at least once. */
  checked: boolean;
}

export class RemoteEngine {
  private readonly models = new Map<string, RemoteModel>();
  private closed = false;

  constructor(
    private readonly options: RemoteEngineOptions,
    private readonly logger: Logger,
  ) {}

  /** Starts serving a remote model (and checking its replicas). Adding an id again replaces it. */
  add(entry: ModelEntry): void {
    if (!entry.remote) throw new Error(`the model '${entry.id}' is not remote`);
    this.remove(entry.id);
    const replicas: Replica[] = entry.remote.upstreams.map((target) => ({ id: target.id, target, client: new UpstreamClient(target, this.options.timeouts), dialect: "openai", contextLength: null, checkedAt: null }));
    const pool = new ReplicaPool(replicas, {
      model: entry.id,
      maxInFlight: this.options.maxInFlight,
      maxQueued: this.options.maxQueued,
      queueTimeoutMs: this.options.queueTimeoutMs,
      ...(this.options.prefixAffinity === false ? { affinityEntries: 0 } : {}),
    });
    const model: RemoteModel = { entry, replicas, pool, timer: null, estimator: new TokenEstimator(), checked: false };
    this.models.set(entry.id, model);
    if (this.options.healthIntervalMs > 0) {
      void this.checkAll(model);
      model.timer = setInterval(() => void this.checkAll(model), this.options.healthIntervalMs);
      model.timer.unref();
    }
  }

  /** Stops serving a remote model: waiting requests fail, connections close. */
  remove(id: string): void {
    const model = this.models.get(id);
    if (!model) return;
    this.models.delete(id);
    if (model.timer) clearInterval(model.timer);
    model.pool.close();
    for (const replica of model.replicas) void replica.client.close();
  }

  /** Checks every replica of every model now (tests, the Models page's "test connection"). */
  async checkNow(id?: string): Promise<void> {
    await Promise.all([...this.models.values()].filter((m) => id === undefined || m.entry.id === id).map((m) => this.checkAll(m)));
  }

  upstreams(entry: ModelEntry): UpstreamStatus[] | null {
    const model = this.models.get(entry.id);
    if (!model) return entry.remote ? entry.remote.upstreams.map((u) => ({ id: u.id, state: "unknown", inFlight: 0, queued: 0, lastError: null, requests: 0, failures: 0 })) : null;
    return model.pool.health().map((h, i) => ({
      id: h.id,
      state: h.state === "healthy" && model.replicas[i]!.checkedAt === null && h.requests === 0 ? "unknown" : h.state,
      inFlight: h.inFlight,
      queued: h.queued,
      lastError: h.lastError,
      requests: h.requests,
      failures: h.failures,
    }));
  }

  contextFor(entry: ModelEntry): number | null {
    const configured = entry.remote?.contextLength;
    if (configured) return configured;
    const learnt = this.models.get(entry.id)?.replicas.map((r) => r.contextLength).filter((n): n is number => n !== null);
    return learnt && learnt.length > 0 ? Math.min(...learnt) : entry.type === "chat" ? this.options.defaultContextTokens : null;
  }

  startChat(entry: ModelEntry, input: ChatGenerationInput, signal: AbortSignal): Promise<ChatRun> {
    // Nothing is sent until `ready` (after admission): only the estimate is made here.
    return Promise.resolve().then(() => this.chatRun(entry, input, signal));
  }

  private chatRun(entry: ModelEntry, original: ChatGenerationInput, signal: AbortSignal): ChatRun {
    const model = this.model(entry);
    // A forced call is not left to the upstream's tool support (templates without tools ignore
    // tool_choice): the call's JSON Schema goes as a json_schema response format, which every
    // upstream that takes structured output enforces, and the JSON comes back as the call.
    const choice = original.toolChoice;
    const forced = (choice === "required" || typeof choice === "object") && original.tools.length > 0 ? forcedToolSpec(original.tools, choice) : null;
    const input: ChatGenerationInput = forced
      ? { ...original, messages: withInstruction(original.messages, forced.instruction), tools: [], toolChoice: "none", responseFormat: { type: "json_schema", name: "tool_call", schema: forced.schema } }
      : original;
    const promptTokens = model.estimator.chat(original);
    const contextSize = this.contextFor(entry) ?? this.options.defaultContextTokens;
    const generated = this.generate(model, "chat", "/chat/completions", (replica) => chatBody(replica.target.model, input, replica.dialect), chatAffinity(original), signal, input.responseFormat.type !== "text" && !forced);
    const { events, prime } = primed(forced ? asToolCall(generated, forced) : generated);
    return { promptTokens, contextSize, events, ready: prime };
  }

  async startCompletion(entry: ModelEntry, input: TextCompletionInput, signal: AbortSignal): Promise<CompletionRun> {
    const model = this.model(entry);
    const prompt = input.prompt;
    let promptText: string;
    if (typeof prompt === "string") promptText = prompt;
    else {
      // Token ids are the upstream's: only it can say what text they are.
      const detokenized = await this.call(model, "detokenize", [], signal, async (replica, s) => (await replica.client.postJson("/detokenize", { tokens: prompt }, s, { root: true })) as { content?: unknown });
      if (typeof detokenized.content !== "string") throw upstreamError(`the upstream of '${entry.id}' cannot turn token ids back into text; send the prompt as text`);
      promptText = detokenized.content;
    }
    const promptTokens = typeof prompt === "string" ? model.estimator.text(prompt) + (input.suffix !== undefined ? model.estimator.text(input.suffix) : 0) : prompt.length;
    const { events, prime } = primed(this.generate(model, "completion", "/completions", (replica) => completionBody(replica.target.model, input, replica.dialect), textAffinity(promptText), signal, false));
    return { promptTokens, contextSize: this.contextFor(entry) ?? this.options.defaultContextTokens, promptText, events, ready: prime };
  }

  async embed(entry: ModelEntry, inputs: string[], signal: AbortSignal): Promise<EmbeddingResult> {
    const model = this.model(entry);
    const batch = this.options.embedBatch;
    const slices: string[][] = [];
    for (let i = 0; i < inputs.length; i += batch) slices.push(inputs.slice(i, i + batch));
    // Slices go out together: the pool spreads them over the replicas and caps each.
    const answers = await Promise.all(
      slices.map((slice) =>
        this.call(model, "embed", [], signal, async (replica, s) => {
          const what = `the upstream ${replica.id} of '${entry.id}'`;
          // Base64 where the upstream is known to send it (a tenth of the bytes, no number parsing); floats elsewhere.
          const encoding = replica.dialect === "openai" || replica.dialect === "ollama" ? "float" : "base64";
          return embeddingVectors(await replica.client.postJson("/embeddings", { model: replica.target.model, input: slice, encoding_format: encoding }, s), slice.length, what);
        }),
      ),
    );
    const vectors = answers.flatMap((a) => a.vectors);
    const width = vectors[0]?.length;
    if (entry.remote && width !== undefined) {
      if (entry.remote.dimensions === null) entry.remote.dimensions = width;
      else if (width !== entry.remote.dimensions) {
        throw upstreamError(`the upstream of '${entry.id}' answers ${width}-dimension embeddings, but '${entry.id}' produces ${entry.remote.dimensions}: its upstream serves another model than the one configured`);
      }
    }
    const promptTokens = answers.reduce((n, a, i) => n + (a.promptTokens ?? slices[i]!.reduce((m, text) => m + model.estimator.text(text) + 2, 0)), 0);
    return { vectors, promptTokens };
  }

  async rerank(entry: ModelEntry, query: string, documents: string[], signal: AbortSignal): Promise<RerankScores> {
    const model = this.model(entry);
    const answer = await this.call(model, "rerank", [], signal, async (replica, s) =>
      rerankScores(await replica.client.postJson("/rerank", { model: replica.target.model, query, documents, top_n: documents.length, return_documents: false }, s), documents.length, replica.dialect, `the upstream ${replica.id} of '${entry.id}'`),
    );
    const estimate = documents.reduce((n, d) => n + model.estimator.text(query) + model.estimator.text(d) + 4, 0);
    return { scores: answer.scores, promptTokens: answer.promptTokens ?? estimate };
  }

  async scoreChoices(entry: ModelEntry, messages: ChatMessage[], choices: string[], signal: AbortSignal): Promise<ChoiceScores> {
    const model = this.model(entry);
    const input: ChatGenerationInput = { messages, tools: [], toolChoice: "none", responseFormat: { type: "text" }, stop: [], sampling: { temperature: 0 } };
    let alternatives: Map<string, number> | null = null;
    let promptTokens: number | null = null;
    await this.call(model, "score", chatAffinity(input), signal, async (replica, s) => {
      const stream = await replica.client.openStream("/chat/completions", chatBody(replica.target.model, input, replica.dialect, { maxTokens: 1, logprobs: 20 }), s);
      for await (const data of stream.events) {
        alternatives ??= firstTokenAlternatives(data);
        const usage = (data as { usage?: { prompt_tokens?: number } | null }).usage;
        if (typeof usage?.prompt_tokens === "number") promptTokens = usage.prompt_tokens;
      }
    });
    if (!alternatives) throw upstreamError(`the upstream of '${entry.id}' does not return log probabilities (logprobs), which the relevance judge reads; turn rag.relevanceJudge off for this chat model`);
    return { probabilities: choiceProbabilities(alternatives, choices), promptTokens: promptTokens ?? model.estimator.chat(input) };
  }

  async countChatTokens(entry: ModelEntry, input: Pick<ChatGenerationInput, "messages" | "tools" | "toolChoice">): Promise<number> {
    const model = this.model(entry);
    const full: ChatGenerationInput = { ...input, responseFormat: { type: "text" }, stop: [], sampling: { temperature: 0 } };
    const replica = model.replicas.find((r) => r.dialect === "llama-server");
    if (!replica) return model.estimator.chat(full);
    // llama-server renders the template and tokenises: exact.
    return await this.call(model, "count", [], AbortSignal.timeout(this.options.timeouts.firstByteMs), async (r, s) => {
      if (r.dialect !== "llama-server") return model.estimator.chat(full);
      const body = chatBody(r.target.model, full, r.dialect);
      const rendered = (await r.client.postJson("/apply-template", body, s, { root: true })) as { prompt?: unknown };
      if (typeof rendered.prompt !== "string") return model.estimator.chat(full);
      const tokens = (await r.client.postJson("/tokenize", { content: rendered.prompt, add_special: true, parse_special: true }, s, { root: true })) as { tokens?: unknown[] };
      return Array.isArray(tokens.tokens) ? tokens.tokens.length : model.estimator.chat(full);
    });
  }

  async countTokens(entry: ModelEntry, text: string): Promise<number> {
    const model = this.model(entry);
    if (!model.replicas.some((r) => r.dialect === "llama-server" || r.dialect === "vllm")) return model.estimator.text(text);
    return await this.call(model, "count", [], AbortSignal.timeout(this.options.timeouts.firstByteMs), async (r, s) => {
      if (r.dialect === "llama-server") {
        const answer = (await r.client.postJson("/tokenize", { content: text, add_special: false }, s, { root: true })) as { tokens?: unknown[] };
        if (Array.isArray(answer.tokens)) return answer.tokens.length;
      } else if (r.dialect === "vllm") {
        const answer = (await r.client.postJson("/tokenize", { model: r.target.model, prompt: text, add_special_tokens: false }, s, { root: true })) as { count?: unknown };
        if (typeof answer.count === "number") return answer.count;
      }
      return model.estimator.text(text);
    });
  }

  /**
   * A tokenizer for chunking with a remote embedder: the bounded estimate (never fewer tokens
   * than the upstream counts for the languages measured, see token-estimate.ts), so chunks fit
   * the upstream's input length.
   */
  acquireTokenizer(entry: ModelEntry): Promise<TokenizerLease> {
    return Promise.resolve().then(async () => {
      const model = this.model(entry);
      // Chunking for a remote embedder cuts by the estimate: measure the tokenizer first when the upstream can say.
      if (!model.checked) await this.checkAll(model);
      const context = this.contextFor(entry) ?? 512;
      return { countTokens: model.estimator.text, maxEmbeddingTokens: Math.max(16, context - 3), release: () => {} };
    });
  }

  /** The token estimator of a remote model (diagnostics and tests). */
  estimatorFor(entry: ModelEntry): TokenEstimator {
    return this.model(entry).estimator;
  }

  close(): Promise<void> {
    this.closed = true;
    const clients = [...this.models.values()].flatMap((m) => m.replicas.map((r) => r.client));
    for (const id of [...this.models.keys()]) this.remove(id);
    return Promise.all(clients.map((c) => c.close())).then(() => undefined);
  }

  private model(entry: ModelEntry): RemoteModel {
    if (this.closed) throw unavailable("the server is shutting down", "server_shutting_down");
    const model = this.models.get(entry.id);
    if (model && model.entry === entry) return model;
    this.add(entry);
    return this.models.get(entry.id)!;
  }

  /**
   * A streamed generation on one replica, retried on another while nothing has been yielded;
   * `checkJson`: the text must parse as JSON (a response format the upstream should enforce).
   */
  private async *generate(
    model: RemoteModel,
    op: string,
    path: string,
    bodyFor: (replica: Replica) => Record<string, unknown>,
    affinity: readonly string[],
    signal: AbortSignal,
    checkJson: boolean,
  ): AsyncGenerator<ChatEvent, void, undefined> {
    const tried = new Set<string>();
    let last: UpstreamFailure | null = null;
    for (;;) {
      const lease = await this.lease(model, affinity, tried, last, signal);
      const replica = lease.replica;
      noteUpstream(`${model.entry.id}@${replica.id}`);
      const started = performance.now();
      let yielded = false;
      let outcome: UpstreamRequestEvent["outcome"] = "cancelled";
      try {
        const stream = await replica.client.openStream(path, bodyFor(replica), signal);
        const decoder = new StreamDecoder(`the upstream ${replica.id} of '${model.entry.id}'`);
        let text = "";
        for await (const data of stream.events) {
          for (const event of decoder.push(data)) {
            if (event.type === "text" && checkJson) text += event.text;
            yielded = true;
            yield event;
          }
        }
        const end = decoder.end();
        if (checkJson && end.toolCalls.length === 0 && end.finishReason === "stop" && !parsesAsJson(text)) {
          outcome = "success";
          lease.release("success");
          throw upstreamError(`the upstream of '${model.entry.id}' ignored the response format: its answer is not JSON`);
        }
        outcome = "success";
        lease.release("success");
        yield end;
        return;
      } catch (error) {
        const failed = this.failed(model, lease, op, error, signal, !yielded);
        outcome = failed.outcome;
        if (!failed.retry) throw failed.error;
        tried.add(replica.id);
        last = failed.retry;
        continue;
      } finally {
        // A consumer that stops reading (the client went away) lands here: the stream closes, the upstream cancels.
        lease.release("neutral");
        this.options.onRequest?.({ model: model.entry.id, upstream: replica.id, op, outcome, seconds: (performance.now() - started) / 1000 });
      }
    }
  }

  /** One request/response call on a replica, retried on another replica on a retryable failure. */
  private async call<T>(model: RemoteModel, op: string, affinity: readonly string[], signal: AbortSignal, fn: (replica: Replica, signal: AbortSignal) => Promise<T>): Promise<T> {
    const tried = new Set<string>();
    let last: UpstreamFailure | null = null;
    for (;;) {
      const lease = await this.lease(model, affinity, tried, last, signal);
      const replica = lease.replica;
      noteUpstream(`${model.entry.id}@${replica.id}`);
      const started = performance.now();
      let outcome: UpstreamRequestEvent["outcome"] = "cancelled";
      try {
        const result = await fn(replica, signal);
        outcome = "success";
        lease.release("success");
        return result;
      } catch (error) {
        const failed = this.failed(model, lease, op, error, signal, true);
        outcome = failed.outcome;
        if (!failed.retry) throw failed.error;
        tried.add(replica.id);
        last = failed.retry;
        continue;
      } finally {
        this.options.onRequest?.({ model: model.entry.id, upstream: replica.id, op, outcome, seconds: (performance.now() - started) / 1000 });
      }
    }
  }

  /**
   * Ends a failed attempt: the lease released (against the replica's health unless the request
   * itself was at fault or the client left) and the failure logged with the replica's URL.
   * Says whether to retry on another replica (`mayRetry` and the failure allows it), else the
   * error the client hears (an abort passes through untouched).
   */
  private failed(model: RemoteModel, lease: ReplicaLease<Replica>, op: string, error: unknown, signal: AbortSignal, mayRetry: boolean): { outcome: UpstreamRequestEvent["outcome"]; retry: UpstreamFailure | null; error: unknown } {
    const replica = lease.replica;
    if (!(error instanceof UpstreamFailure)) {
      lease.release("neutral");
      return { outcome: signal.aborted || isAbortError(error) ? "cancelled" : "failure", retry: null, error };
    }
    const rejected = error.options.clientFault === true;
    const outcome = rejected ? "rejected" : "failure";
    lease.release(rejected ? "neutral" : "failure", error.message);
    const retry = mayRetry && error.retryable;
    this.logger.warn({ model: model.entry.id, upstream: replica.id, url: replica.target.baseUrl, op, kind: error.kind, status: error.options.status, retry }, error.message);
    return retry ? { outcome, retry: error, error } : { outcome, retry: null, error: toServiceError(error, model.entry.id) };
  }

  /** The next replica to try; once every replica failed this request, the last failure is what the client hears. */
  private async lease(model: RemoteModel, affinity: readonly string[], tried: Set<string>, last: UpstreamFailure | null, signal: AbortSignal): Promise<ReplicaLease<Replica>> {
    if (last && tried.size >= model.replicas.length) throw toServiceError(last, model.entry.id);
    try {
      return await model.pool.acquire({ signal, affinity, exclude: tried });
    } catch (error) {
      // The others are ejected: the failure this request met says more than "none available".
      if (last && error instanceof ServiceError && error.code === "upstream_unavailable" && last.kind !== "connect") throw toServiceError(last, model.entry.id);
      throw error;
    }
  }

  /** Active health check of every replica: `GET /models`, which also says what the upstream is. */
  private async checkAll(model: RemoteModel): Promise<void> {
    await Promise.all(model.replicas.map((replica) => this.check(model, replica)));
    model.checked = true;
  }

  private async check(model: RemoteModel, replica: Replica): Promise<void> {
    const signal = AbortSignal.timeout(Math.max(1000, Math.min(this.options.timeouts.firstByteMs, 10_000)));
    try {
      const list = await replica.client.getJson("/models", signal);
      this.learn(model, replica, list);
      if (replica.dialect === "llama-server") await this.learnLlamaServer(replica, signal);
      if (!model.estimator.calibrated) await this.calibrate(model, replica, signal);
      replica.checkedAt = Date.now();
      if (!this.models.has(model.entry.id)) return;
      const before = model.pool.health().find((h) => h.id === replica.id)?.state;
      model.pool.reportCheck(replica.id, true);
      if (before && before !== "healthy") this.logger.info({ model: model.entry.id, upstream: replica.id, url: replica.target.baseUrl }, "upstream replica is healthy again");
    } catch (error) {
      replica.checkedAt = Date.now();
      if (!this.models.has(model.entry.id)) return;
      const message = error instanceof Error ? error.message : String(error);
      const before = model.pool.health().find((h) => h.id === replica.id)?.state;
      model.pool.reportCheck(replica.id, false, message);
      if (before !== "down") this.logger.warn({ model: model.entry.id, upstream: replica.id, url: replica.target.baseUrl }, `upstream replica failed its health check: ${message}`);
    }
  }

  /** What a model list says: the dialect (by its owner field and shape), and the context and width of the model. */
  private learn(model: RemoteModel, replica: Replica, list: unknown): void {
    const body = list as { data?: { id?: string; owned_by?: string; max_model_len?: number; context_length?: number; dimensions?: number; meta?: { n_ctx_train?: number } }[]; models?: unknown };
    if (!Array.isArray(body?.data)) throw new UpstreamFailure(`the upstream ${replica.id} answered GET /models without a model list`, "protocol");
    const item = body.data.find((m) => m.id === replica.target.model) ?? (body.data.length === 1 ? body.data[0] : undefined);
    const owner = item?.owned_by ?? body.data[0]?.owned_by;
    replica.dialect = owner === "pustaka" ? "pustaka" : owner === "vllm" ? "vllm" : owner === "llamacpp" || body.models !== undefined || item?.meta !== undefined ? "llama-server" : owner === "library" || owner === "ollama" ? "ollama" : "openai";
    if (typeof item?.max_model_len === "number") replica.contextLength = item.max_model_len;
    if (typeof item?.context_length === "number") replica.contextLength = item.context_length;
    const remote = model.entry.remote;
    if (remote && remote.dimensions === null && typeof item?.dimensions === "number") remote.dimensions = item.dimensions;
  }

  /** Measures the upstream's tokenizer on the calibration samples (llama-server and vLLM tokenize). */
  private async calibrate(model: RemoteModel, replica: Replica, signal: AbortSignal): Promise<void> {
    if (replica.dialect !== "llama-server" && replica.dialect !== "vllm") return;
    try {
      const counts: number[] = [];
      for (const sample of CALIBRATION_SAMPLES) {
        const body = replica.dialect === "llama-server" ? { content: sample, add_special: false } : { model: replica.target.model, prompt: sample, add_special_tokens: false };
        const answer = (await replica.client.postJson("/tokenize", body, signal, { root: true })) as { tokens?: unknown[]; count?: number };
        const count = typeof answer.count === "number" ? answer.count : Array.isArray(answer.tokens) ? answer.tokens.length : null;
        if (!count) return;
        counts.push(count);
      }
      model.estimator = TokenEstimator.calibrate(counts);
    } catch {
      // Not every server of a dialect tokenizes (an older build, a proxy in front): the default stands.
    }
  }

  /** llama-server's context per slot (what one request gets), from its properties. */
  private async learnLlamaServer(replica: Replica, signal: AbortSignal): Promise<void> {
    try {
      const props = (await replica.client.getJson("/props", signal, { root: true })) as { default_generation_settings?: { n_ctx?: number } };
      const perSlot = props.default_generation_settings?.n_ctx;
      if (typeof perSlot === "number" && perSlot > 0) replica.contextLength = perSlot;
    } catch {
      // Optional: older servers lack /props.
    }
  }
}

/** The instruction of a forced call, joined to the system message (or first). */
function withInstruction(messages: ChatMessage[], instruction: string): ChatMessage[] {
  const [first, ...rest] = messages;
  if (first?.role === "system") return [{ role: "system", content: `${first.content}\n\n${instruction}` }, ...rest];
  return [{ role: "system", content: instruction }, ...messages];
}

/** A forced call's events: the JSON is held back and ends the run as the tool call it is. */
async function* asToolCall(events: AsyncGenerator<ChatEvent, void, undefined>, spec: ForcedToolSpec): AsyncGenerator<ChatEvent, void, undefined> {
  let text = "";
  for await (const event of events) {
    if (event.type === "text") {
      text += event.text;
      continue;
    }
    const cut = event.finishReason === "length";
    yield { ...event, finishReason: cut ? "length" : "tool_calls", toolCalls: spec.toToolCalls(text.trim()) };
  }
}

function parsesAsJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/** What the client hears of a replica's failure: the contract's codes, never the upstream's URL. */
export function toServiceError(failure: UpstreamFailure, model: string): ServiceError {
  const reason = failure.message.replace(/^upstream (\S+) \([^)]*\)/, "upstream $1");
  const status = failure.options.status;
  if (failure.options.clientFault) {
    // Read the upstream's own words, not its address (a host named context-… must not decide).
    const said = failure.message.replace(/^upstream \S+ \([^)]*\) answered HTTP \d+: /, "");
    const code = /context|too long|too large|exceed|maximum.*length/i.test(said) ? "context_length_exceeded" : (failure.options.upstreamCode ?? "invalid_request");
    return new ServiceError("invalid_request", `the upstream server of '${model}' refused the request: ${reason}`, { code: code === "invalid_request_error" ? "invalid_request" : code });
  }
  if (failure.kind === "timeout") return upstreamTimeout(`the upstream server of '${model}' did not answer in time: ${reason}`, failure);
  if (failure.kind === "connect" || status === 429 || status === 503) {
    return unavailable(`no upstream server of '${model}' can take the request now: ${reason}`, "upstream_unavailable", failure.options.retryAfterSeconds ?? 1);
  }
  if (status === 401 || status === 403) return upstreamError(`the upstream server of '${model}' refused Pustaka's credentials (HTTP ${status}); an administrator must check its API key`, failure);
  return upstreamError(`the upstream server of '${model}' failed: ${reason}`, failure);
}

/**
 * Prefix-affinity keys of a chat request, most specific first: a hash of every prefix of the
 * conversation that holds a user turn (tools count as part of the first). The next turn of the
 * conversation carries this request's messages as its prefix, so it finds the replica whose
 * prompt cache holds them.
 */
export function chatAffinity(input: Pick<ChatGenerationInput, "messages" | "tools">): string[] {
  const hash: Hash = createHash("sha256");
  hash.update(JSON.stringify(input.tools));
  const keys: string[] = [];
  let sawUser = false;
  for (const message of input.messages) {
    hash.update(JSON.stringify(message));
    if (message.role === "user") sawUser = true;
    if (sawUser) keys.push(hash.copy().digest("base64url").slice(0, 22));
  }
  return keys.reverse();
}

/** Affinity keys of a text prompt: its prefixes at 1 KiB steps (the first 64 KiB), most specific first. */
export function textAffinity(prompt: string): string[] {
  const keys: string[] = [];
  const step = 1024;
  const hash = createHash("sha256");
  for (let at = 0; at < Math.min(prompt.length, 64 * step); at += step) {
    hash.update(prompt.slice(at, at + step));
    keys.push(hash.copy().digest("base64url").slice(0, 22));
  }
  return keys.reverse();
}
