/**
 * Conversations the workbench keeps per workspace: titles and messages (with the
 * citations of grounded answers) sealed under a data key of each conversation's own.
 * Deleting a conversation deletes its wrapped key with its rows: nothing left on disk can
 * be opened again. Another workspace's conversation does not exist for the caller.
 */
import type { Principal } from "../domain/scopes.js";
import { invalidRequest, notFound } from "../errors.js";
import { newId, nowSeconds } from "../ids.js";
import type { DataKeyring } from "../security/data-keyring.js";
import type { ConversationRecord, ConversationStore, SealedMessage } from "../store/conversation-store.js";
import type { Page, PageRequest } from "../store/pagination.js";

/** What a message carries besides its role; citations are kept as the API returned them. */
export interface MessageBody {
  content: string;
  citations: unknown[] | null;
  grounded: boolean | null;
  model: string | null;
  stopped: boolean;
}

export interface ConversationView {
  id: string;
  title: string;
  corpusId: string | null;
  messageCount: number;
  createdAt: number;
  updatedAt: number;
}

export interface MessageView extends MessageBody {
  id: string;
  role: "user" | "assistant";
  createdAt: number;
}

export interface ConversationLimits {
  /** Messages one conversation may hold. */
  maxMessages: number;
}

const DEFAULT_TITLE = "New conversation";

/** A title from the first question: its first line, shortened at a word boundary. */
export function titleFrom(text: string): string {
  const line = text.trim().split(/\r?\n/)[0]?.replace(/\s+/g, " ") ?? "";
  if (line.length <= 60) return line || DEFAULT_TITLE;
  const cut = line.slice(0, 60);
  return `${cut.slice(0, cut.lastIndexOf(" ") > 30 ? cut.lastIndexOf(" ") : 60)}…`;
}

export class ConversationService {
  constructor(
    private readonly store: ConversationStore,
    private readonly keyring: DataKeyring,
    private readonly limits: ConversationLimits = { maxMessages: 10_000 },
  ) {}

  async create(principal: Principal, input: { title?: string | undefined; corpusId?: string | null | undefined }): Promise<ConversationView> {
    const id = newId("conv_");
    const key = await this.keyring.create(id);
    const cipher = await this.keyring.cipher(id);
    const now = nowSeconds();
    const title = input.title?.trim() || DEFAULT_TITLE;
    await this.store.insert({
      id,
      workspaceId: principal.workspaceId,
      corpusId: input.corpusId ?? null,
      keyProvider: key.provider,
      wrappedKey: key.wrappedKey,
      title: cipher.seal(Buffer.from(title, "utf8"), `conversation:${id}:title`),
      messageCount: 0,
      createdAt: now,
      updatedAt: now,
    });
    return { id, title, corpusId: input.corpusId ?? null, messageCount: 0, createdAt: now, updatedAt: now };
  }

  async list(principal: Principal, page: PageRequest): Promise<Page<ConversationView>> {
    const result = await this.store.list(principal.workspaceId, page);
    return { data: await Promise.all(result.data.map((r) => this.view(r))), hasMore: result.hasMore };
  }

  async get(principal: Principal, id: string): Promise<ConversationView & { messages: MessageView[] }> {
    const record = await this.record(principal, id);
    const cipher = await this.keyring.cipher(id);
    const messages = (await this.store.messages(id)).map((m) => this.openMessage(cipher.open.bind(cipher), m));
    return { ...(await this.view(record)), messages };
  }

  async rename(principal: Principal, id: string, title: string): Promise<ConversationView> {
    await this.record(principal, id);
    const cipher = await this.keyring.cipher(id);
    await this.store.setTitle(id, cipher.seal(Buffer.from(title.trim(), "utf8"), `conversation:${id}:title`), nowSeconds());
    return this.view(await this.record(principal, id));
  }

  /** Appends messages in order. The first question names a conversation still called "New conversation". */
  async append(principal: Principal, id: string, messages: (MessageBody & { role: "user" | "assistant" })[]): Promise<MessageView[]> {
    const record = await this.record(principal, id);
    if (record.messageCount + messages.length > this.limits.maxMessages) {
      throw invalidRequest(`a conversation holds at most ${this.limits.maxMessages} messages; start a new one`, "conversation_full", "messages");
    }
    const cipher = await this.keyring.cipher(id);
    const now = nowSeconds();
    const sealed = messages.map(({ role, ...body }) => {
      const messageId = newId("msg_");
      return { id: messageId, role, createdAt: now, body: cipher.seal(Buffer.from(JSON.stringify(body), "utf8"), `conversation:${id}:message:${messageId}`) };
    });
    const stored = await this.store.append(id, sealed, now);
    const firstQuestion = messages.find((m) => m.role === "user");
    if (firstQuestion && (await this.titleOf(record)) === DEFAULT_TITLE) {
      await this.store.setTitle(id, cipher.seal(Buffer.from(titleFrom(firstQuestion.content), "utf8"), `conversation:${id}:title`), now);
    }
    return stored.map((m) => this.openMessage(cipher.open.bind(cipher), m));
  }

  /** Irreversible: messages and the conversation's key are deleted together. */
  async delete(principal: Principal, id: string): Promise<void> {
    await this.record(principal, id);
    await this.store.delete(id);
    this.keyring.forget(id);
  }

  private async record(principal: Principal, id: string): Promise<ConversationRecord> {
    const record = await this.store.get(principal.workspaceId, id);
    if (!record) throw notFound(`No conversation '${id}'`, "conversation_not_found", "conversation_id");
    return record;
  }

  private async titleOf(record: ConversationRecord): Promise<string> {
    const cipher = await this.keyring.cipher(record.id);
    return cipher.open(record.title, `conversation:${record.id}:title`).toString("utf8");
  }

  private async view(record: ConversationRecord): Promise<ConversationView> {
    return { id: record.id, title: await this.titleOf(record), corpusId: record.corpusId, messageCount: record.messageCount, createdAt: record.createdAt, updatedAt: record.updatedAt };
  }

  private openMessage(open: (sealed: Buffer, aad: string) => Buffer, m: SealedMessage): MessageView {
    const body = JSON.parse(open(m.body, `conversation:${m.conversationId}:message:${m.id}`).toString("utf8")) as MessageBody;
    return { id: m.id, role: m.role, createdAt: m.createdAt, ...body };
  }
}
