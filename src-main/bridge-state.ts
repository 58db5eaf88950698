/** The server's state as the workbench sees it (`window.pustaka.onServerState`). */
import type { ServerState } from "./bridge.js";
import type { HostState } from "./server-host.js";

/** The host's state for the bridge; `stopped` (only before the first start) reads as `starting`. */
export function bridgeState(state: HostState): ServerState {
  const out: ServerState = { state: state.phase === "stopped" ? "starting" : state.phase, restarts: state.restarts };
  if (state.error) out.detail = state.error;
  if (state.engine) {
    out.engine = state.engine;
    if (state.engine.gpu !== null) out.gpu = state.engine.gpu;
  }
  if (state.retryAt !== null) out.retryAt = state.retryAt;
  return out;
}
