/**
 * Runs the server in a child process (Electron's utilityProcess in the app) and keeps it
 * running: a crash, an out-of-memory kill or a llama.cpp abort takes down the child,
 * never the window. States: starting → ready; on a crash, crashed → restarting (with
 * backoff) → starting…, or failed once the crash loop hits the cap or retrying cannot help.
 */
import type { EngineStatus, ServerStateName } from "./bridge.js";
import { systemClock, type Clock } from "./clock.js";
import { silentLog, type Log } from "./log.js";
import { RestartPolicy, type RestartPolicyOptions } from "./restart-policy.js";
import { ChildMessageSchema, type ParentMessage, type ServerSettings } from "./server-protocol.js";

/** What the host needs of a child process (Electron's `UtilityProcess` fits). */
export interface ServerProcess {
  postMessage(message: ParentMessage): void;
  on(event: "spawn", listener: () => void): unknown;
  on(event: "message", listener: (message: unknown) => void): unknown;
  on(event: "exit", listener: (code: number) => void): unknown;
  kill(): boolean;
  /** The child's stderr when piped: its last line explains a native crash. */
  readonly stderr?: NodeJS.ReadableStream | null;
}

export interface HostState {
  phase: ServerStateName | "stopped";
  /** Base URL while ready. */
  url: string | null;
  engine: EngineStatus | null;
  /** Crashes since the server last ran stably. */
  restarts: number;
  /** Unix ms of the next attempt while restarting. */
  retryAt: number | null;
  error: string | null;
}

export interface ServerHostOptions {
  /** Starts a child running `server-process.js`. */
  fork: () => ServerProcess;
  /** The settings for each start, read anew each time (the models folder may have changed). */
  settings: () => Omit<ServerSettings, "port">;
  /** Port to ask for first (the last one used); the child falls back to a free one. */
  preferredPort?: number | null;
  clock?: Clock;
  policy?: Partial<RestartPolicyOptions>;
  /** A child not ready after this long (ms) is killed and counts as a crash. Default 120 000. */
  startTimeoutMs?: number;
  /** A child still running this long (ms) after `stop` is killed. Default 10 000. */
  stopTimeoutMs?: number;
  log?: Log;
}

interface Child {
  process: ServerProcess;
  exited: Promise<void>;
  stopping: boolean;
  timedOut: boolean;
  fatal: boolean;
  lastError: string | null;
  stderrTail: string;
  startTimer: unknown;
}

export class ServerHost {
  private current: HostState = { phase: "stopped", url: null, engine: null, restarts: 0, retryAt: null, error: null };
  private readonly listeners = new Set<(state: HostState) => void>();
  private readonly clock: Clock;
  private readonly log: Log;
  private readonly policy: RestartPolicy;
  private child: Child | null = null;
  private retryTimer: unknown = null;
  private port: number;
  private restarting: Promise<void> | null = null;
  private closing: Promise<void> | null = null;

  constructor(private readonly options: ServerHostOptions) {
    this.clock = options.clock ?? systemClock;
    this.log = options.log ?? silentLog;
    this.policy = new RestartPolicy(() => this.clock.now(), options.policy);
    this.port = options.preferredPort ?? 0;
  }

  get state(): HostState {
    return this.current;
  }

