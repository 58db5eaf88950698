/** Conversations on the wire: request schemas, objects, and the Markdown export. */
import { z } from "zod";
import type * as Api from "../../contract/index.js";
import type { ConversationView, MessageView } from "../../conversations/conversation-service.js";

const Title = z.string().trim().min(1).max(200);

export const CreateConversationSchema = z
  .object({ title: Title.optional(), corpus_id: z.string().min(1).max(64).nullable().optional() })
  .strict();

export const PatchConversationSchema = z.object({ title: Title }).strict();

const CitationSchema = z
  .object({
    index: z.number().int().min(1).max(1000),
    document_id: z.string().max(64),
    chunk_id: z.string().max(64),
    filename: z.string().max(300),
    text: z.string().max(50_000),
    score: z.number(),
    page: z.number().int().nullable(),
    page_start: z.number().int().nullable(),
    page_end: z.number().int().nullable(),
    // Optional: answers kept before citations carried them have neither.
    heading_path: z.array(z.string().max(1000)).max(32).optional(),
    metadata: z.record(z.string(), z.unknown()),
    cited: z.boolean(),
    support: z
      .object({ page: z.number().int().nullable(), start: z.number().int().min(0), end: z.number().int().min(0) })
      .strict()
      .nullable()
      .optional(),
  })
  .strict();

/** A kept citation as the contract has it (citations kept before `heading_path` and `support` existed get the defaults). */
const keptCitation = (c: Partial<Api.Citation> & Omit<Api.Citation, "heading_path" | "support">): Api.Citation => ({ ...c, heading_path: c.heading_path ?? [], support: c.support ?? null });

export const AppendMessagesSchema = z
  .object({
    messages: z
      .array(
        z
          .object({
            role: z.enum(["user", "assistant"]),
            content: z.string().max(200_000),
            citations: z.array(CitationSchema).max(50).nullable().optional(),
            grounded: z.boolean().nullable().optional(),
            model: z.string().max(256).nullable().optional(),
            stopped: z.boolean().optional(),
          })
          .strict(),
      )
      .min(1)
      .max(50),
  })
  .strict();

export const ExportQuerySchema = z.object({ format: z.literal("markdown").default("markdown") }).strict();

export const conversationObject = (c: ConversationView): Api.Conversation => ({
  id: c.id,
  object: "conversation",
  title: c.title,
  corpus_id: c.corpusId,
  message_count: c.messageCount,
  created_at: c.createdAt,
  updated_at: c.updatedAt,
});

export const messageObject = (m: MessageView): Api.ConversationMessage => ({
  id: m.id,
  object: "conversation.message",
  role: m.role,
  content: m.content,
  citations: (m.citations as Parameters<typeof keptCitation>[0][] | null)?.map(keptCitation) ?? null,
  grounded: m.grounded,
  model: m.model,
  stopped: m.stopped,
  created_at: m.createdAt,
});

export const conversationDeletedObject = (id: string): Api.ConversationDeleted => ({ id, object: "conversation.deleted", deleted: true });

const pagesOf = (c: Api.Citation) => (c.page_start === null ? "" : c.page_end !== null && c.page_end !== c.page_start ? `, pages ${c.page_start}–${c.page_end}` : `, page ${c.page_start}`);
const quote = (text: string) => {
  const oneLine = text.replace(/\s+/g, " ").trim();
  return oneLine.length > 300 ? `${oneLine.slice(0, 300)}…` : oneLine;
};

/** The conversation as Markdown: each turn, and under each grounded answer the sources it cites. */
export function conversationMarkdown(c: ConversationView & { messages: MessageView[] }, corpusName: string | null): string {
  const lines = [`# ${c.title}`, "", `_Exported from Pustaka, ${new Date(c.updatedAt * 1000).toISOString().slice(0, 10)}${corpusName ? ` · corpus: ${corpusName}` : ""}._`, ""];
  for (const m of c.messages) {
    if (m.role === "user") {
      lines.push(`## ${m.content.split("\n")[0]?.slice(0, 120) ?? ""}`, "", m.content, "");
      continue;
    }
    lines.push(`**Answer**${m.model ? ` (${m.model})` : ""}${m.stopped ? " — stopped before the end" : ""}${m.grounded === false ? " — not found in the corpus" : ""}:`, "", m.content, "");
    const citations = (m.citations as Api.Citation[] | null) ?? [];
    const shown = citations.some((x) => x.cited) ? citations.filter((x) => x.cited) : citations;
    if (shown.length > 0) {
      lines.push("Sources:", "");
      for (const x of shown) lines.push(`- [${x.index}] ${x.filename}${pagesOf(x)}: “${quote(x.text)}”`);
      lines.push("");
    }
  }
  return `${lines.join("\n").trimEnd()}\n`;
}
