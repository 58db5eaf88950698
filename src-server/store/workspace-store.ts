/** SQLite access for workspaces. */
import type { Database } from "./database.js";
import { readPage, type Page, type PageRequest } from "./pagination.js";

export interface WorkspaceRecord {
  id: string;
  name: string;
  createdAt: number;
}

interface WorkspaceRow {
  id: string;
  name: string;
  created_at: number;
}

const toRecord = (row: WorkspaceRow): WorkspaceRecord => ({ id: row.id, name: row.name, createdAt: row.created_at });

export class WorkspaceStore {
  constructor(private readonly db: Database) {}

  insert(record: WorkspaceRecord): void {
    this.db.prepare("INSERT INTO workspaces (id, name, created_at) VALUES (?, ?, ?)").run(record.id, record.name, record.createdAt);
  }

  get(id: string): WorkspaceRecord | undefined {
    const row = this.db.prepare("SELECT * FROM workspaces WHERE id = ?").get(id) as WorkspaceRow | undefined;
    return row && toRecord(row);
  }

  list(page: PageRequest): Page<WorkspaceRecord> {
    const result = readPage<WorkspaceRow>(this.db, { table: "workspaces", where: "1 = 1", params: [] }, page);
    return { data: result.data.map(toRecord), hasMore: result.hasMore };
  }
}
