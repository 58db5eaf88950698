/**
 * Remote models: a model id served by one or more upstream OpenAI-compatible servers
 * (llama.cpp's llama-server, vLLM, Ollama, another Pustaka) instead of a local GGUF file.
 * What the registry and `/v1/models` know of them; the engine that talks to them is
 * `engine/remote/`.
 */
import { isLoopbackHost } from "../domain/loopback.js";
import type { ModelType } from "./gguf-summary.js";

/**
 * TLS to an upstream beyond the system's defaults: a private CA, and the client certificate
 * Pustaka presents (mutual TLS). PEM files on this machine (the configuration), or the PEM
 * text itself (the admin API, which keeps it sealed at rest).
 */
export interface UpstreamTls {
  /** Certificate authorities to trust instead of the system's (a private CA). */
  caFile?: string | undefined;
  /** The client certificate Pustaka presents, and its key. */
  certFile?: string | undefined;
  keyFile?: string | undefined;
  ca?: string | undefined;
  cert?: string | undefined;
  key?: string | undefined;
}

/** One replica of a remote model. */
export interface UpstreamTarget {
  /** `r1`, `r2`, … in configuration order: how logs, metrics, audit entries and the Models page name it. */
  id: string;
  /** Base URL of the OpenAI-compatible API, ending where `/chat/completions` follows (`http://gpu1:8080/v1`). Never holds credentials. */
  baseUrl: string;
  /** The model name sent upstream (`qwen2.5-7b-instruct`). */
  model: string;
  /**
   * The upstream's API key, read when a request is made (from the environment variable the
   * configuration names, or the sealed store); null: none. Kept out of every object that
   * is logged or returned.
   */
  apiKey: (() => string | undefined) | null;
  tls: UpstreamTls | null;
}

export interface RemoteBinding {
  upstreams: UpstreamTarget[];
  /** Tokens one request may use, when configured or learnt from an upstream; null: unknown. */
  contextLength: number | null;
  /**
   * Embedding width: configured, promised by the alias the model is bound to
   * (`svc-embed-1024`), or learnt from the upstream's first answer; null: unknown. Once known,
   * an answer of another width is refused (an index cannot mix widths).
   */
  dimensions: number | null;
}

/** A remote model as configured (config file, command line, admin API) before the registry takes it. */
export interface RemoteModelSpec {
  /** Default: the catalog alias's type when the id is an alias (`svc-embed-1024`), else `chat`. */
  type?: ModelType | undefined;
  upstreams: UpstreamTarget[];
  contextLength?: number | undefined;
  dimensions?: number | undefined;
}

/**
 * Reads `http(s)://host:port/v1#upstream-model` (the `--model ID=URL#model` form): the base URL
 * and the upstream's model name (default `fallbackModel`). Throws a message for the user when
 * the URL is not http(s), carries credentials, a query, or no host.
 */
export function parseUpstreamUrl(value: string, fallbackModel: string): { baseUrl: string; model: string } {
  const hash = value.indexOf("#");
  const raw = hash >= 0 ? value.slice(0, hash) : value;
  let model = fallbackModel;
  if (hash >= 0) {
    try {
      model = decodeURIComponent(value.slice(hash + 1));
    } catch {
      throw new Error(`'${value}': the upstream model name after '#' is not valid percent-encoding`);
    }
  }
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new Error(`'${raw}' is not a URL; expected http(s)://host:port/v1#upstream-model`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw new Error(`'${raw}': an upstream is reached over http or https, not ${url.protocol}`);
  if (url.username || url.password) throw new Error(`'${url.host}': no credentials in the URL; give the upstream's API key with --upstream-key ID=ENV_VAR (or apiKeyEnv in the config file)`);
  if (url.search) throw new Error(`'${raw}': the upstream's base URL takes no query string`);
  if (!model || model.length > 256) throw new Error(`'${value}': the upstream model name after '#' must be 1 to 256 characters`);
  return { baseUrl: `${url.origin}${url.pathname.replace(/\/+$/, "")}`, model };
}

/** True when the URL leaves this machine in plain HTTP (needs an explicit flag, as serving plain HTTP beyond loopback does). */
export function isPlainHttpBeyondLoopback(baseUrl: string): boolean {
  const url = new URL(baseUrl);
  return url.protocol === "http:" && !isLoopbackHost(url.hostname);
}

/**
 * True when `baseUrl` is allowed by `allowed`: host names or `host:port` (exact, case-insensitive),
 * `*.domain` suffixes, or URL prefixes (`https://gpu.example/v1`). Loopback is always allowed:
 * it does not leave the machine.
 */
export function upstreamAllowed(baseUrl: string, allowed: readonly string[]): boolean {
  const url = new URL(baseUrl);
  if (isLoopbackHost(url.hostname)) return true;
  const host = url.hostname.toLowerCase();
  // `gpu1:443` names https://gpu1 too: the port the URL leaves implicit.
  const port = url.port || (url.protocol === "https:" ? "443" : "80");
  return allowed.some((rule) => {
    const r = rule.trim().toLowerCase();
    if (r.startsWith("http://") || r.startsWith("https://")) return `${baseUrl}/`.toLowerCase().startsWith(r.endsWith("/") ? r : `${r}/`);
    if (r.startsWith("*.")) return host.endsWith(r.slice(1));
    return r === host || r === `${host}:${port}`;
  });
}

/** The configuration's remote models (`models.remote`) as the registry takes them: replicas named `r1`, `r2`, … unless named. */
export function remoteSpecsOf(
  remote: Record<string, { type?: ModelType | undefined; contextLength?: number | undefined; dimensions?: number | undefined; upstreams: { url: string; model?: string | undefined; name?: string | undefined; readApiKey?: (() => string | undefined) | undefined; tls?: UpstreamTls | undefined }[] }>,
): Record<string, RemoteModelSpec> {
  const out: Record<string, RemoteModelSpec> = {};
  for (const [id, model] of Object.entries(remote)) {
    out[id] = {
      type: model.type,
      contextLength: model.contextLength,
      dimensions: model.dimensions,
      upstreams: model.upstreams.map((upstream, i) => {
        const parsed = parseUpstreamUrl(upstream.url, id);
        return { id: upstream.name ?? `r${i + 1}`, baseUrl: parsed.baseUrl, model: upstream.model ?? parsed.model, apiKey: upstream.readApiKey ?? null, tls: upstream.tls ?? null };
      }),
    };
  }
  return out;
}

/** What may be shown of an upstream (logs, `/v1/models`, the admin API): never its key. */
export function upstreamView(upstream: UpstreamTarget): { id: string; url: string; model: string; api_key: boolean; client_certificate: boolean } {
  return { id: upstream.id, url: upstream.baseUrl, model: upstream.model, api_key: upstream.apiKey !== null, client_certificate: Boolean(upstream.tls?.certFile ?? upstream.tls?.cert) };
}
