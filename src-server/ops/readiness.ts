/**
 * Readiness (`GET /readyz`), what a load balancer asks before sending a replica traffic:
 * the store answers, its schema is the one this build expects, the key provider wraps
 * and unwraps, and the replica is not draining. Liveness (`/healthz`) only says the
 * process serves; a replica can be live and not ready (Postgres restarting, shutting down).
 * Reasons name the failed check, never an address or a secret: the endpoint is public.
 */
import { randomBytes } from "node:crypto";
import type { KeyProvider } from "../security/key-provider.js";
import type { SqlDatabase } from "../store/sql-database.js";

export interface CheckResult {
  name: string;
  ok: boolean;
  /** Why not (when not ok): a short, public reason. */
  reason?: string;
  ms: number;
}

export interface ReadinessReport {
  status: "ready" | "not_ready" | "draining";
  replica: string;
  checks: CheckResult[];
}

interface Check {
  name: string;
  run(): Promise<void>;
}

const CHECK_TIMEOUT_MS = 2_000;

function withTimeout<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer in ${ms} ms`)), ms);
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}

export class Readiness {
  private draining = false;
  private readonly checks: Check[];

  constructor(
    readonly replica: string,
    store: SqlDatabase,
    expectedSchema: number,
    keyProvider: KeyProvider,
  ) {
    this.checks = [
      {
        name: "database",
        run: () => store.ping(),
      },
      {
        name: "schema",
        run: async () => {
          const version = await store.schemaVersion();
          if (version !== expectedSchema) throw new Error(`schema version ${version}, this build needs ${expectedSchema}`);
        },
      },
      {
        name: "key_provider",
        run: async () => {
          const probe = randomBytes(32);
          const back = await keyProvider.unwrapKey(await keyProvider.wrapKey(probe));
          if (!back.equals(probe)) throw new Error("a wrapped key did not unwrap to itself");
        },
      },
    ];
  }

  /** From now on the replica reports `draining` (503), so the balancer stops sending it work. */
  drain(): void {
    this.draining = true;
  }

  get isDraining(): boolean {
    return this.draining;
  }

  async report(): Promise<ReadinessReport> {
    const checks = await Promise.all(
      this.checks.map(async (check): Promise<CheckResult> => {
        const started = performance.now();
        try {
          await withTimeout(check.run(), CHECK_TIMEOUT_MS);
          return { name: check.name, ok: true, ms: Math.round(performance.now() - started) };
        } catch (error) {
          return { name: check.name, ok: false, reason: publicReason(check.name, error), ms: Math.round(performance.now() - started) };
        }
      }),
    );
    const status = this.draining ? "draining" : checks.every((c) => c.ok) ? "ready" : "not_ready";
    return { status, replica: this.replica, checks };
  }
}

/** The database's own messages may carry host names; the schema check's is ours. */
function publicReason(check: string, error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  if (check === "schema" || /^no answer in/.test(message)) return message;
  if (check === "database") return "the database does not answer";
  return "the key provider failed a wrap and unwrap";
}
