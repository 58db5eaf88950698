import assert from "node:assert/strict";
import { EventEmitter } from "node:events";
import { PassThrough } from "node:stream";
import { describe, it } from "node:test";
import type { Clock } from "./clock.js";
import { bridgeState } from "./bridge-state.js";
import { ServerHost, type HostState, type ServerHostOptions, type ServerProcess } from "./server-host.js";
import type { ParentMessage } from "./server-protocol.js";

class FakeClock implements Clock {
  private t = 1_700_000_000_000;
  private seq = 0;
  private timers = new Map<number, { at: number; fn: () => void }>();
  now = () => this.t;
  setTimeout = (fn: () => void, ms: number) => {
    const id = ++this.seq;
    this.timers.set(id, { at: this.t + ms, fn });
    return id;
  };
  clearTimeout = (id: unknown) => void this.timers.delete(id as number);
  /** Moves time forward, firing due timers in order. */
  advance(ms: number): void {
    const end = this.t + ms;
    for (;;) {
      const due = [...this.timers.entries()].filter(([, t]) => t.at <= end).sort((a, b) => a[1].at - b[1].at)[0];
      if (!due) break;
      this.timers.delete(due[0]);
      this.t = due[1].at;
      due[1].fn();
    }
    this.t = end;
  }
}

class FakeProcess extends EventEmitter implements ServerProcess {
  sent: ParentMessage[] = [];
  killed = 0;
  readonly stderr = new PassThrough();
  /** Exit on `stop` like the real child does. */
  constructor(private readonly obeysStop = true) {
    super();
  }
  postMessage(message: ParentMessage): void {
    this.sent.push(message);
    if (message.type === "stop" && this.obeysStop) this.emit("exit", 0);
  }
  kill(): boolean {
    this.killed += 1;
    this.emit("exit", 15);
    return true;
  }
  ready(port = 7781): void {
    this.emit("message", { type: "ready", url: `http://127.0.0.1:${port}`, engine: { backend: "llama.cpp", gpu: false, threads: 2, loadedModels: [] } });
  }
}

const SETTINGS = {
  dataDir: "/data",
  modelsDir: "/data/models",
  apiKey: "psk-" + "a".repeat(43),
  logFile: "/logs/server.log",
  rendererDir: null,
  catalogPath: "/app/models/catalog.json",
  version: "1.0.0",
};

function setup(options: Partial<ServerHostOptions> & { obeysStop?: boolean } = {}) {
  const clock = new FakeClock();
  const children: FakeProcess[] = [];
  const states: HostState[] = [];
  const host = new ServerHost({
    fork: () => {
      const child = new FakeProcess(options.obeysStop ?? true);
      children.push(child);
      queueMicrotask(() => child.emit("spawn"));
      return child;
    },
    settings: () => SETTINGS,
    clock,
    ...options,
  });
  host.onState((s) => states.push(s));
  const last = () => children[children.length - 1]!;
  return { host, clock, children, states, last, phases: () => states.map((s) => s.phase) };
}

const tick = () => new Promise<void>((resolve) => setImmediate(resolve));

