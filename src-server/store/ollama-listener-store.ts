/**
 * The Ollama-compatible listener's setting in the store's database (SQLite or Postgres):
 * which API key it acts as and which loopback port it listens on, or nothing when it is
 * closed. One row at most (`id = 'local'`).
 */
import type { SqlDatabase } from "./sql-database.js";

interface OllamaListenerTable {
  id: string;
  key_id: string;
  port: number;
  opened_by: string;
  opened_at: number;
}

/** What an administrator opened: kept so the listener opens again after a restart. */
export interface OllamaListenerSetting {
  keyId: string;
  port: number;
  /** The audit actor who opened it (`api_key:key_…`, `session:ses_…`). */
  openedBy: string;
  /** Unix seconds. */
  openedAt: number;
}

const ROW_ID = "local";

export class OllamaListenerStore {
  constructor(private readonly store: SqlDatabase) {}

  private get db() {
    return this.store.db.withTables<{ ollama_listener: OllamaListenerTable }>();
  }

  async get(): Promise<OllamaListenerSetting | undefined> {
    const row = await this.db.selectFrom("ollama_listener").selectAll().where("id", "=", ROW_ID).executeTakeFirst();
    return row && { keyId: row.key_id, port: Number(row.port), openedBy: row.opened_by, openedAt: Number(row.opened_at) };
  }

  /** Replaces the setting (a listener moved to another key or port keeps one row). */
  async put(setting: OllamaListenerSetting): Promise<void> {
    const values = { key_id: setting.keyId, port: setting.port, opened_by: setting.openedBy, opened_at: setting.openedAt };
    await this.db
      .insertInto("ollama_listener")
      .values({ id: ROW_ID, ...values })
      .onConflict((oc) => oc.column("id").doUpdateSet(values))
      .execute();
  }

  async remove(): Promise<void> {
    await this.db.deleteFrom("ollama_listener").where("id", "=", ROW_ID).execute();
  }
}
