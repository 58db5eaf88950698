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

/** A remote model as its administrator sees it (`GET /v1/admin/remote-models`). */
export interface RemoteModel {
  id: string;
  object: "remote_model";
  type: ModelType;
  /** `config`: from the configuration file or command line (read-only through the API); `admin`: added through the API. */
  source: "config" | "admin";
  context_length: number | null;
  dimensions: number | null;
  created_at: number | null;
  upstreams: {
    id: string;
    url: string;
    model: string;
    /** Whether a key is sent; the key itself is never shown. */
    api_key: boolean;
    client_certificate: boolean;
    health: UpstreamHealth;
    in_flight: number;
    queued: number;
    requests: number;
    failures: number;
    last_error: string | null;
  }[];
}

/** `POST /v1/admin/remote-models`: secrets go in once and are sealed; `GET` never returns them. */
export interface CreateRemoteModelRequest {
  id: string;
  type?: ModelType;
  upstreams: {
    /** Base URL of the OpenAI-compatible API (`https://gpu1.example:8000/v1`); `#model` may follow. */
    url: string;
    model?: string;
    name?: string;
    api_key?: string;
    tls?: { ca_pem?: string; cert_pem?: string; key_pem?: string };
  }[];
  context_length?: number;
  dimensions?: number;
}

/** `POST /v1/admin/remote-models/test` and `…/{id}/test`: each replica's answer to `GET /models`. */
export interface RemoteModelTest {
  object: "remote_model.test";
  ok: boolean;
  upstreams: { id: string; url: string; ok: boolean; ms: number; models: string[]; serves_model: boolean | null; error: string | null }[];
}
