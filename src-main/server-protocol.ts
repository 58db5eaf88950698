/**
 * Messages between the main process and the server's utility process. The settings,
 * API key included, travel in the first message rather than argv or the environment, so
 * the key never shows in a process list. Both sides validate what they receive.
 */
import path from "node:path";
import { z } from "zod";
import type { EngineStatus } from "./bridge.js";

const absolutePath = z.string().min(1).max(4096).refine((p) => path.isAbsolute(p), "must be an absolute path");

/** What the utility process needs to start the server. */
export const ServerSettingsSchema = z
  .object({
    dataDir: absolutePath,
    modelsDir: absolutePath,
    /** The workbench's key, registered as an admin key of the default workspace. */
    apiKey: z.string().min(16).max(256),
    /** JSON-lines log of the server (pino). */
    logFile: absolutePath,
    /** The built workbench, served at `/`; null = API only. */
    rendererDir: absolutePath.nullable(),
    catalogPath: absolutePath,
    version: z.string().min(1),
    /** Port to try first (the last one used, so the window's origin stays the same); 0 = any free port. */
    port: z.number().int().min(0).max(65535),
    logLevel: z.enum(["fatal", "error", "warn", "info", "debug", "trace"]).default("info"),
    /** Module URLs for the server's worker threads when a packaged build moved them. */
    workers: z.object({ ggufReader: z.string().optional(), documentParser: z.string().optional() }).strict().optional(),
    /** Further configuration (names of src-server/config.ts), validated by the server. */
    config: z.record(z.string(), z.unknown()).optional(),
  })
  .strict();

export type ServerSettings = z.input<typeof ServerSettingsSchema>;
/** Settings after validation (defaults applied). */
export type ValidServerSettings = z.output<typeof ServerSettingsSchema>;

export type ParentMessage = { type: "start"; settings: ServerSettings } | { type: "stop" };

export const ParentMessageSchema = z.discriminatedUnion("type", [
  z.object({ type: z.literal("start"), settings: ServerSettingsSchema }).strict(),
  z.object({ type: z.literal("stop") }).strict(),
]);

const EngineStatusSchema = z.object({
  backend: z.string(),
  gpu: z.union([z.string(), z.literal(false), z.null()]),
  threads: z.number(),
  loadedModels: z.array(z.object({ id: z.string(), path: z.string().optional(), kinds: z.array(z.enum(["chat", "embedding", "rerank"])), activeLeases: z.number() })),
});

export type ChildMessage =
  | { type: "ready"; url: string; engine: EngineStatus }
  | { type: "engine"; engine: EngineStatus }
  /** Startup failed; `fatal` when retrying cannot help (invalid configuration or models). */
  | { type: "error"; message: string; fatal: boolean }
  | { type: "stopped" };

export const ChildMessageSchema: z.ZodType<ChildMessage> = z.discriminatedUnion("type", [
  z.object({ type: z.literal("ready"), url: z.url({ protocol: /^http$/ }), engine: EngineStatusSchema }),
  z.object({ type: z.literal("engine"), engine: EngineStatusSchema }),
  z.object({ type: z.literal("error"), message: z.string(), fatal: z.boolean() }),
  z.object({ type: z.literal("stopped") }),
]);
