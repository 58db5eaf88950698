/**
 * `GET /metrics` (Prometheus text format, scope `metrics.read`): requests by route and
 * status, latency, tokens in and out, time to the first token, the engine's queues and
 * loaded models, the indexing queue and failed documents, and the process's own figures.
 * Requests are measured by one middleware when each response ends, from what the route
 * already records for its audit entry (model, tokens), so routes stay unaware of it.
 */
import type { RequestHandler } from "express";
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from "prom-client";
import type { EngineStatus, UpstreamStatus } from "../engine/types.js";
import type { UpstreamRequestEvent } from "../engine/remote/remote-engine.js";

export interface MetricsSources {
  engine: () => EngineStatus;
  /** Every replica of every remote model, as the router sees it now. */
  upstreams?: () => (UpstreamStatus & { model: string })[];
  /** Documents by status across every corpus (read from the store at each scrape). */
  documents: () => Promise<Record<string, number>>;
}

const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];
const TTFT_BUCKETS = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30];

export class Metrics {
  readonly registry = new Registry();
  private readonly requests: Counter<"method" | "route" | "status">;
  private readonly duration: Histogram<"method" | "route">;
  private readonly tokens: Counter<"route" | "model" | "direction">;
  private readonly ttft: Histogram<"route" | "model">;
  private readonly upstreamRequests: Counter<"model" | "upstream" | "op" | "outcome">;
  private readonly upstreamDuration: Histogram<"model" | "upstream" | "op">;

  constructor(sources: MetricsSources) {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry, prefix: "pustaka_" });
    this.requests = new Counter({ name: "pustaka_http_requests_total", help: "Requests by route template, method and status", labelNames: ["method", "route", "status"], registers });
    this.duration = new Histogram({ name: "pustaka_http_request_duration_seconds", help: "Time from request to the end of the response (streams included)", labelNames: ["method", "route"], buckets: LATENCY_BUCKETS, registers });
    this.tokens = new Counter({ name: "pustaka_tokens_total", help: "Tokens read (prompt) and generated (completion), by route and model", labelNames: ["route", "model", "direction"], registers });
    this.ttft = new Histogram({ name: "pustaka_time_to_first_token_seconds", help: "Time from request to the first generated text", labelNames: ["route", "model"], buckets: TTFT_BUCKETS, registers });
    new Gauge({
      name: "pustaka_queue_depth",
      help: "Requests waiting for a sequence or context, by model",
      labelNames: ["model"],
      registers,
      collect() {
        this.reset();
        for (const m of sources.engine().loadedModels) this.set({ model: m.id }, m.queued);
      },
    });
    new Gauge({
      name: "pustaka_busy_slots",
      help: "Sequences and contexts in use, by model",
      labelNames: ["model"],
      registers,
      collect() {
        this.reset();
        for (const m of sources.engine().loadedModels) this.set({ model: m.id }, m.busy);
      },
    });
    new Gauge({
      name: "pustaka_models_loaded",
      help: "Models in memory (1 per model, labelled with what it serves)",
      labelNames: ["model", "kinds"],
      registers,
      collect() {
        this.reset();
        for (const m of sources.engine().loadedModels) this.set({ model: m.id, kinds: m.kinds.join(",") }, 1);
      },
    });
    this.upstreamRequests = new Counter({
      name: "pustaka_upstream_requests_total",
      help: "Attempts on remote models' upstream replicas by outcome (success, failure: counts against the replica, rejected: the upstream refused the request itself, cancelled: the client went away)",
      labelNames: ["model", "upstream", "op", "outcome"],
      registers,
    });
    this.upstreamDuration = new Histogram({
      name: "pustaka_upstream_request_duration_seconds",
      help: "Time of each attempt on an upstream replica, to the end of its answer (streams included)",
      labelNames: ["model", "upstream", "op"],
      buckets: LATENCY_BUCKETS,
      registers,
    });
    const upstreams = sources.upstreams ?? (() => []);
    new Gauge({
      name: "pustaka_upstream_in_flight",
      help: "Requests in flight on each upstream replica of a remote model",
      labelNames: ["model", "upstream"],
      registers,
      collect() {
        this.reset();
        for (const u of upstreams()) this.set({ model: u.model, upstream: u.id }, u.inFlight);
      },
    });
    new Gauge({
      name: "pustaka_upstream_healthy",
      help: "1 when an upstream replica takes requests (healthy, or not checked yet), 0 when ejected after errors or down per its health check",
      labelNames: ["model", "upstream", "state"],
      registers,
      collect() {
        this.reset();
        for (const u of upstreams()) this.set({ model: u.model, upstream: u.id, state: u.state }, u.state === "healthy" || u.state === "unknown" ? 1 : 0);
      },
    });
    new Gauge({
      name: "pustaka_upstream_queue_depth",
      help: "Requests waiting for a replica of a remote model",
      labelNames: ["model"],
      registers,
      collect() {
        this.reset();
        const seen = new Map<string, number>();
        for (const u of upstreams()) seen.set(u.model, u.queued);
        for (const [model, queued] of seen) this.set({ model }, queued);
      },
    });
    new Gauge({
      name: "pustaka_documents",
      help: "Documents by indexing status (queued and processing: the indexing queue; failed: documents that could not be indexed)",
      labelNames: ["status"],
      registers,
      async collect() {
        for (const [status, n] of Object.entries(await sources.documents())) this.set({ status }, n);
      },
    });
  }

  /** One finished attempt on a remote model's replica. */
  observeUpstream(event: UpstreamRequestEvent): void {
    this.upstreamRequests.inc({ model: event.model, upstream: event.upstream, op: event.op, outcome: event.outcome });
    this.upstreamDuration.observe({ model: event.model, upstream: event.upstream, op: event.op }, event.seconds);
  }

  /** Measures each request when its response ends. */
  middleware(): RequestHandler {
    return (req, res, next) => {
      const started = performance.now();
      res.on("close", () => {
        const route = routeLabel(req.route as { path?: unknown } | undefined, req.baseUrl);
        this.requests.inc({ method: req.method, route, status: String(res.statusCode) });
        this.duration.observe({ method: req.method, route }, (performance.now() - started) / 1000);
        const facts = res.locals.audit?.data ?? {};
        const model = typeof facts.model === "string" ? facts.model : "";
        if (!model) return;
        for (const [direction, key] of [["prompt", "prompt_tokens"], ["completion", "completion_tokens"]] as const) {
          const n = facts[key];
          if (typeof n === "number" && n > 0) this.tokens.inc({ route, model, direction }, n);
        }
        if (res.locals.firstTokenAt !== undefined) this.ttft.observe({ route, model }, (res.locals.firstTokenAt - started) / 1000);
      });
      next();
    };
  }

  /** The exposition text and its content type. */
  async exposition(): Promise<{ contentType: string; text: string }> {
    return { contentType: this.registry.contentType, text: await this.registry.metrics() };
  }
}

/** The route template (`/v1/rag/corpora/:corpusId/query`), never the raw path: bounded labels. */
function routeLabel(route: { path?: unknown } | undefined, baseUrl: string): string {
  const path = route?.path;
  if (typeof path === "string") return baseUrl + path;
  if (Array.isArray(path) && typeof path[0] === "string") return baseUrl + path[0];
  return "unmatched";
}
