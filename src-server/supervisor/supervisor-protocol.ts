/**
 * What a supervised server child tells its supervisor over the IPC channel: where it logs,
 * and the native work in progress (so that a crash can be explained after the fact).
 */

import type { ActiveWork } from "../engine/types.js";

export type { ActiveWork };

export type SupervisorMessage = { type: "ready"; url: string; logFile: string | null } | { type: "activity"; work: ActiveWork[] };

/**
 * In a supervised child: reports to the supervisor; exits when the supervisor is gone (a
 * server nobody watches must not hold the port). Null when this process has no supervisor.
 */
export function supervisorChannel(): { send(message: SupervisorMessage): void } | null {
  if (typeof process.send !== "function") return null;
  process.on("disconnect", () => process.exit(1));
  return {
    send(message) {
      if (process.connected) process.send!(message);
    },
  };
}
