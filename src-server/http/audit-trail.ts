/**
 * The HTTP side of the audit trail. `audited(type, …)` on a route records one entry when
 * the response ends — success or failure, streamed or not — with the caller's identity,
 * the request id, the status, the error code, the latency and what the route added to
 * `res.locals.audit.data` (model, tokens, citations). What the caller sent is recorded
 * only as the SHA-256 of its canonical JSON (RFC 8785), computed after the response.
 */
import type { Request, RequestHandler, Response } from "express";
import { actorOf, type AuditEventType, type AuditService } from "../audit/audit-service.js";
import { canonicalJson, sha256Hex } from "../security/audit-chain.js";

/** Types written at once (administrative and destructive changes), not batched. */
const DURABLE: ReadonlySet<AuditEventType> = new Set(["workspace.create", "workspace.update", "api_key.create", "api_key.update", "api_key.revoke", "corpus.delete", "document.delete", "file.delete", "service_account.create", "service_account.update", "service_account.delete", "oauth.rotate_key", "remote_model.create", "remote_model.delete", "ollama_listener.open", "ollama_listener.close"]);

/** SHA-256 of what a client sent, in a form anyone holding the same input can recompute. */
export function inputDigest(value: unknown): string {
  return sha256Hex(typeof value === "string" ? value : (canonicalJson(value ?? null) ?? "null"));
}

export interface AuditedOptions {
  /** The part of the JSON body to record as `<name>_sha256` (e.g. chat `messages` as `prompt`). */
  digest?: { name: string; of: (body: Record<string, unknown>) => unknown };
  /** Route parameters recorded as data (`corpusId` → `corpus_id`). */
  params?: string[];
}

const snake = (name: string) => name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

/** Records one audit entry of `type` for this request when its response ends. */
export function audited(audit: AuditService, type: AuditEventType, options: AuditedOptions = {}): RequestHandler {
  return (req, res, next) => {
    const started = performance.now();
    res.locals.audit = { type, data: {} };
    res.on("close", () => {
      // An event listener must never throw: the exception would take the process down.
      try {
        recordOnClose();
      } catch (error) {
        res.locals.log?.error({ err: error, type }, "audit entry could not be built");
      }
    });
    const recordOnClose = () => {
      const trail = res.locals.audit;
      const principal = res.locals.principal;
      if (!trail || trail.done || !principal) return;
      const data: Record<string, unknown> = {};
      for (const param of options.params ?? []) {
        const value = req.params[param];
        if (typeof value === "string") data[snake(param)] = value;
      }
      if (options.digest) data[`${options.digest.name}_sha256`] = inputDigest(bodyPart(req, options.digest.of));
      Object.assign(data, trail.data, { status: res.statusCode, latency_ms: Math.round(performance.now() - started) });
      if (res.locals.errorCode) data.error = res.locals.errorCode;
      // Remote models: which upstream replicas served it.
      const upstreams = res.locals.scope?.upstreams;
      if (upstreams && upstreams.length > 0) data.upstreams = [...upstreams];
      if (!res.writableFinished) data.client_gone = true;
      const failed = res.statusCode >= 400 || data.error !== undefined;
      // A request refused by the rate limiter is recorded as that, naming what it asked for.
      const refused = data.error === "rate_limit_exceeded";
      if (refused) data.operation = type;
      const event = { type: refused ? ("rate_limit.rejected" as const) : type, workspaceId: trail.workspaceId ?? principal.workspaceId, actor: actorOf(principal), outcome: failed ? ("failure" as const) : ("success" as const), requestId: res.locals.requestId, data };
      recordSafely(audit, res, event, DURABLE.has(type));
    };
    next();
  };
}

function bodyPart(req: Request, of: (body: Record<string, unknown>) => unknown): unknown {
  const body: unknown = req.body;
  if (typeof body !== "object" || body === null || Array.isArray(body)) return body ?? null;
  return of(body as Record<string, unknown>);
}

/** Records an entry; an audit write that fails is logged, never turned into the caller's error after the fact. */
export function recordSafely(audit: AuditService, res: Response, event: Parameters<AuditService["record"]>[0], durable = false): void {
  const failed = (error: unknown) => res.locals.log?.error({ err: error, type: event.type }, "audit write failed");
  try {
    if (durable) audit.recordNow(event).catch(failed);
    else audit.record(event);
  } catch (error) {
    failed(error);
  }
}

/** `recordSafely` for events a stranger can repeat at will: repeats with the same `key` within a window become one entry with a `count`. */
export function recordCoalescedSafely(audit: AuditService, res: Response, key: string, event: Parameters<AuditService["record"]>[0]): void {
  try {
    audit.recordCoalesced(key, event);
  } catch (error) {
    res.locals.log?.error({ err: error, type: event.type }, "audit write failed");
  }
}

/** `audited` bound to the service: what route factories receive. */
export type Trail = (type: AuditEventType, options?: AuditedOptions) => RequestHandler;

export function trailOf(audit: AuditService): Trail {
  return (type, options) => audited(audit, type, options);
}
