/**
 * `GET /metrics` (Prometheus text format, scope `metrics.read`): requests by route and
 * status, latency, tokens in and out, time to the first token, the engine's queues and
 * loaded models, the indexing queue and failed documents, and the process's own figures.
 * Requests are measured by one middleware when each response ends, from what the route
 * already records for its audit entry (model, tokens), so routes stay unaware of it.
 */
import type { RequestHandler } from "express";
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from "prom-client";
import type { EngineStatus } from "../engine/types.js";

export interface MetricsSources {
  engine: () => EngineStatus;
  /** Documents by status across every corpus. */
  documents: () => Record<string, number>;
}

const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];
const TTFT_BUCKETS = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30];

export class Metrics {
  readonly registry = new Registry();
  private readonly requests: Counter<"method" | "route" | "status">;
  private readonly duration: Histogram<"method" | "route">;
  private readonly tokens: Counter<"route" | "model" | "direction">;
  private readonly ttft: Histogram<"route" | "model">;

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
    new Gauge({
      name: "pustaka_documents",
      help: "Documents by indexing status (queued and processing: the indexing queue; failed: documents that could not be indexed)",
      labelNames: ["status"],
      registers,
      collect() {
        for (const [status, n] of Object.entries(sources.documents())) this.set({ status }, n);
      },
    });
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
