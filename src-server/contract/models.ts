/** The API contract: models (OpenAI's model objects plus what really serves them). Types only. */

/** `rerank`: a cross-encoder that scores query–document pairs (`POST /v1/rerank`). */
export type ModelType = "chat" | "embedding" | "rerank";

export interface Model {
  /** The name asked for: a canonical id or an alias. */
  id: string;
  object: "model";
  created: number;
  owned_by: "pustaka";
  type: ModelType;
  /** The canonical id this name resolves to. */
  root: string;
  aliases: string[];
  /** Tokens one request may use here (prompt and completion): the configured context, capped by the model's. */
  context_length: number | null;
  /** The context the model was trained with (its GGUF's), which a larger configured context could reach. */
  max_context_length: number | null;
  /** Embedding models only: width of the vectors. */
  dimensions?: number | null;
  languages: string[];
  license: string | null;
  /** True for the model used when a request names none (per type). */
  is_default: boolean;
  /** Where the model runs: a GGUF file on this machine, or upstream servers (a remote model). */
  backing: LocalBacking | RemoteBacking;
}

export interface LocalBacking {
  kind: "local";
  /** The absolute path for administrators (`workspaces.manage`); the file's name for everyone else. */
  file: string;
  bytes: number;
  name: string | null;
  architecture: string;
  parameters: string;
  quantization: string | null;
  origin: "binding" | "catalog" | "scan";
  sha256: string | null;
}

/** A replica's state as Pustaka's router sees it. */
export type UpstreamHealth = "healthy" | "ejected" | "down" | "unknown";

export interface RemoteBacking {
  kind: "remote";
  architecture: "remote";
  upstreams: RemoteUpstream[];
}

export interface RemoteUpstream {
  /** `r1`, `r2`, … (or the configured name). */
  id: string;
  /** Base URL of the upstream API: administrators (`workspaces.manage`) only, null for everyone else. */
  url: string | null;
  /** The model name the upstream serves. */
  model: string;
  health: UpstreamHealth;
  in_flight: number;
  /** Why it is ejected or down (administrators only). */
  last_error: string | null;
}

export interface ModelList {
  object: "list";
  data: Model[];
}

/** A catalog model (downloadable from its publisher) and whether it is on disk. */
export interface CatalogModel {
  id: string;
  object: "catalog.model";
  type: ModelType;
  name: string;
  description: string;
  languages: string[];
  license: string;
  architecture: string;
  parameters: string;
  quantization: string;
  context_length: number;
  dimensions: number | null;
  /** Aliases that resolve to it (`svc-merlion-13b`, `svc-embed-1024`). */
  aliases: string[];
  /** Where it comes from: the publisher's URL, or the Python package index (`pip`). */
  source: "url" | "pip";
  /** One of the starter pair (small, fetched through pip). */
  starter: boolean;
  bytes: number | null;
  installed: boolean;
}

export interface CatalogList {
  object: "list";
  data: CatalogModel[];
}

export type PullStatus = "queued" | "downloading" | "verifying" | "converting" | "done" | "failed" | "cancelled";

/** A model download (admin: `workspaces.manage`). */
export interface ModelPull {
  id: string;
  object: "model.pull";
  /** Catalog ids fetched by this pull (the starter pull fetches two). */
  models: string[];
  /** `catalog`: from the publisher over HTTPS; `starter`: the starter pair through pip. */
  source: "catalog" | "starter";
  status: PullStatus;
  /** What is happening now, in words (e.g. "downloading bge-m3-Q8_0.gguf"). */
  stage: string;
  received_bytes: number;
  /** Null while unknown. */
  total_bytes: number | null;
  error: { code: string; message: string } | null;
  created_at: number;
  finished_at: number | null;
}

/** `POST /v1/models/pulls`: a catalog id or alias, or the starter pair. */
export type CreatePullRequest = { model: string } | { starter: true };

/** Events of `GET /v1/models/pulls/events`: every pull's state as it changes. */
export type PullEvent = { object: "model.pull.snapshot"; data: ModelPull[] } | { object: "model.pull.updated"; pull: ModelPull };

/** `POST /v1/models/files` (admin): use a GGUF file already on this machine. */
export interface RegisterModelFileRequest {
  path: string;
  /** The id to list it under; default: from the file name. */
  id?: string;
  /**
   * What the file is meant to be; it must agree with what the GGUF can do (a `rerank`
   * model needs a classification head) or the request fails with `model_type_mismatch`.
   * Default: decided from the file.
   */
  type?: ModelType;
}
