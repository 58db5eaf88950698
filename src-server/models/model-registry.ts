/**
 * Resolves model ids and aliases to what serves them: remote models (`--model ID=URL`,
 * served by upstream OpenAI-compatible servers), explicit bindings to local GGUF files
 * (`--model ID=PATH`), catalog models present in the models directory, and any other
 * `.gguf` found there.
 */
import { readdir } from "node:fs/promises";
import path from "node:path";
import { notFound, ServiceError } from "../errors.js";
import { MODEL_ID, type Catalog, type CatalogAlias, type CatalogModel } from "./catalog.js";
import { readGgufSummaries, type GgufSummary, type ModelType } from "./gguf-summary.js";
import type { RemoteBinding, RemoteModelSpec } from "./remote-binding.js";

export interface ModelEntry {
  /** Canonical id. */
  id: string;
  type: ModelType;
  /** Alias names that resolve to this entry (e.g. `svc-embed-1024`). */
  aliases: string[];
  /** The local file's header; null for a remote model. */
  gguf: GgufSummary | null;
  /** The upstream servers of a remote model; null for a local one. */
  remote: RemoteBinding | null;
  /** The catalog model this file is, when it is one. */
  catalog: CatalogModel | null;
  /** How the entry was found (`remote`: bound to upstream servers). */
  origin: "binding" | "catalog" | "scan" | "remote";
}

/** A local model: one whose GGUF file this machine reads. */
export type LocalModelEntry = ModelEntry & { gguf: GgufSummary; remote: null };

export function isLocal(entry: ModelEntry): entry is LocalModelEntry {
  return entry.gguf !== null;
}

/** The entry as a local model; a remote one here is a routing bug (the engine router sends those elsewhere). */
export function asLocal(entry: ModelEntry): LocalModelEntry {
  if (!isLocal(entry)) throw new ServiceError("server", `the model '${entry.id}' is served by upstream servers, not by this machine's engine`, { code: "internal_error" });
  return entry;
}

/**
 * What is known of a model whichever side serves it: a local file's header, or what a
 * remote model's configuration and upstreams say (architecture `remote`).
 */
export function modelFacts(entry: ModelEntry): { architecture: string; name: string | null; contextLength: number | null; embeddingLength: number | null; parameters: number | null; quantization: string | null } {
  if (entry.gguf) return entry.gguf;
  return { architecture: "remote", name: entry.remote?.upstreams[0]?.model ?? null, contextLength: entry.remote?.contextLength ?? null, embeddingLength: entry.remote?.dimensions ?? null, parameters: null, quantization: null };
}

/** Raised at startup for a configuration that cannot serve what it promises. */
export class ModelConfigError extends Error {
  override name = "ModelConfigError";
}

/** A file that is not a usable GGUF model (missing, unreadable, malformed or hostile); the message says why, for logs. */
export class ModelFileError extends ModelConfigError {
  override name = "ModelFileError";
}

/** A file that cannot be what it is declared to be (by the catalog or the caller), e.g. a `rerank` model without a classification head. */
export class ModelTypeMismatchError extends ModelConfigError {
  override name = "ModelTypeMismatchError";
}

/**
 * Why `gguf` cannot serve as a `declared` model, or null. An explicit declaration (the
 * caller's) must match exactly; a catalog's only where reranking is concerned, since
 * nothing but a classification head lets llama.cpp rank.
 */
export function typeMismatch(declared: ModelType, gguf: GgufSummary, explicit: boolean): string | null {
  if (declared === gguf.type) return null;
  if (declared === "rerank") {
    return `${gguf.path} is declared a rerank model, but llama.cpp cannot rank with it: it has no classification head (no cls.weight or cls.output.weight tensor, as a reranker converted from a *ForSequenceClassification checkpoint has); it reads as a ${gguf.type} model`;
  }
  if (gguf.type === "rerank") {
    return `${gguf.path} is declared a ${declared} model, but it is a reranker (it has a classification head); it serves POST /v1/rerank only`;
  }
  return explicit ? `${gguf.path} is declared a ${declared} model, but it reads as a ${gguf.type} model (${gguf.architecture})` : null;
}

/** Turns a file name into an id: `Qwen2.5-7B-Instruct-Q4_K_M.gguf` → `qwen2.5-7b-instruct-q4_k_m`. */
export function idFromFilename(file: string): string {
  return path
    .basename(file, path.extname(file))
    .toLowerCase()
    .replace(/[^a-z0-9._:-]+/g, "-")
    .replace(/^[^a-z0-9]+/, "")
    .slice(0, 128);
}

