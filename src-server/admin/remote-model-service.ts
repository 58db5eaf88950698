/**
 * Remote models an administrator adds at run time (`workspaces.manage`): checked against
 * the allow-list before anything is sent, tested before they are added, their upstreams'
 * secrets (API keys, client certificates) sealed under the key provider and never shown
 * again, served at once and after every restart. Models from the configuration are listed
 * beside them, read-only.
 */
import { ServiceError, conflict, invalidRequest, notFound } from "../errors.js";
import { nowSeconds } from "../ids.js";
import type { Principal } from "../domain/scopes.js";
import type { RemoteEngine } from "../engine/remote/remote-engine.js";
import { UpstreamClient, type UpstreamTimeouts } from "../engine/remote/upstream-client.js";
import type { UpstreamStatus } from "../engine/types.js";
import { MODEL_ID } from "../models/catalog.js";
import type { ModelType } from "../models/gguf-summary.js";
import { ModelConfigError, type ModelEntry, type ModelRegistry } from "../models/model-registry.js";
import type { MessageBus } from "../store/message-bus.js";
import { isPlainHttpBeyondLoopback, parseUpstreamUrl, upstreamAllowed, type RemoteModelSpec, type UpstreamTarget, type UpstreamTls } from "../models/remote-binding.js";
import type { DataKeyring } from "../security/data-keyring.js";
import type { RemoteModelRecord, RemoteModelStore } from "../store/remote-model-store.js";
import type { AdminService } from "./admin-service.js";

export interface RemoteUpstreamInput {
  url: string;
  /** The model name upstream; default: the id. */
  model?: string | undefined;
  name?: string | undefined;
  apiKey?: string | undefined;
  /** PEM text: a private CA to trust, the client certificate and its key. */
  tls?: { ca?: string | undefined; cert?: string | undefined; key?: string | undefined } | undefined;
}

export interface RemoteModelInput {
  id: string;
  type?: ModelType | undefined;
  upstreams: RemoteUpstreamInput[];
  contextLength?: number | undefined;
  dimensions?: number | undefined;
}

export interface RemoteModelView {
  id: string;
  type: ModelType;
  /** `config`: from the configuration file or command line (read-only here); `admin`: added through the API. */
  source: "config" | "admin";
  contextLength: number | null;
  dimensions: number | null;
  createdAt: number | null;
  createdBy: string | null;
  upstreams: (UpstreamStatus & { url: string; model: string; apiKey: boolean; clientCertificate: boolean })[];
}

/** One replica's answer to a connection test. */
export interface ReplicaProbe {
  id: string;
  url: string;
  ok: boolean;
  /** Round trip of `GET /models`, in milliseconds. */
  ms: number;
  /** Models the upstream lists (the first 50). */
  models: string[];
  /** Whether the model asked for is among them; null when the upstream lists none by that name (llama-server serves any). */
  servesModel: boolean | null;
  error: string | null;
}

interface Secrets {
  upstreams: { apiKey?: string | undefined; tls?: RemoteUpstreamInput["tls"] }[];
}

interface StoredSpec {
  type: ModelType;
  contextLength: number | null;
  dimensions: number | null;
  upstreams: { name: string; url: string; model: string }[];
}

export interface RemoteModelServiceDeps {
  admin: AdminService;
  registry: ModelRegistry;
  engine: RemoteEngine;
  store: RemoteModelStore;
  keyring: DataKeyring;
  /** `upstreams.allowed`: where the API may point a model (loopback always). */
  allowed: readonly string[];
  /** `upstreams.insecureHttp`. */
  insecureHttp: boolean;
  timeouts: UpstreamTimeouts;
  onWarning?: (message: string) => void;
  /**
   * Replicas sharing the store: an addition or removal made at one is announced on the bus,
   * and every other replica brings its registry in step with the store.
   */
  replicas?: { bus: MessageBus; origin: string } | null;
}

const aad = (id: string) => `remote-model:${id}`;
const CHANNEL = "pustaka_remote_models";

