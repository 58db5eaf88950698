/**
 * The HTTP request a piece of work serves, carried through async calls (AsyncLocalStorage),
 * so that layers which never see a request (the engine) can still name it, e.g. when the
 * server crashes in native code and the supervisor says what it was doing.
 */
import { AsyncLocalStorage } from "node:async_hooks";

const scope = new AsyncLocalStorage<{ requestId: string }>();

/** Runs `fn` (and everything it starts) as part of request `requestId`. */
export function runInRequest<T>(requestId: string, fn: () => T): T {
  return scope.run({ requestId }, fn);
}

/** The request the current work serves, or null for background work. */
export function currentRequestId(): string | null {
  return scope.getStore()?.requestId ?? null;
}
