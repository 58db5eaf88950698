/**
 * Pustaka's service as a library: the one public entry of `src-server`. The CLI, the
 * desktop app's utility process and the tests start the service through it:
 *
 * ```ts
 * const layout = packageLayout();
 * const config = loadConfig({ defaults: { catalogPath: layout.catalogPath } });
 * const server = await createServer(config, { version: layout.version, rendererDir: layout.rendererDir });
 * const url = await server.listen();
 * // ...
 * await server.close();
 * ```
 *
 * Importing it does no work. The HTTP API's types are in `./contract/` (type-only).
 */
export { createServer, startServer, type PustakaServer, type ServerOptions, type Services } from "./server.js";
export { systemClock, type Clock } from "./domain/clock.js";
export { ConfigError, ConfigSchema, defaultDataDir, loadConfig, mergeConfig, type Config, type ConfigInput, type LoadConfigOptions } from "./config.js";
export { packageLayout, type PackageLayout } from "./package-layout.js";
export { hugePageEnvironment } from "./engine/huge-pages.js";
export { ModelConfigError } from "./models/model-registry.js";
export { WORKBENCH_CSP } from "./http/workbench-static.js";
