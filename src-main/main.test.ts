/**
 * The composition root end to end, with `electron` replaced by a fake (testing/): main.ts
 * runs in a Node child, its server in a grandchild. The window is hardened and guarded,
 * the server starts and registers the workbench key, the bridge hands that key only to
 * the app's origin, a killed server comes back on the same origin, and quitting closes it.
 */
import assert from "node:assert/strict";
import { fork, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import type { ServerState } from "./bridge.js";
import { IPC, type BootstrapInfo } from "./ipc-channels.js";

const here = path.dirname(fileURLToPath(import.meta.url));

interface Report {
  event: string;
  data: any;
}

class FakeElectronApp {
  readonly reports: Report[] = [];
  private readonly waiters = new Set<() => void>();
  private nextId = 0;
  readonly exited: Promise<number | null>;

  constructor(readonly child: ChildProcess) {
    child.on("message", (report: Report) => {
      this.reports.push(report);
      for (const wake of this.waiters) wake();
    });
    this.exited = new Promise((resolve) => child.on("exit", (code) => resolve(code)));
  }

  /** The first report (after `from`) matching `match`. */
  async waitFor(match: (report: Report) => boolean, from = 0, timeoutMs = 30_000): Promise<Report> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = this.reports.slice(from).find(match);
      if (found) return found;
      if (Date.now() > deadline) throw new Error(`timed out; reports: ${JSON.stringify(this.reports.map((r) => r.event))}`);
      await new Promise<void>((resolve) => {
        const wake = () => (this.waiters.delete(wake), resolve());
        this.waiters.add(wake);
        setTimeout(wake, 200);
      });
    }
  }

  async command(cmd: Record<string, unknown>): Promise<{ value?: any; error?: string }> {
    const id = ++this.nextId;
    this.child.send({ ...cmd, id });
    const { data } = await this.waitFor((r) => r.event === "answer" && r.data.id === id);
    return data;
  }

  /** Resolves with the next server state sent to the window (after `from`) in `phase`. */
  async state(phase: ServerState["state"], from = 0): Promise<ServerState> {
    const report = await this.waitFor((r) => r.event === "send" && r.data.channel === IPC.serverState && r.data.args[0].state === phase, from);
    return report.data.args[0] as ServerState;
  }
}

describe("main.ts with a fake electron", () => {
  const appData = mkdtempSync(path.join(os.tmpdir(), "pustaka-main-"));
  const userData = path.join(appData, "Pustaka");
  let app: FakeElectronApp;
  let origin = "";
  let info: BootstrapInfo;

  before(async () => {
    const child = fork(path.join(here, "main.ts"), [`--fake-app-data=${appData}`], {
      execArgv: ["--import", "tsx", "--import", path.join(here, "testing", "register-fake-electron.mjs")],
      stdio: ["ignore", "inherit", "inherit", "ipc"],
    });
    app = new FakeElectronApp(child);
    await app.state("ready");
  });

  after(() => {
    app.child.kill("SIGKILL");
    rmSync(appData, { recursive: true, force: true });
  });

  it("opens one hardened, guarded window and installs the menu", () => {
    const windows = app.reports.filter((r) => r.event === "window");
    assert.equal(windows.length, 1);
    const { webPreferences, guarded } = windows[0]!.data;
    assert.equal(webPreferences.sandbox, true);
    assert.equal(webPreferences.contextIsolation, true);
    assert.equal(webPreferences.nodeIntegration, false);
    assert.match(webPreferences.preload, /src-main[\\/]preload\.cjs$/);
    assert.equal(guarded, true, "the navigation guard is attached to every web contents");
    assert.deepEqual(app.reports.find((r) => r.event === "menu")!.data, ["File", "Edit", "View", "Window", "help"]);
    const server = app.reports.filter((r) => r.event === "fork")[0]!.data;
    assert.equal(server.serviceName, "Pustaka server");
    // glibc reads its tunables at start: the server process is started asking for huge pages.
    assert.match(readFileSync(`/proc/${server.pid as number}/environ`, "utf8"), /(^|\0)GLIBC_TUNABLES=([^\0]*:)?glibc\.malloc\.hugetlb=1(:|\0|$)/);
  });

  it("shows the workbench (or, unbuilt, a page saying so) once the server is ready", async () => {
    const ready = await app.state("ready");
    assert.ok(ready.engine && ready.restarts === 0);
    const loads = app.reports.filter((r) => r.event === "load").map((r) => r.data as string);
    assert.ok(loads[0]!.startsWith("data:text/html"), "a status page while the server starts");
    const last = loads.at(-1)!;
    assert.ok(/^http:\/\/127\.0\.0\.1:\d+\/$/.test(last) || decodeURIComponent(last).includes("not built"), last);
  });

  it("hands the base URL and key to the app's origin only, and the server accepts that key", async () => {
    const { value: none } = await app.command({ cmd: "send-sync", channel: IPC.bootstrap, url: "https://example.org/" });
    assert.equal(none, null);
    const port = JSON.parse(readFileSync(path.join(userData, "settings.json"), "utf8")).serverPort as number;
    origin = `http://127.0.0.1:${port}`;
    info = (await app.command({ cmd: "send-sync", channel: IPC.bootstrap, url: `${origin}/` })).value;
    assert.equal(info.baseUrl, origin);
    assert.match(info.credential, /^psk-[0-9A-Za-z]{43}$/);
    const models = await fetch(`${origin}/v1/models`, { headers: { authorization: `Bearer ${info.credential}` } });
    assert.equal(models.status, 200);
    assert.ok(!readFileSync(path.join(userData, "workbench-key.bin"), "utf8").includes(info.credential), "stored encrypted");
    assert.equal((await app.command({ cmd: "request", url: `${origin}/v1/models` })).value, true);
    assert.equal((await app.command({ cmd: "request", url: "https://example.org/x.js" })).value, false);
    const state = await app.command({ cmd: "invoke", channel: IPC.getServerState, args: [], url: `${origin}/` });
    assert.equal(state.value.state, "ready");
    assert.match((await app.command({ cmd: "invoke", channel: IPC.getServerState, args: [], url: "http://127.0.0.1:1/" })).error!, /not the Pustaka workbench/);
  });

  it("restarts a killed server on the same origin, and the key still works", async () => {
    const from = app.reports.length;
    const pid = app.reports.filter((r) => r.event === "fork").at(-1)!.data.pid as number;
    process.kill(pid, "SIGKILL");
    const restarting = await app.state("restarting", from);
    assert.equal(restarting.restarts, 1);
    await app.state("ready", from);
    assert.equal((await app.command({ cmd: "request", url: `${origin}/healthz` })).value, true);
    const models = await fetch(`${origin}/v1/models`, { headers: { authorization: `Bearer ${info.credential}` } });
    assert.equal(models.status, 200);
  });

  it("quits cleanly: the server is stopped and its port closed", async () => {
    app.child.send({ cmd: "quit" });
    assert.equal(await app.exited, 0);
    await assert.rejects(fetch(`${origin}/healthz`));
    assert.ok(existsSync(path.join(userData, "logs", "server.log")));
    assert.match(readFileSync(path.join(userData, "logs", "main.log"), "utf8"), /"msg":"quit"/);
  });
});
