/**
 * The environment of this process, read for the processes it starts (the lint rule keeps
 * configuration to config.ts; this is not configuration but what a launcher passes on). Kept
 * apart from config.ts so that the `pustaka serve` supervisor, a bare Node process, loads no
 * more than it needs.
 */
import { hugePageEnvironment } from "./engine/huge-pages.js";

/** glibc's tunables as this process started with them: whether its malloc can advise huge pages (engine/huge-pages.ts). */
export function startupGlibcTunables(env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  return env.GLIBC_TUNABLES === undefined ? {} : { GLIBC_TUNABLES: env.GLIBC_TUNABLES };
}

/** The environment a launcher gives the server process it starts: its own, asking glibc for huge pages. */
export function serverProcessEnvironment(env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  return { ...env, ...hugePageEnvironment(env) };
}
