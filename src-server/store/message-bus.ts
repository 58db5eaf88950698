/**
 * Messages between the replicas sharing a store: Postgres `LISTEN/NOTIFY` on one dedicated
 * connection per replica (`PgNotifyBus`), or in-process delivery for a lone SQLite server
 * (`LocalBus`). Delivery is at most once and only to replicas connected at the time: what
 * must not be lost is also in a table (the corpus change feed), and a bus that reconnects
 * tells its subscribers (`onReconnect`) so they catch up from there.
 */
import { EventEmitter } from "node:events";
import { sql } from "kysely";
import type pg from "pg";
import type { SqlDatabase } from "./sql-database.js";

export interface MessageBus {
  /** Sends `payload` (at most 7,900 bytes of UTF-8) to every replica, this one included. */
  publish(channel: string, payload: string): Promise<void>;
  subscribe(channel: string, listener: (payload: string) => void): () => void;
  /** Called after the bus lost its connection and has it again (messages may have been missed). */
  onReconnect(listener: () => void): () => void;
  close(): Promise<void>;
}

export const MAX_PAYLOAD_BYTES = 7_900;
const CHANNEL = /^pustaka_[a-z_]{1,40}$/;

function checkChannel(channel: string): string {
  if (!CHANNEL.test(channel)) throw new Error(`invalid bus channel ${channel}`);
  return channel;
}

export class LocalBus implements MessageBus {
  private readonly emitter = new EventEmitter();
  constructor() {
    this.emitter.setMaxListeners(0);
  }
  publish(channel: string, payload: string): Promise<void> {
    try {
      this.emitter.emit(checkChannel(channel), payload);
      return Promise.resolve();
    } catch (error) {
      return Promise.reject(error instanceof Error ? error : new Error(String(error)));
    }
  }
  subscribe(channel: string, listener: (payload: string) => void): () => void {
    this.emitter.on(checkChannel(channel), listener);
    return () => this.emitter.off(channel, listener);
  }
  onReconnect(): () => void {
    return () => {};
  }
  close(): Promise<void> {
    this.emitter.removeAllListeners();
    return Promise.resolve();
  }
}

export class PgNotifyBus implements MessageBus {
  private readonly emitter = new EventEmitter();
  private readonly reconnected = new EventEmitter();
  private client: pg.Client | null = null;
  private connecting: Promise<void> | null = null;
  private closed = false;
  private retryMs = 250;
  private timer: NodeJS.Timeout | null = null;
  private everConnected = false;

  constructor(
    private readonly url: string,
    private readonly store: SqlDatabase,
    private readonly onError: (error: unknown) => void = () => {},
  ) {
    this.emitter.setMaxListeners(0);
    this.reconnected.setMaxListeners(0);
  }

  /** Connects (and listens) now; later losses reconnect on their own. */
  async start(): Promise<void> {
    await this.connect();
  }

  async publish(channel: string, payload: string): Promise<void> {
    if (Buffer.byteLength(payload) > MAX_PAYLOAD_BYTES) throw new Error(`bus message over ${MAX_PAYLOAD_BYTES} bytes`);
    await sql`SELECT pg_notify(${checkChannel(channel)}, ${payload})`.execute(this.store.db);
  }

  subscribe(channel: string, listener: (payload: string) => void): () => void {
    checkChannel(channel);
    const first = this.emitter.listenerCount(channel) === 0;
    this.emitter.on(channel, listener);
    if (first && this.client) this.client.query(`LISTEN ${channel}`).catch((error: unknown) => this.lost(error));
    return () => this.emitter.off(channel, listener);
  }

  onReconnect(listener: () => void): () => void {
    this.reconnected.on("reconnect", listener);
    return () => this.reconnected.off("reconnect", listener);
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    const client = this.client;
    this.client = null;
    await client?.end().catch(() => undefined);
    this.emitter.removeAllListeners();
    this.reconnected.removeAllListeners();
  }

  private connect(): Promise<void> {
    this.connecting ??= (async () => {
      // The Postgres driver loads only for Postgres (a SQLite server never needs it).
      const { default: pgDriver } = await import("pg");
      const client = new pgDriver.Client({ connectionString: this.url, application_name: "pustaka-bus", keepAlive: true });
      client.on("notification", (message) => {
        if (message.payload !== undefined) this.emitter.emit(message.channel, message.payload);
      });
      client.on("error", (error) => this.lost(error));
      client.on("end", () => this.lost(new Error("the bus connection ended")));
      try {
        await client.connect();
        for (const channel of this.emitter.eventNames()) await client.query(`LISTEN ${checkChannel(String(channel))}`);
      } catch (error) {
        client.removeAllListeners();
        await client.end().catch(() => undefined);
        throw error;
      }
      if (this.closed) {
        await client.end().catch(() => undefined);
        return;
      }
      this.client = client;
      this.retryMs = 250;
      if (this.everConnected) this.reconnected.emit("reconnect");
      this.everConnected = true;
    })().finally(() => {
      this.connecting = null;
    });
    return this.connecting;
  }

  private lost(error: unknown): void {
    if (this.closed || !this.client) return;
    const client = this.client;
    this.client = null;
    client.removeAllListeners();
    client.on("error", () => {});
    void client.end().catch(() => undefined);
    this.onError(error);
    this.retry();
  }

  private retry(): void {
    if (this.closed || this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.connect().catch((error: unknown) => {
        this.onError(error);
        this.retryMs = Math.min(this.retryMs * 2, 5_000);
        this.retry();
      });
    }, this.retryMs);
    this.timer.unref();
  }
}
