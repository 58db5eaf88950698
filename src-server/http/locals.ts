/** What the HTTP layer attaches to every response, typed once. */
import type { Logger } from "pino";
import type { Principal } from "../domain/scopes.js";

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace
  namespace Express {
    interface Locals {
      requestId: string;
      log: Logger;
      /** Aborted when the client goes away or the response ends. */
      signal: AbortSignal;
      /** Set by `authenticate` on every /v1 route. */
      principal?: Principal;
    }
  }
}

export {};
