/**
 * Conversations and their messages in the store's database. Titles and message bodies
 * arrive and leave sealed; this store never sees plaintext.
 */
import { sql, type RawBuilder } from "kysely";
import type { Page, PageRequest } from "./pagination.js";
import type { ConversationsTable } from "./schema.js";
import type { SqlDatabase } from "./sql-database.js";

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

type ConversationRow = Omit<ConversationsTable, "message_count"> & { message_count: number };

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
  constructor(private readonly store: SqlDatabase) {}

  async insert(c: ConversationRecord): Promise<void> {
    await this.store.db
      .insertInto("conversations")
      .values({
        id: c.id,
        workspace_id: c.workspaceId,
        corpus_id: c.corpusId,
        key_provider: c.keyProvider,
        wrapped_key: c.wrappedKey,
        title: c.title,
        message_count: c.messageCount,
        created_at: c.createdAt,
        updated_at: c.updatedAt,
      })
      .execute();
  }

  async get(workspaceId: string, id: string): Promise<ConversationRecord | undefined> {
    const row = await this.store.db.selectFrom("conversations").selectAll().where("id", "=", id).where("workspace_id", "=", workspaceId).executeTakeFirst();
    return row && toRecord(row);
  }

  /** The wrapped data key of a conversation (any workspace), for the keyring. */
  async wrappedKey(id: string): Promise<Buffer | undefined> {
    const row = await this.store.db.selectFrom("conversations").select("wrapped_key").where("id", "=", id).executeTakeFirst();
    return row?.wrapped_key;
  }

  /** Most recently active first; `after`/`before` are conversation ids. */
  async list(workspaceId: string, page: PageRequest): Promise<Page<ConversationRecord>> {
    const conditions: RawBuilder<unknown>[] = [sql`workspace_id = ${workspaceId}`];
    const cursor = (id: string, forward: boolean) => {
      const newer = (page.order === "desc") !== forward;
      conditions.push(sql`(updated_at, id) ${sql.raw(newer ? ">" : "<")} (SELECT updated_at, id FROM conversations WHERE id = ${id} AND workspace_id = ${workspaceId})`);
    };
    if (page.after) cursor(page.after, true);
    if (page.before) cursor(page.before, false);
    const reverse = Boolean(page.before && !page.after);
    const direction = sql.raw((page.order === "asc") !== reverse ? "ASC" : "DESC");
    const { rows } = await sql<ConversationRow>`SELECT * FROM conversations WHERE ${sql.join(conditions, sql` AND `)} ORDER BY updated_at ${direction}, id ${direction} LIMIT ${page.limit + 1}`.execute(this.store.db);
    const data = rows.slice(0, page.limit).map(toRecord);
    if (reverse) data.reverse();
    return { data, hasMore: rows.length > page.limit };
  }

  async setTitle(id: string, title: Buffer, at: number): Promise<void> {
    await this.store.db.updateTable("conversations").set({ title, updated_at: at }).where("id", "=", id).execute();
  }

  async messages(conversationId: string): Promise<SealedMessage[]> {
    const rows = await this.store.db.selectFrom("conversation_messages").selectAll().where("conversation_id", "=", conversationId).orderBy("idx").execute();
    return rows.map((r) => ({ id: r.id, conversationId: r.conversation_id, index: r.idx, role: r.role as SealedMessage["role"], body: r.body, createdAt: r.created_at }));
  }

  /**
   * Appends messages after the last one, in one transaction; returns them with their
   * indexes. The count is raised first, by one UPDATE that returns it: the conversation's
   * row stays locked until the commit (on Postgres, for every replica; on SQLite the
   * transaction holds the database), so concurrent appends take consecutive indexes.
   */
  append(conversationId: string, messages: Omit<SealedMessage, "index" | "conversationId">[], at: number): Promise<SealedMessage[]> {
    return this.store.transaction(async (tx) => {
      const row = await tx
        .updateTable("conversations")
        .set((eb) => ({ message_count: eb("message_count", "+", messages.length), updated_at: at }))
        .where("id", "=", conversationId)
        .returning("message_count")
        .executeTakeFirst();
      if (!row) throw new Error(`no conversation '${conversationId}' to append to`);
      const first = Number(row.message_count) - messages.length;
      const stored = messages.map((m, i) => ({ ...m, conversationId, index: first + i }));
      if (stored.length > 0) {
        await tx
          .insertInto("conversation_messages")
          .values(stored.map((m) => ({ id: m.id, conversation_id: conversationId, idx: m.index, role: m.role, body: m.body, created_at: m.createdAt })))
          .execute();
      }
      return stored;
    });
  }

  /** Deletes the conversation, its messages and its wrapped key (on SQLite, secure_delete zeroes the pages). */
  async delete(id: string): Promise<void> {
    await this.store.db.deleteFrom("conversations").where("id", "=", id).execute();
  }
}