export class RemoteModelService {
  /** Ids of the models this process serves because the store holds them (added through the API). */
  private readonly fromStore = new Set<string>();
  private syncing: Promise<void> = Promise.resolve();

  constructor(private readonly deps: RemoteModelServiceDeps) {
    const replicas = deps.replicas;
    replicas?.bus.subscribe(CHANNEL, (origin) => {
      if (origin !== replicas.origin) void this.sync();
    });
    replicas?.bus.onReconnect(() => void this.sync());
  }

  /** Serves the models added through the API before the last stop (a model that cannot be restored is reported, not fatal). */
  async restore(): Promise<void> {
    await this.sync();
  }

  /**
   * Brings the models served from the store in step with it: those added (here or at
   * another replica) are served, those removed are not. Runs one at a time.
   */
  sync(): Promise<void> {
    this.syncing = this.syncing.then(async () => {
      let records;
      try {
        records = await this.deps.store.list();
      } catch (error) {
        this.deps.onWarning?.(`the remote models added through the API could not be read: ${(error as Error).message}`);
        return;
      }
      const stored = new Set(records.map((r) => r.id));
      for (const id of [...this.fromStore].filter((id) => !stored.has(id))) {
        this.unserve(id);
        this.deps.keyring.forget(id);
      }
      for (const record of records.filter((r) => !this.fromStore.has(r.id))) {
        try {
          const spec = JSON.parse(record.spec) as StoredSpec;
          const cipher = await this.deps.keyring.cipher(record.id);
          const secrets = JSON.parse(cipher.open(record.secrets, aad(record.id)).toString("utf8")) as Secrets;
          this.serve(record.id, spec, secrets);
        } catch (error) {
          this.deps.onWarning?.(`the remote model '${record.id}' added through the API cannot be served: ${(error as Error).message}`);
        }
      }
    });
    return this.syncing;
  }

  /** Tells the other replicas the store's remote models changed (best effort: they also sync when their bus reconnects). */
  private announce(): void {
    const replicas = this.deps.replicas;
    replicas?.bus.publish(CHANNEL, replicas.origin).catch((error: unknown) => this.deps.onWarning?.(`the other replicas were not told of a remote model change: ${(error as Error).message}`));
  }

  async list(principal: Principal): Promise<RemoteModelView[]> {
    this.deps.admin.require(principal, "workspaces.manage");
    const added = new Map((await this.deps.store.list()).map((r) => [r.id, r]));
    return this.deps.registry.entries.filter((e) => e.remote).map((e) => this.view(e, added.get(e.id)));
  }

  async create(principal: Principal, input: RemoteModelInput): Promise<RemoteModelView> {
    this.deps.admin.require(principal, "workspaces.manage");
    const { spec, secrets } = this.validate(input);
    if (this.deps.registry.find(input.id)) throw conflict(`the id '${input.id}' is already in use`, "model_id_taken");
    const { provider, wrappedKey } = await this.deps.keyring.create(input.id);
    const cipher = await this.deps.keyring.cipher(input.id);
    const record = {
      id: input.id,
      spec: JSON.stringify(spec),
      keyProvider: provider,
      wrappedKey,
      secrets: cipher.seal(Buffer.from(JSON.stringify(secrets)), aad(input.id)),
      createdAt: nowSeconds(),
      createdBy: principal.keyId,
    };
    let entry: ModelEntry;
    try {
      entry = this.serve(input.id, spec, secrets);
    } catch (error) {
      this.deps.keyring.forget(input.id);
      if (error instanceof ModelConfigError) throw invalidRequest(error.message, /already in use/.test(error.message) ? "model_id_taken" : "invalid_parameter", "id");
      throw error;
    }
    try {
      await this.deps.store.insert(record);
    } catch (error) {
      this.unserve(input.id);
      throw error;
    }
    this.announce();
    return this.view(entry, record);
  }

