/**
 * Pustaka's HTTP API contract: request, response and event types of every route the
 * server answers, and the desktop shell's preload bridge (`desktop-bridge.ts`). Type-only by design (the import-boundary lint rule lets the renderer
 * import this folder and nothing else of the server), so `import type` it.
 */
export type * from "./common.js";
export type * from "./admin.js";
export type * from "./models.js";
export type * from "./inference.js";
export type * from "./rag.js";
export type * from "./conversations.js";
export type * from "./audit.js";
export type * from "./ollama-listener.js";
export type * from "./desktop-bridge.js";