async function findGgufFiles(dir: string, depth = 3): Promise<string[]> {
  let entries;
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw error;
  }
  const found: string[] = [];
  for (const entry of entries) {
    const full = path.join(dir, entry.name);
    if (entry.isFile() && entry.name.toLowerCase().endsWith(".gguf")) found.push(full);
    else if (entry.isDirectory() && depth > 1 && !entry.name.startsWith(".")) found.push(...(await findGgufFiles(full, depth - 1)));
  }
  return found.sort();
}

export class ModelRegistry {
  private readonly byName = new Map<string, ModelEntry>();
  private readonly list: ModelEntry[];

  private constructor(
    entries: ModelEntry[],
    readonly catalog: Catalog,
    private readonly ggufWorkerModule: string | undefined,
  ) {
    this.list = entries;
    for (const entry of entries) {
      for (const name of [entry.id, ...entry.aliases]) this.byName.set(name, entry);
    }
  }

  /** Every model, in the order found (bindings first). */
  get entries(): readonly ModelEntry[] {
    return this.list;
  }

  /**
   * Builds the registry. Throws `ModelConfigError` when a binding points at a missing
   * or unreadable file, or an alias is bound to a model of the wrong type or width.
   */
  static async build(options: {
    modelsDir: string;
    catalog: Catalog;
    bindings: Record<string, string>;
    /** Remote models by id (or alias): served by upstream servers. */
    remote?: Record<string, RemoteModelSpec>;
    /** Told about files in the models directory that are skipped. */
    onWarning?: (message: string) => void;
    /** URL of `gguf-summary` for its reader worker (bundled builds); default: beside this module. */
    ggufWorkerModule?: string;
  }): Promise<ModelRegistry> {
    const { catalog, bindings } = options;
    const catalogByFile = new Map(catalog.models.map((m) => [m.source.filename.toLowerCase(), m]));
    const catalogById = new Map(catalog.models.map((m) => [m.id, m]));
    const aliasById = new Map(catalog.aliases.map((a) => [a.id, a]));
    const byPath = new Map<string, ModelEntry>();
    const taken = new Set<string>();

    // Every header is read up front, in one worker (see readGgufSummaries).
    const scanned = (await findGgufFiles(options.modelsDir)).filter((file) => !Object.values(bindings).includes(file));
    const files = [...new Set([...Object.values(bindings), ...scanned])];
    const summaries = new Map((await readGgufSummaries(files, options.ggufWorkerModule)).map((result, i) => [files[i]!, result]));

    const addFile = (file: string, id: string, origin: ModelEntry["origin"]): ModelEntry => {
      const existing = byPath.get(file);
      if (existing) return existing;
      const result = summaries.get(file);
      if (!result?.ok) throw new ModelFileError(`cannot read model file ${file}: ${result?.error ?? "not read"}`);
      const gguf: GgufSummary = result.summary;
      const catalogModel = catalogById.get(id) ?? catalogByFile.get(path.basename(file).toLowerCase()) ?? null;
      const problem = catalogModel ? typeMismatch(catalogModel.type, gguf, false) : null;
      if (problem) throw new ModelTypeMismatchError(`${problem} (catalog model ${catalogModel?.id})`);
      const entry: ModelEntry = { id, type: gguf.type, aliases: [], gguf, remote: null, catalog: catalogModel, origin };
      byPath.set(file, entry);
      taken.add(id);
      return entry;
    };

    // 0. Remote models: bound explicitly, they win over everything on disk as bindings do.
    const remoteEntries: ModelEntry[] = [];
    for (const [name, spec] of Object.entries(options.remote ?? {})) {
      if (name in bindings) throw new ModelConfigError(`--model ${name} is bound both to a local file and to upstream servers; choose one`);
      const entry = remoteEntry(name, spec, aliasById.get(name));
      remoteEntries.push(entry);
      taken.add(name);
    }
    // 1. Explicit bindings first: they win over everything found on disk.
    const aliasBindings: [string, string][] = [];
    for (const [name, file] of Object.entries(bindings)) {
      if (!MODEL_ID.test(name)) throw new ModelConfigError(`--model ${name}: ids are lowercase letters, digits and . _ : -`);
      if (aliasById.has(name)) aliasBindings.push([name, file]);
      else addFile(file, name, "binding");
    }
    for (const [name, file] of aliasBindings) {
      const entry = addFile(file, uniqueId(idFromFilename(file), taken), "binding");
      entry.aliases.push(name);
    }
    // 2. Everything in the models directory.
    for (const file of scanned) {
      if (byPath.has(file)) continue;
      const catalogModel = catalogByFile.get(path.basename(file).toLowerCase());
      const wanted = catalogModel && !taken.has(catalogModel.id) ? catalogModel.id : uniqueId(idFromFilename(file), taken);
      try {
        addFile(file, wanted, catalogModel ? "catalog" : "scan");
      } catch (error) {
        // A stray unreadable file in the folder must not stop the service; bindings must.
        options.onWarning?.(`skipping ${file}: ${(error as Error).message}`);
      }
    }
    const entries = [...remoteEntries, ...byPath.values()];
    // 3. Aliases promise a type (and a width). An explicit binding that breaks the
    //    promise stops startup; a catalog alias whose file breaks it is left unbound.
    for (const [name, file] of aliasBindings) {
      const problem = aliasMismatch(aliasById.get(name)!, byPath.get(file)!);
      if (problem) throw new ModelConfigError(problem);
    }
    for (const alias of catalog.aliases) {
      if (aliasBindings.some(([name]) => name === alias.id) || taken.has(alias.id)) continue;
      const target = entries.find((e) => e.id === alias.target);
      if (!target) continue;
      const problem = aliasMismatch(alias, target);
      if (problem) options.onWarning?.(problem);
      else target.aliases.push(alias.id);
    }
    return new ModelRegistry(entries, catalog, options.ggufWorkerModule);
  }