  /** Calls `listener` on every state change; returns the unsubscribe function. */
  onState(listener: (state: HostState) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Starts the server unless it is running or a restart is already scheduled. */
  start(): void {
    if (this.closing || this.child || this.retryTimer !== null) return;
    this.spawn();
  }

  /** Stops the server (gracefully) and starts it again with fresh settings and a clean crash count. */
  restart(): Promise<void> {
    this.restarting ??= (async () => {
      this.cancelRetry();
      this.set({ phase: "restarting", url: null, engine: null, retryAt: null, error: null });
      await this.stopChild();
      this.policy.reset();
      this.spawn();
    })().finally(() => (this.restarting = null));
    return this.restarting;
  }

  /** Stops the server for good. Idempotent. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      this.cancelRetry();
      await this.stopChild();
      this.set({ phase: "stopped", url: null, engine: null, retryAt: null });
    })();
    return this.closing;
  }

  private spawn(): void {
    if (this.closing) return;
    let forked: ServerProcess;
    try {
      forked = this.options.fork();
    } catch (error) {
      this.log.error("cannot start the server process", { error: String(error) });
      this.set({ phase: "failed", url: null, engine: null, retryAt: null, error: `cannot start the server process: ${(error as Error).message}` });
      return;
    }
    let resolveExit!: () => void;
    const child: Child = {
      process: forked,
      exited: new Promise<void>((resolve) => (resolveExit = resolve)),
      stopping: false,
      timedOut: false,
      fatal: false,
      lastError: null,
      stderrTail: "",
      startTimer: null,
    };
    this.child = child;
    this.set({ phase: "starting", url: null, engine: null, retryAt: null, error: null, restarts: this.policy.crashes });
    child.process.on("spawn", () => this.sendStart(child));
    child.process.on("message", (message) => this.onMessage(child, message));
    child.process.on("exit", (code) => {
      resolveExit();
      this.onExit(child, code);
    });
    child.process.stderr?.on("data", (chunk: Buffer | string) => {
      child.stderrTail = (child.stderrTail + String(chunk)).slice(-4096);
    });
    const timeout = this.options.startTimeoutMs ?? 120_000;
    child.startTimer = this.clock.setTimeout(() => {
      child.timedOut = true;
      child.lastError = `the server did not start within ${Math.round(timeout / 1000)} s`;
      child.process.kill();
    }, timeout);
  }

  private sendStart(child: Child): void {
    try {
      child.process.postMessage({ type: "start", settings: { ...this.options.settings(), port: this.port } });
    } catch (error) {
      child.fatal = true;
      child.lastError = `cannot start the server: ${(error as Error).message}`;
      child.process.kill();
    }
  }

  private onMessage(child: Child, raw: unknown): void {
    if (child !== this.child || child.stopping) return;
    const parsed = ChildMessageSchema.safeParse(raw);
    if (!parsed.success) {
      this.log.warn("ignored a malformed message from the server process");
      return;
    }
    const message = parsed.data;
    if (message.type === "ready") {
      this.clock.clearTimeout(child.startTimer);
      this.policy.markReady();
      this.port = Number(new URL(message.url).port);
      this.set({ phase: "ready", url: message.url, engine: message.engine, error: null, restarts: this.policy.crashes });
      this.log.info("server ready", { url: message.url, gpu: message.engine.gpu, threads: message.engine.threads });
    } else if (message.type === "engine") {
      if (this.current.phase === "ready") this.set({ engine: message.engine });
    } else if (message.type === "error") {
      child.lastError = message.message;
      child.fatal = message.fatal;
    }
  }

  private onExit(child: Child, code: number): void {
    this.clock.clearTimeout(child.startTimer);
    if (child !== this.child) return;
    this.child = null;
    if (child.stopping) return;
    const error = child.lastError ?? lastLine(child.stderrTail) ?? `the server process exited (code ${code})`;
    this.log.error("server process exited", { code, error });
    const delay = child.fatal ? null : this.policy.onCrash();
    this.set({ phase: "crashed", url: null, engine: null, error, restarts: this.policy.crashes });
    if (delay === null) {
      this.set({ phase: "failed" });
      return;
    }
    this.set({ phase: "restarting", retryAt: this.clock.now() + delay });
    this.retryTimer = this.clock.setTimeout(() => {
      this.retryTimer = null;
      this.spawn();
    }, delay);
  }

  private stopChild(): Promise<void> {
    const child = this.child;
    if (!child) return Promise.resolve();
    child.stopping = true;
    this.clock.clearTimeout(child.startTimer);
    try {
      child.process.postMessage({ type: "stop" });
    } catch {
      child.process.kill();
    }
    const killTimer = this.clock.setTimeout(() => child.process.kill(), this.options.stopTimeoutMs ?? 10_000);
    return child.exited.then(() => this.clock.clearTimeout(killTimer));
  }

  private cancelRetry(): void {
    if (this.retryTimer === null) return;
    this.clock.clearTimeout(this.retryTimer);
    this.retryTimer = null;
  }

  private set(patch: Partial<HostState>): void {
    this.current = { ...this.current, ...patch };
    for (const listener of this.listeners) listener(this.current);
  }
}

function lastLine(text: string): string | null {
  const line = text.trim().split("\n").pop()?.trim();
  return line ? line.slice(0, 300) : null;
}
