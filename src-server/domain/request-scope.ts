/**
 * The HTTP request a piece of work serves, carried through async calls (AsyncLocalStorage),
 * so that layers which never see a request (the engine) can still name it, e.g. when the
 * server crashes in native code and the supervisor says what it was doing, and can note
 * what served it (the upstream replicas of remote models, for the audit trail).
 */
import { AsyncLocalStorage } from "node:async_hooks";

/** What one request's work gathers as it runs. */
export interface RequestScope {
  requestId: string;
  /** Upstream replicas that served the request (`model@replica`), in order, each once. */
  upstreams: string[];
}

const scope = new AsyncLocalStorage<RequestScope>();

/** Runs `fn` (and everything it starts) as part of request `requestId`; returns what it gathers. */
export function runInRequest(requestId: string, fn: () => void): RequestScope {
  const store: RequestScope = { requestId, upstreams: [] };
  scope.run(store, fn);
  return store;
}

/** The request the current work serves, or null for background work. */
export function currentRequestId(): string | null {
  return scope.getStore()?.requestId ?? null;
}

/** Notes that an upstream replica served (part of) the current request. */
export function noteUpstream(label: string): void {
  const store = scope.getStore();
  if (store && !store.upstreams.includes(label)) store.upstreams.push(label);
}