  /**
   * Adds a GGUF file at run time (a finished download, a file the user picked): read in
   * the header worker, named after its catalog entry or file name (or `id`), and given
   * the catalog aliases it can serve and that nothing else serves yet. A file already
   * registered is returned as it is. Throws `ModelFileError` (a `ModelConfigError`) for a
   * file that is not a usable GGUF model, `ModelConfigError` for a bad or taken id, and
   * `ModelTypeMismatchError` when the file cannot be what `type` (or its catalog entry)
   * declares, e.g. a `rerank` model without a classification head.
   */
  async addFile(file: string, options: { id?: string; origin?: ModelEntry["origin"]; type?: ModelType } = {}): Promise<ModelEntry> {
    const existing = this.list.filter(isLocal).find((e) => e.gguf.path === file);
    if (existing) {
      const problem = options.type ? typeMismatch(options.type, existing.gguf, true) : null;
      if (problem) throw new ModelTypeMismatchError(problem);
      return existing;
    }
    const [result] = await readGgufSummaries([file], this.ggufWorkerModule);
    if (!result?.ok) throw new ModelFileError(`cannot read model file ${file}: ${result?.error ?? "not read"}`);
    const catalogModel = this.catalog.models.find((m) => m.source.filename.toLowerCase() === path.basename(file).toLowerCase()) ?? null;
    const declared = options.type ?? catalogModel?.type;
    const problem = declared ? typeMismatch(declared, result.summary, options.type !== undefined) : null;
    if (problem) throw new ModelTypeMismatchError(catalogModel && !options.type ? `${problem} (catalog model ${catalogModel.id})` : problem);
    const taken = new Set(this.byName.keys());
    if (options.id !== undefined) {
      if (!MODEL_ID.test(options.id)) throw new ModelConfigError(`'${options.id}': ids are lowercase letters, digits and . _ : -`);
      if (taken.has(options.id)) throw new ModelConfigError(`the id '${options.id}' is already in use`);
    }
    const id = options.id ?? (catalogModel && !taken.has(catalogModel.id) ? catalogModel.id : uniqueId(idFromFilename(file), taken));
    const entry: ModelEntry = { id, type: result.summary.type, aliases: [], gguf: result.summary, remote: null, catalog: catalogModel, origin: options.origin ?? (catalogModel ? "catalog" : "scan") };
    for (const alias of this.catalog.aliases) {
      if (alias.target === catalogModel?.id && !this.byName.has(alias.id) && aliasMismatch(alias, entry) === null) entry.aliases.push(alias.id);
    }
    this.list.push(entry);
    for (const name of [entry.id, ...entry.aliases]) this.byName.set(name, entry);
    return entry;
  }

  /**
   * Adds a remote model at run time (the admin API). Throws `ModelConfigError` for an id that
   * is taken or malformed, or a spec that breaks its alias's promise.
   */
  addRemote(id: string, spec: RemoteModelSpec): ModelEntry {
    if (this.byName.has(id)) throw new ModelConfigError(`the id '${id}' is already in use`);
    const entry = remoteEntry(id, spec, this.catalog.aliases.find((a) => a.id === id));
    entry.origin = "remote";
    this.list.unshift(entry);
    this.byName.set(id, entry);
    return entry;
  }

