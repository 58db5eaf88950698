/**
 * SQLite access for remote models added through the admin API. Secrets arrive and leave
 * sealed; this store never sees an upstream's key.
 */
import type { Database } from "./database.js";

export interface RemoteModelRecord {
  id: string;
  /** JSON of what the model is, without secrets. */
  spec: string;
  keyProvider: string;
  wrappedKey: Buffer;
  /** Sealed JSON: each replica's API key and client certificate. */
  secrets: Buffer;
  createdAt: number;
  createdBy: string;
}

interface Row {
  id: string;
  spec: string;
  key_provider: string;
  wrapped_key: Buffer;
  secrets: Buffer;
  created_at: number;
  created_by: string;
}

const record = (row: Row): RemoteModelRecord => ({ id: row.id, spec: row.spec, keyProvider: row.key_provider, wrappedKey: row.wrapped_key, secrets: row.secrets, createdAt: row.created_at, createdBy: row.created_by });

export class RemoteModelStore {
  constructor(private readonly db: Database) {}

  insert(r: RemoteModelRecord): void {
    this.db
      .prepare("INSERT INTO remote_models (id, spec, key_provider, wrapped_key, secrets, created_at, created_by) VALUES (?, ?, ?, ?, ?, ?, ?)")
      .run(r.id, r.spec, r.keyProvider, r.wrappedKey, r.secrets, r.createdAt, r.createdBy);
  }

  list(): RemoteModelRecord[] {
    return (this.db.prepare("SELECT * FROM remote_models ORDER BY created_at, id").all() as Row[]).map(record);
  }

  get(id: string): RemoteModelRecord | undefined {
    const row = this.db.prepare("SELECT * FROM remote_models WHERE id = ?").get(id) as Row | undefined;
    return row && record(row);
  }

  /** The wrapped data key of a remote model's secrets, for the keyring. */
  wrappedKey(id: string): Buffer | undefined {
    return (this.db.prepare("SELECT wrapped_key FROM remote_models WHERE id = ?").get(id) as { wrapped_key: Buffer } | undefined)?.wrapped_key;
  }

  /** True when a row was deleted (its sealed secrets and wrapped key with it). */
  delete(id: string): boolean {
    return this.db.prepare("DELETE FROM remote_models WHERE id = ?").run(id).changes > 0;
  }
}
