/** What the HTTP layer attaches to every response, typed once. */
import type { Logger } from "pino";
import type { Admission } from "../admin/rate-limit-service.js";
import type { RequestScope } from "../domain/request-scope.js";
import type { Principal } from "../domain/scopes.js";

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace
  namespace Express {
    interface Locals {
      requestId: string;
      /** What the request's work gathered as it ran (the upstream replicas that served it). */
      scope?: RequestScope;
      log: Logger;
      /** Aborted when the client goes away or the response ends. */
      signal: AbortSignal;
      /** Set by `authenticate` on every /v1 route. */
      principal?: Principal;
      /** Set on costly routes: the admitted request, through which tokens are reserved and settled. */
      admission?: Admission;
      /** Set by `audited` routes: the entry written when the response ends (routes add facts to `data`; `done` = the route recorded its own entries). */
      audit?: { type: string; data: Record<string, unknown>; done?: boolean; workspaceId?: string };
      /** The error code sent (error responses and errors inside streams), for the audit trail. */
      errorCode?: string;
      /** `performance.now()` when the first generated text went out (metrics: time to first token). */
      firstTokenAt?: number;
      /** The error message sent with it, for the access log. */
      errorMessage?: string;
    }
  }
}

export {};
