/**
 * Keeps this replica's in-memory corpus indexes in step with what other replicas commit:
 * follows the corpus change feed (store/corpus-feed.ts) from where it joined, woken by the
 * bus's notifications and by a poll (every `pollMs`, and after the bus reconnects), and
 * applies each change made elsewhere to the indexes it has in memory: a committed
 * document's chunks are added, a deleted document's removed, a deleted corpus's index
 * dropped. Indexes not in memory need nothing: they are built from the store when first
 * used. A follower that fell behind the feed's pruning refreshes every loaded index whole.
 */
import type { Logger } from "pino";
import { CORPUS_CHANNEL, type CorpusChangeRow, type CorpusFeed } from "../../store/corpus-feed.js";
import type { MessageBus } from "../../store/message-bus.js";
import type { CorpusIndexes } from "./corpus-indexes.js";

export interface CorpusFollowerOptions {
  pollMs?: number;
  logger?: Logger;
  /** Each change applied here, with how long after its commit (tests, metrics). */
  onApplied?: (change: CorpusChangeRow, lagMs: number) => void;
}

export class CorpusFollower {
  private seq = 0;
  private running: Promise<void> | null = null;
  private again = false;
  private timer: NodeJS.Timeout | null = null;
  private readonly unsubscribe: (() => void)[] = [];
  private closed = false;

  constructor(
    private readonly feed: CorpusFeed,
    private readonly bus: MessageBus,
    private readonly indexes: CorpusIndexes,
    private readonly options: CorpusFollowerOptions = {},
  ) {}

  /** Joins the feed at its head (the indexes are built from the store as it is now). */
  async start(): Promise<void> {
    this.seq = await this.feed.head();
    this.unsubscribe.push(this.bus.subscribe(CORPUS_CHANNEL, () => void this.poll()));
    this.unsubscribe.push(this.bus.onReconnect(() => void this.poll()));
    this.timer = setInterval(() => void this.poll(), this.options.pollMs ?? 2_000);
    this.timer.unref();
  }

  /** Reads and applies what is new; calls made while one runs are folded into one more run. */
  poll(): Promise<void> {
    if (this.closed) return Promise.resolve();
    if (this.running) {
      this.again = true;
      return this.running;
    }
    this.running = (async () => {
      do {
        this.again = false;
        try {
          await this.catchUp();
        } catch (error) {
          this.options.logger?.warn({ err: error }, "following the corpus change feed failed; retrying");
          break;
        }
      } while (this.again && !this.closed);
    })().finally(() => {
      this.running = null;
    });
    return this.running;
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
    for (const off of this.unsubscribe.splice(0)) off();
    await this.running;
  }

  /** Where the follower is in the feed. */
  get position(): number {
    return this.seq;
  }

  private async catchUp(): Promise<void> {
    const tail = await this.feed.tail();
    if (this.seq > 0 && tail > this.seq + 1) {
      // Changes this replica never saw were pruned: rebuild its view of every loaded corpus.
      this.seq = await this.feed.head();
      for (const corpusId of this.indexes.loaded()) await this.indexes.refresh(corpusId);
      this.options.logger?.warn({ corpora: this.indexes.loaded().length }, "fell behind the corpus change feed; refreshed the loaded indexes");
      return;
    }
    for (;;) {
      const rows = await this.feed.since(this.seq);
      for (const row of rows) {
        if (row.origin !== this.feed.origin) await this.apply(row);
        this.seq = row.seq;
        this.options.onApplied?.(row, Date.now() - row.atMs);
      }
      if (rows.length < 1000 || this.closed) return;
    }
  }

  private async apply(row: CorpusChangeRow): Promise<void> {
    if (row.change === "corpus_removed") await this.indexes.drop(row.corpusId);
    else if (row.change === "removed" && row.documentId) await this.indexes.removeDocument(row.corpusId, row.documentId);
    else if (row.change === "indexed" && row.documentId) await this.indexes.applyIndexed(row.corpusId, row.documentId);
  }
}
