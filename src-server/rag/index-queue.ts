/**
 * Indexing work shared by replicas: a durable pg-boss queue in the shared Postgres (its own
 * `pgboss` schema). Uploading queues a document (its row says `queued`) and sends a job
 * naming it; any replica's worker takes the job, claims the document (a conditional update,
 * so one replica wins) and indexes it. Jobs survive restarts of every replica; a failing job
 * is retried with backoff.
 *
 * What pg-boss cannot know is that a replica died mid-document (its job stays active until
 * it expires, an hour later): the replicas' heartbeats can. `sweep()` (run by one replica
 * at a time) hands the documents of replicas without a heartbeat back to the queue, and
 * re-sends jobs for documents queued long ago whose job was lost (a replica that stopped
 * between storing an upload and sending its job). The stale job of a dead replica later
 * finds its document claimed or indexed by another and does nothing; the document is
 * committed once (`ChunkStore.commitDocument` with a claimant).
 *
 * A lone server on SQLite needs none of this: its indexer takes documents straight from
 * the `documents` table.
 */
import { createRequire } from "node:module";
import type { Logger } from "pino";
import type PgBoss from "pg-boss";
import type { MessageBus } from "../store/message-bus.js";

export const INDEX_QUEUE = "index-document";

export interface IndexJobs {
  /**
   * Starts taking jobs, up to `batchSize` at a time: `handle` indexes those documents (and
   * must not throw for the documents' own faults; when it throws, every job of the batch is
   * retried).
   */
  start(handle: (documentIds: string[]) => Promise<void>, batchSize?: number): Promise<void>;
  /** Hands documents (already `queued` in the store) to the replicas' workers. */
  send(documentIds: readonly string[]): Promise<void>;
  /** Documents with a job waiting or running. */
  pending(): Promise<Set<string>>;
  /** Stops taking jobs; the one running finishes (within `timeoutMs`) or is left to expire and retry. */
  stop(timeoutMs: number): Promise<void>;
}

const WAKE_CHANNEL = "pustaka_index_jobs";

export class PgBossIndexJobs implements IndexJobs {
  private readonly boss: PgBoss;
  private started = false;
  private workerId: string | null = null;
  private unsubscribe: (() => void) | null = null;

  /**
   * `bus`: replicas are told when jobs are sent, so an idle worker takes one at once rather
   * than at its next poll (pg-boss polls every `pollingIntervalSeconds`).
   */
  constructor(
    url: string,
    private readonly logger: Logger,
    options: { pollingIntervalSeconds?: number; expireInSeconds?: number } = {},
    private readonly bus: MessageBus | null = null,
  ) {
    // pg-boss (and the Postgres driver) load only for Postgres: a SQLite server never needs them.
    const PgBossClass = createRequire(import.meta.url)("pg-boss") as typeof PgBoss;
    this.boss = new PgBossClass({ connectionString: url, schema: "pgboss", max: 3, application_name: "pustaka-queue", schedule: false, supervise: true, migrate: true });
    this.options = { pollingIntervalSeconds: options.pollingIntervalSeconds ?? 1, expireInSeconds: options.expireInSeconds ?? 3600 };
    // Lost connections are retried by pg-boss itself; they are logged, never thrown.
    this.boss.on("error", (error) => this.logger.warn({ err: error }, "indexing queue: pg-boss reported an error"));
  }

  private readonly options: { pollingIntervalSeconds: number; expireInSeconds: number };

  async start(handle: (documentIds: string[]) => Promise<void>, batchSize = 1): Promise<void> {
    await this.boss.start();
    this.started = true;
    await this.boss.createQueue(INDEX_QUEUE, { name: INDEX_QUEUE, policy: "standard", retryLimit: 10, retryDelay: 5, retryBackoff: true, expireInSeconds: this.options.expireInSeconds });
    // One batch at a time per replica, as the desktop's indexer: parsing and embedding use every
    // core. A batch of several documents is indexed as the lone server's pipeline does (parsed
    // ahead, embedded together, committed in groups).
    this.workerId = await this.boss.work<{ documentId: string }>(INDEX_QUEUE, { batchSize: Math.max(1, batchSize), pollingIntervalSeconds: this.options.pollingIntervalSeconds }, async (jobs) => {
      const documentIds = [...new Set(jobs.map((job) => job.data?.documentId).filter((id): id is string => typeof id === "string"))];
      if (documentIds.length > 0) await handle(documentIds);
      // pg-boss waits out its polling interval after every fetch: after a job, look again at once
      // (an empty queue then waits as usual).
      this.wake();
    });
    this.unsubscribe = this.bus?.subscribe(WAKE_CHANNEL, () => this.wake()) ?? null;
  }

  /** Has this replica's worker look for a job now. */
  private wake(): void {
    if (this.workerId) this.boss.notifyWorker(this.workerId);
  }

  async send(documentIds: readonly string[]): Promise<void> {
    if (documentIds.length === 0) return;
    await this.boss.insert(documentIds.map((documentId) => ({ name: INDEX_QUEUE, data: { documentId }, retryLimit: 10, retryDelay: 5, retryBackoff: true, expireInSeconds: this.options.expireInSeconds })));
    this.wake();
    this.bus?.publish(WAKE_CHANNEL, String(documentIds.length)).catch((error: unknown) => this.logger.warn({ err: error }, "indexing queue: the other replicas were not woken (they will poll)"));
  }

  /** Documents with a job waiting, retrying or running. */
  async pending(): Promise<Set<string>> {
    const { rows } = await this.boss.getDb().executeSql("SELECT DISTINCT data->>'documentId' AS id FROM pgboss.job WHERE name = $1 AND state IN ('created', 'retry', 'active')", [INDEX_QUEUE]);
    return new Set((rows as { id: string | null }[]).map((r) => r.id).filter((id): id is string => typeof id === "string"));
  }

  async stop(timeoutMs: number): Promise<void> {
    this.unsubscribe?.();
    this.unsubscribe = null;
    if (!this.started) return;
    this.started = false;
    this.workerId = null;
    await this.boss.stop({ graceful: true, timeout: Math.max(1000, timeoutMs), wait: true });
  }
}
