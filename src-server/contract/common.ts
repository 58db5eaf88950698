/**
 * The API contract, part 1: what every route shares. Types only: the renderer and other
 * TypeScript clients import this folder (and nothing else of the server), so no value
 * may be exported from it. Wire shapes are snake_case as sent; times are Unix seconds.
 */

/** `{"error":{...}}`, OpenAI's error shape, on every failure. */
export interface ApiErrorBody {
  error: {
    message: string;
    /** `invalid_request_error`, `authentication_error`, `permission_error`, `not_found_error`, `conflict_error`, `rate_limit_error`, `server_error`, `service_unavailable_error`. */
    type: string;
    /** The request field at fault, dotted (`messages.0.content`), or null. */
    param: string | null;
    /** Stable snake_case code clients branch on (`model_not_found`, `corpus_not_ready`, ...). */
    code: string | null;
  };
}

/** Paginated lists (`?limit&after&before&order`). */
export interface ListPage<T> {
  object: "list";
  data: T[];
  first_id: string | null;
  last_id: string | null;
  has_more: boolean;
}

/** `GET /healthz` (no key needed). */
export interface Health {
  status: "ok";
  version: string;
  engine: {
    backend: string;
    /** The GPU backend in use (`cuda`, `vulkan`, `metal`), false for the CPU, null until llama.cpp starts (with the first model). */
    gpu: string | false | null;
    threads: number;
    /**
     * The llama.cpp build that serves (`local`: built and self-tested at install; `prebuilt`:
     * node-llama-cpp's binaries), the CPU variant ggml picked (null until the first model
     * loads, or for a build without variants), and why. Absent from servers before 0.1.
     */
    build?: { type: "local" | "prebuilt"; variant: string | null; reason: string } | null;
    /** Loaded models by id (no file paths: `/healthz` needs no credential). */
    loadedModels: { id: string; kinds: ("chat" | "embedding" | "rerank")[]; activeLeases: number }[];
  };
}

export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
}