  /** Removes a model added through the API (its sealed secrets and their key with it). */
  async remove(principal: Principal, id: string): Promise<void> {
    this.deps.admin.require(principal, "workspaces.manage");
    const entry = this.deps.registry.find(id);
    if (!entry?.remote || entry.id !== id) throw notFound(`there is no remote model '${id}'`, "model_not_found", "id");
    if (!(await this.deps.store.get(id))) throw conflict(`the remote model '${id}' comes from the configuration; change the configuration file or command line to remove it`, "model_configured");
    this.unserve(id);
    await this.deps.store.delete(id);
    this.deps.keyring.forget(id);
    this.announce();
  }

  /** Tests a model before it is added: each replica's `GET /models`, with its key and certificate. */
  async test(principal: Principal, input: RemoteModelInput): Promise<ReplicaProbe[]> {
    this.deps.admin.require(principal, "workspaces.manage");
    const { targets } = this.targets(input);
    return await Promise.all(targets.map((target) => this.probe(target)));
  }

  /** Tests a model being served: each replica probed now (its health updated too). */
  async testExisting(principal: Principal, id: string): Promise<ReplicaProbe[]> {
    this.deps.admin.require(principal, "workspaces.manage");
    const entry = this.deps.registry.find(id);
    if (!entry?.remote) throw notFound(`there is no remote model '${id}'`, "model_not_found", "id");
    const probes = await Promise.all(entry.remote.upstreams.map((target) => this.probe(target)));
    await this.deps.engine.checkNow(entry.id);
    return probes;
  }

  private serve(id: string, spec: StoredSpec, secrets: Secrets): ModelEntry {
    const upstreams: UpstreamTarget[] = spec.upstreams.map((u, i) => {
      const secret = secrets.upstreams[i] ?? {};
      const apiKey = secret.apiKey;
      const tls: UpstreamTls | null = secret.tls && (secret.tls.ca ?? secret.tls.cert) ? { ca: secret.tls.ca, cert: secret.tls.cert, key: secret.tls.key } : null;
      return { id: u.name, baseUrl: u.url, model: u.model, apiKey: apiKey ? () => apiKey : null, tls };
    });
    const remote: RemoteModelSpec = { type: spec.type, upstreams, contextLength: spec.contextLength ?? undefined, dimensions: spec.dimensions ?? undefined };
    const entry = this.deps.registry.addRemote(id, remote);
    this.deps.engine.add(entry);
    this.fromStore.add(id);
    return entry;
  }

  private unserve(id: string): void {
    this.deps.engine.remove(id);
    this.deps.registry.removeRemote(id);
    this.fromStore.delete(id);
  }

  private validate(input: RemoteModelInput): { spec: StoredSpec; secrets: Secrets } {
    if (!MODEL_ID.test(input.id)) throw invalidRequest("ids are lowercase letters, digits and . _ : -", "invalid_parameter", "id");
    const { targets } = this.targets(input);
    const alias = this.deps.registry.catalog.aliases.find((a) => a.id === input.id);
    const type = input.type ?? alias?.type ?? "chat";
    return {
      spec: { type, contextLength: input.contextLength ?? null, dimensions: input.dimensions ?? null, upstreams: targets.map((t) => ({ name: t.id, url: t.baseUrl, model: t.model })) },
      secrets: { upstreams: input.upstreams.map((u) => ({ ...(u.apiKey ? { apiKey: u.apiKey } : {}), ...(u.tls ? { tls: u.tls } : {}) })) },
    };
  }