  /** Removes a remote model added at run time; false when there is none by that id. */
  removeRemote(id: string): boolean {
    const entry = this.byName.get(id);
    if (!entry?.remote || entry.id !== id) return false;
    this.list.splice(this.list.indexOf(entry), 1);
    for (const name of [entry.id, ...entry.aliases]) this.byName.delete(name);
    return true;
  }

  /**
   * The model a request that names none gets: `preferred` (the configured default, e.g.
   * `svc-merlion-13b`) when it is available with that type, else the first model of that
   * type, so a machine with only a starter model still answers. With no model of that
   * type at all, `preferred` (whose lookup then fails with a hint to pull it).
   */
  defaultName(type: ModelType, preferred: string): string {
    const wanted = this.byName.get(preferred);
    if (wanted?.type === type) return preferred;
    return this.list.find((e) => e.type === type)?.id ?? preferred;
  }

  /** The entry for an id or alias, or undefined. */
  find(name: string): ModelEntry | undefined {
    return this.byName.get(name);
  }

  /** The entry for an id or alias, or a 404 `model_not_found` that says how to get it. */
  resolve(name: string, param = "model"): ModelEntry {
    const entry = this.byName.get(name);
    if (entry) return entry;
    const alias = this.catalog.aliases.find((a) => a.id === name);
    const target = alias?.target ?? this.catalog.models.find((m) => m.id === name)?.id;
    const hint = target
      ? ` It is not downloaded: run \`pustaka models pull ${target}\`, or bind a local file with --model ${name}=PATH.`
      : " See GET /v1/models for the models available.";
    throw notFound(`The model '${name}' does not exist or is not available.${hint}`, "model_not_found", param);
  }
}

/** Why `entry` cannot serve `alias`, or null when it can. */
function aliasMismatch(alias: CatalogAlias, entry: ModelEntry): string | null {
  const facts = modelFacts(entry);
  const what = entry.gguf?.path ?? `the remote model '${entry.id}'`;
  if (alias.type === "embedding" && alias.dimensions !== undefined && facts.embeddingLength !== null && facts.embeddingLength !== alias.dimensions) {
    return `${alias.id} must resolve to a model with ${alias.dimensions}-dimension embeddings, but ${what} produces ${facts.embeddingLength}`;
  }
  if (alias.type === "embedding" && alias.dimensions !== undefined && facts.embeddingLength === null && entry.gguf) {
    return `${alias.id} must resolve to a model with ${alias.dimensions}-dimension embeddings, but ${what} produces unknown`;
  }
  if (alias.type === "chat" && entry.type !== "chat") {
    return `${alias.id} is a chat model alias, but ${what} is ${entry.type === "embedding" ? "an embedding-only" : `a ${entry.type}`} ${facts.architecture} model`;
  }
  if ((alias.type === "rerank") !== (entry.type === "rerank")) {
    return `${alias.id} is a ${alias.type} model alias, but ${what} is a ${entry.type} model`;
  }
  return null;
}

/**
 * The entry of a remote model. An id that is a catalog alias (`svc-merlion-13b`) takes the
 * alias's type and must keep its promise (a configured width for `svc-embed-1024`); the
 * width the upstream really produces is checked when it first answers.
 */
function remoteEntry(id: string, spec: RemoteModelSpec, alias: CatalogAlias | undefined): ModelEntry {
  if (!MODEL_ID.test(id)) throw new ModelConfigError(`--model ${id}: ids are lowercase letters, digits and . _ : -`);
  if (spec.upstreams.length === 0) throw new ModelConfigError(`the remote model '${id}' has no upstream server`);
  if (alias && spec.type !== undefined && spec.type !== alias.type) throw new ModelConfigError(`${id} is a ${alias.type} model alias; it cannot be bound to a remote ${spec.type} model`);
  const type = spec.type ?? alias?.type ?? "chat";
  const ids = new Set<string>();
  for (const upstream of spec.upstreams) {
    if (ids.has(upstream.id)) throw new ModelConfigError(`the remote model '${id}' names two upstreams '${upstream.id}'`);
    ids.add(upstream.id);
  }
  const entry: ModelEntry = {
    id,
    type,
    aliases: [],
    gguf: null,
    // An alias's promised width is what the upstream must produce (checked on every answer).
    remote: { upstreams: spec.upstreams, contextLength: spec.contextLength ?? null, dimensions: spec.dimensions ?? alias?.dimensions ?? null },
    catalog: null,
    origin: "remote",
  };
  const problem = alias ? aliasMismatch(alias, entry) : null;
  if (problem) throw new ModelConfigError(problem);
  return entry;
}

function uniqueId(base: string, taken: Set<string>): string {
  const root = base || "model";
  let id = root;
  for (let n = 2; taken.has(id); n++) id = `${root}-${n}`;
  return id;
}
