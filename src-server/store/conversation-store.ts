/**
 * SQLite access for conversations and their messages. Titles and message bodies arrive
 * and leave sealed; this store never sees plaintext.
 */
import type { Database } from "./database.js";
import type { Page, PageRequest } from "./pagination.js";

export interface ConversationRecord {
  id: string;
  workspaceId: string;
  corpusId: string | null;
  keyProvider: string;
  wrappedKey: Buffer;
  /** Sealed UTF-8 title. */
  title: Buffer;
  messageCount: number;
  createdAt: number;
  updatedAt: number;
}

export interface SealedMessage {
  id: string;
  conversationId: string;
  index: number;
  role: "user" | "assistant";
  /** Sealed JSON of the message's content and annotations. */
  body: Buffer;
  createdAt: number;
}

interface ConversationRow {
  id: string;
  workspace_id: string;
  corpus_id: string | null;
  key_provider: string;
  wrapped_key: Buffer;
  title: Buffer;
  message_count: number;
  created_at: number;
  updated_at: number;
}

const toRecord = (r: ConversationRow): ConversationRecord => ({
  id: r.id,
  workspaceId: r.workspace_id,
  corpusId: r.corpus_id,
  keyProvider: r.key_provider,
  wrappedKey: r.wrapped_key,
  title: r.title,
  messageCount: r.message_count,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

export class ConversationStore {
  constructor(private readonly db: Database) {}

  insert(c: ConversationRecord): void {
    this.db
      .prepare("INSERT INTO conversations (id, workspace_id, corpus_id, key_provider, wrapped_key, title, message_count, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)")
      .run(c.id, c.workspaceId, c.corpusId, c.keyProvider, c.wrappedKey, c.title, c.messageCount, c.createdAt, c.updatedAt);
  }

  get(workspaceId: string, id: string): ConversationRecord | undefined {
    const row = this.db.prepare("SELECT * FROM conversations WHERE id = ? AND workspace_id = ?").get(id, workspaceId) as ConversationRow | undefined;
    return row && toRecord(row);
  }

  /** The wrapped data key of a conversation (any workspace), for the keyring. */
  wrappedKey(id: string): Buffer | undefined {
    return (this.db.prepare("SELECT wrapped_key FROM conversations WHERE id = ?").get(id) as { wrapped_key: Buffer } | undefined)?.wrapped_key;
  }

  /** Most recently active first; `after`/`before` are conversation ids. */
  list(workspaceId: string, page: PageRequest): Page<ConversationRecord> {
    const conditions = ["workspace_id = ?"];
    const params: unknown[] = [workspaceId];
    const cursor = (id: string, forward: boolean) => {
      const newer = (page.order === "desc") !== forward;
      conditions.push(`(updated_at, id) ${newer ? ">" : "<"} (SELECT updated_at, id FROM conversations WHERE id = ? AND workspace_id = ?)`);
      params.push(id, workspaceId);
    };
    if (page.after) cursor(page.after, true);
    if (page.before) cursor(page.before, false);
    const reverse = Boolean(page.before && !page.after);
    const direction = (page.order === "asc") !== reverse ? "ASC" : "DESC";
    const rows = this.db
      .prepare(`SELECT * FROM conversations WHERE ${conditions.join(" AND ")} ORDER BY updated_at ${direction}, id ${direction} LIMIT ?`)
      .all(...params, page.limit + 1) as ConversationRow[];
    const data = rows.slice(0, page.limit).map(toRecord);
    if (reverse) data.reverse();
    return { data, hasMore: rows.length > page.limit };
  }

  setTitle(id: string, title: Buffer, at: number): void {
    this.db.prepare("UPDATE conversations SET title = ?, updated_at = ? WHERE id = ?").run(title, at, id);
  }

  messages(conversationId: string): SealedMessage[] {
    const rows = this.db.prepare("SELECT * FROM conversation_messages WHERE conversation_id = ? ORDER BY idx").all(conversationId) as {
      id: string;
      conversation_id: string;
      idx: number;
      role: "user" | "assistant";
      body: Buffer;
      created_at: number;
    }[];
    return rows.map((r) => ({ id: r.id, conversationId: r.conversation_id, index: r.idx, role: r.role, body: r.body, createdAt: r.created_at }));
  }

  /** Appends messages after the last one, in one transaction; returns them with their indexes. */
  append(conversationId: string, messages: Omit<SealedMessage, "index" | "conversationId">[], at: number): SealedMessage[] {
    return this.db.transaction(() => {
      const { n } = this.db.prepare("SELECT message_count AS n FROM conversations WHERE id = ?").get(conversationId) as { n: number };
      const insert = this.db.prepare("INSERT INTO conversation_messages (id, conversation_id, idx, role, body, created_at) VALUES (?, ?, ?, ?, ?, ?)");
      const stored = messages.map((m, i) => ({ ...m, conversationId, index: n + i }));
      for (const m of stored) insert.run(m.id, conversationId, m.index, m.role, m.body, m.createdAt);
      this.db.prepare("UPDATE conversations SET message_count = ?, updated_at = ? WHERE id = ?").run(n + stored.length, at, conversationId);
      return stored;
    })();
  }

  /** Deletes the conversation, its messages and its wrapped key (secure_delete zeroes the pages). */
  delete(id: string): void {
    this.db.prepare("DELETE FROM conversations WHERE id = ?").run(id);
  }
}