  /** The replicas as targets, each checked: a readable http(s) URL, allowed, encrypted beyond loopback unless allowed plain. */
  private targets(input: RemoteModelInput): { targets: UpstreamTarget[] } {
    if (input.upstreams.length === 0) throw invalidRequest("a remote model needs at least one upstream", "invalid_parameter", "upstreams");
    const names = new Set<string>();
    const targets = input.upstreams.map((u, i): UpstreamTarget => {
      let parsed: { baseUrl: string; model: string };
      try {
        parsed = parseUpstreamUrl(u.url, u.model ?? input.id);
      } catch (error) {
        throw invalidRequest((error as Error).message, "invalid_upstream_url", `upstreams.${i}.url`);
      }
      if (!upstreamAllowed(parsed.baseUrl, this.deps.allowed)) {
        throw new ServiceError("permission", `${new URL(parsed.baseUrl).host} is not an allowed upstream: an administrator of this machine must list it in the configuration (upstreams.allowed) before a model can be pointed at it`, {
          code: "upstream_not_allowed",
          param: `upstreams.${i}.url`,
        });
      }
      if (isPlainHttpBeyondLoopback(parsed.baseUrl) && !this.deps.insecureHttp) {
        throw invalidRequest(`${new URL(parsed.baseUrl).origin} is beyond this machine in plain HTTP: prompts and the upstream's key would cross the network unencrypted; use https (or start the server with --upstream-insecure-http)`, "insecure_upstream", `upstreams.${i}.url`);
      }
      if ((u.tls?.cert === undefined) !== (u.tls?.key === undefined)) throw invalidRequest("give both the client certificate and its key, or neither", "invalid_parameter", `upstreams.${i}.tls`);
      const name = u.name ?? `r${i + 1}`;
      if (names.has(name)) throw invalidRequest(`two upstreams are named '${name}'`, "invalid_parameter", `upstreams.${i}.name`);
      names.add(name);
      const apiKey = u.apiKey;
      return { id: name, baseUrl: parsed.baseUrl, model: u.model ?? parsed.model, apiKey: apiKey ? () => apiKey : null, tls: u.tls ? { ca: u.tls.ca, cert: u.tls.cert, key: u.tls.key } : null };
    });
    return { targets };
  }

  private async probe(target: UpstreamTarget): Promise<ReplicaProbe> {
    const client = new UpstreamClient(target, { ...this.deps.timeouts, firstByteMs: Math.min(this.deps.timeouts.firstByteMs, 10_000) });
    const started = performance.now();
    try {
      const list = (await client.getJson("/models", AbortSignal.timeout(15_000))) as { data?: { id?: unknown }[] };
      const ids = Array.isArray(list?.data) ? list.data.map((m) => m.id).filter((id): id is string => typeof id === "string") : [];
      if (!Array.isArray(list?.data)) throw new Error("GET /models answered without a model list: is this an OpenAI-compatible API (ending in /v1)?");
      return { id: target.id, url: target.baseUrl, ok: true, ms: Math.round(performance.now() - started), models: ids.slice(0, 50), servesModel: ids.includes(target.model) ? true : null, error: null };
    } catch (error) {
      return { id: target.id, url: target.baseUrl, ok: false, ms: Math.round(performance.now() - started), models: [], servesModel: null, error: (error as Error).message };
    } finally {
      await client.close();
    }
  }

  /** `record`: the model's row when it was added through the API (undefined: from the configuration). */
  private view(entry: ModelEntry, record: Pick<RemoteModelRecord, "createdAt" | "createdBy"> | undefined): RemoteModelView {
    const remote = entry.remote!;
    const health = this.deps.engine.upstreams(entry) ?? [];
    return {
      id: entry.id,
      type: entry.type,
      source: record ? "admin" : "config",
      contextLength: this.deps.engine.contextFor(entry),
      dimensions: remote.dimensions,
      createdAt: record?.createdAt ?? null,
      createdBy: record?.createdBy ?? null,
      upstreams: remote.upstreams.map((u) => {
        const h = health.find((x) => x.id === u.id) ?? { id: u.id, state: "unknown" as const, inFlight: 0, queued: 0, lastError: null, requests: 0, failures: 0 };
        return { ...h, url: u.baseUrl, model: u.model, apiKey: u.apiKey !== null, clientCertificate: Boolean(u.tls?.cert ?? u.tls?.certFile) };
      }),
    };
  }
}
