/** SQLite access for model files registered at run time. */
import type { Database } from "./database.js";

export interface ModelFileRecord {
  id: string;
  path: string;
  createdAt: number;
}

export class ModelFileStore {
  constructor(private readonly db: Database) {}

  insert(r: ModelFileRecord): void {
    this.db.prepare("INSERT OR REPLACE INTO model_files (id, path, created_at) VALUES (?, ?, ?)").run(r.id, r.path, r.createdAt);
  }

  all(): ModelFileRecord[] {
    return (this.db.prepare("SELECT id, path, created_at FROM model_files ORDER BY created_at, id").all() as { id: string; path: string; created_at: number }[]).map((r) => ({
      id: r.id,
      path: r.path,
      createdAt: r.created_at,
    }));
  }
}