describe("ServerHost", () => {
  it("starts the child with its settings in the first message, then reports ready with the engine status", async () => {
    const { host, last, phases } = setup({ preferredPort: 7790 });
    host.start();
    assert.equal(host.state.phase, "starting");
    await tick();
    assert.deepEqual(last().sent, [{ type: "start", settings: { ...SETTINGS, port: 7790 } }]);
    last().ready(7790);
    assert.deepEqual(phases(), ["starting", "ready"]);
    assert.equal(host.state.url, "http://127.0.0.1:7790");
    const view = bridgeState(host.state);
    assert.equal(view.state, "ready");
    assert.equal(view.gpu, false);
    assert.equal(view.engine?.threads, 2);
    host.start();
    assert.equal(phases().length, 2, "start() while running does nothing");
  });

  it("restarts a crashed server after the backoff delay, asking for the same port again", async () => {
    const { host, clock, children, last, phases } = setup();
    host.start();
    await tick();
    last().ready(43210);
    last().emit("exit", 134);
    assert.deepEqual(phases(), ["starting", "ready", "crashed", "restarting"]);
    assert.equal(host.state.retryAt, clock.now() + 1000);
    assert.equal(host.state.restarts, 1);
    assert.match(host.state.error!, /exited \(code 134\)/);
    clock.advance(999);
    assert.equal(children.length, 1, "not before the delay");
    clock.advance(1);
    assert.equal(children.length, 2);
    await tick();
    assert.equal((last().sent[0] as { settings: { port: number } }).settings.port, 43210);
  });

  it("backs off 1, 2, 4, 8, 16 s through a crash loop, then fails and stays down", async () => {
    const { host, clock, children, last } = setup();
    host.start();
    const delays: number[] = [];
    for (let i = 0; i < 5; i++) {
      await tick();
      last().emit("exit", 1);
      assert.equal(host.state.phase, "restarting");
      delays.push(host.state.retryAt! - clock.now());
      clock.advance(host.state.retryAt! - clock.now());
    }
    assert.deepEqual(delays, [1000, 2000, 4000, 8000, 16000]);
    await tick();
    last().emit("exit", 1);
    assert.equal(host.state.phase, "failed");
    assert.equal(host.state.restarts, 6);
    clock.advance(3_600_000);
    assert.equal(children.length, 6, "no start after failing");
    assert.equal(bridgeState(host.state).state, "failed");
  });

  it("forgets earlier crashes once the server has run stably", async () => {
    const { host, clock, last } = setup({ policy: { stableAfterMs: 60_000 } });
    host.start();
    for (let i = 0; i < 3; i++) {
      await tick();
      last().emit("exit", 1);
      clock.advance(host.state.retryAt! - clock.now());
    }
    await tick();
    last().ready();
    assert.equal(host.state.restarts, 3);
    clock.advance(60_000);
    last().emit("exit", 1);
    assert.equal(host.state.retryAt! - clock.now(), 1000);
    assert.equal(host.state.restarts, 1);
  });

  it("a fatal startup error fails at once: retrying cannot fix a bad configuration", async () => {
    const { host, clock, children, last, phases } = setup();
    host.start();
    await tick();
    last().emit("message", { type: "error", message: "svc-embed-1024 must have 1024 dimensions", fatal: true });
    last().emit("exit", 1);
    assert.deepEqual(phases(), ["starting", "crashed", "failed"]);
    assert.equal(host.state.error, "svc-embed-1024 must have 1024 dimensions");
    clock.advance(600_000);
    assert.equal(children.length, 1);
  });

  it("kills a child that does not become ready in time, and counts it as a crash", async () => {
    const { host, clock, last } = setup({ startTimeoutMs: 5000 });
    host.start();
    await tick();
    clock.advance(5000);
    assert.equal(last().killed, 1);
    assert.equal(host.state.phase, "restarting");
    assert.match(host.state.error!, /did not start within 5 s/);
  });

  it("explains a native crash with the last line the child wrote to stderr", async () => {
    const { host, last } = setup();
    host.start();
    await tick();
    last().stderr.write("loading model\nGGML_ASSERT(ctx->mem_buffer != NULL) failed\n");
    await tick();
    last().emit("exit", 134);
    assert.equal(host.state.error, "GGML_ASSERT(ctx->mem_buffer != NULL) failed");
  });

  it("updates the engine status while ready and ignores malformed messages", async () => {
    const { host, last } = setup();
    host.start();
    await tick();
    last().ready();
    last().emit("message", { type: "engine", engine: { backend: "llama.cpp", gpu: "cuda", threads: 8, loadedModels: [] } });
    assert.equal(bridgeState(host.state).gpu, "cuda");
    last().emit("message", { type: "ready", url: "javascript:alert(1)", engine: {} });
    last().emit("message", "hello");
    assert.equal(host.state.url, "http://127.0.0.1:7781");
  });

  it("restart() stops gracefully, starts with fresh settings and a clean crash count", async () => {
    let modelsDir = "/data/models";
    const { host, clock, children, last, phases } = setup({ settings: () => ({ ...SETTINGS, modelsDir }) });
    host.start();
    await tick();
    last().emit("exit", 1);
    clock.advance(1000);
    await tick();
    last().ready();
    modelsDir = "/elsewhere/models";
    await host.restart();
    assert.deepEqual(children[1]!.sent.at(-1), { type: "stop" });
    assert.equal(children[1]!.killed, 0, "stopped by message, not killed");
    assert.equal(children.length, 3);
    await tick();
    assert.equal((last().sent[0] as { settings: { modelsDir: string } }).settings.modelsDir, "/elsewhere/models");
    assert.equal(host.state.restarts, 0);
    assert.deepEqual(phases().slice(-2), ["restarting", "starting"]);
  });

  it("close() stops the child, kills it when it does not stop in time, and is idempotent", async () => {
    const { host, clock, last } = setup({ obeysStop: false, stopTimeoutMs: 3000 });
    host.start();
    await tick();
    last().ready();
    const closing = host.close();
    assert.equal(host.close(), closing);
    assert.equal(last().killed, 0);
    clock.advance(3000);
    await closing;
    assert.equal(last().killed, 1);
    assert.deepEqual(last().sent.filter((m) => m.type === "stop").length, 1);
    assert.equal(host.state.phase, "stopped");
    host.start();
    assert.equal(host.state.phase, "stopped", "a closed host never starts again");
  });

  it("close() during a backoff wait cancels the pending restart", async () => {
    const { host, clock, children, last } = setup();
    host.start();
    await tick();
    last().emit("exit", 1);
    await host.close();
    clock.advance(60_000);
    assert.equal(children.length, 1);
    assert.equal(host.state.phase, "stopped");
  });

  it("fails, without throwing, when the child cannot even be forked", () => {
    const host = new ServerHost({
      fork: () => {
        throw new Error("utility process unavailable");
      },
      settings: () => SETTINGS,
      clock: new FakeClock(),
    });
    host.start();
    assert.equal(host.state.phase, "failed");
    assert.match(host.state.error!, /utility process unavailable/);
  });
});
