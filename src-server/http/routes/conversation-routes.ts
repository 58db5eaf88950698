/** /v1/conversations: the workbench's chat history, kept per workspace and sealed at rest. */
import { doc } from "../openapi/route-doc.js";
import { Router } from "express";
import type { ConversationService } from "../../conversations/conversation-service.js";
import type { CorpusService } from "../../rag/corpus-service.js";
import { principalOf, requireScope } from "../authenticate.js";
import { jsonBody } from "../json-body.js";
import { routeParam } from "../route-param.js";
import { parseWith } from "../validate.js";
import {
  AppendMessagesSchema,
  CreateConversationSchema,
  ExportQuerySchema,
  PatchConversationSchema,
  conversationDeletedObject,
  conversationMarkdown,
  conversationObject,
  messageObject,
} from "../wire/conversation-wire.js";
import { ListQuerySchema, listObject, toPageRequest } from "../wire/list-wire.js";

export function conversationRoutes(conversations: ConversationService, corpora: CorpusService): Router {
  const router = Router();
  const scope = requireScope("inference");
  const id = (req: Parameters<typeof routeParam>[0]) => routeParam(req, "conversationId");

  router.post("/v1/conversations", doc({ summary: "Start a conversation", tag: "Conversations", body: CreateConversationSchema, response: { status: 201 } }), scope, async (req, res) => {
    const body = jsonBody(req, CreateConversationSchema);
    const principal = principalOf(res.locals);
    // The corpus must be one the caller can see.
    if (body.corpus_id) await corpora.record(principal, body.corpus_id);
    res.status(201).json(conversationObject(await conversations.create(principal, { title: body.title, corpusId: body.corpus_id })));
  });
  router.get("/v1/conversations", doc({ summary: "List conversations", tag: "Conversations", query: ListQuerySchema }), scope, async (req, res) => {
    const result = await conversations.list(principalOf(res.locals), toPageRequest(parseWith(ListQuerySchema, req.query, "query string")));
    res.json(listObject(result.data.map(conversationObject), result.hasMore));
  });
  router.get("/v1/conversations/:conversationId", doc({ summary: "One conversation with its messages", tag: "Conversations" }), scope, async (req, res) => {
    const c = await conversations.get(principalOf(res.locals), id(req));
    res.json({ ...conversationObject(c), messages: c.messages.map(messageObject) });
  });
  router.patch("/v1/conversations/:conversationId", doc({ summary: "Rename a conversation", tag: "Conversations", body: PatchConversationSchema }), scope, async (req, res) => {
    const body = jsonBody(req, PatchConversationSchema);
    res.json(conversationObject(await conversations.rename(principalOf(res.locals), id(req), body.title)));
  });
  router.delete("/v1/conversations/:conversationId", doc({ summary: "Delete a conversation", tag: "Conversations" }), scope, async (req, res) => {
    await conversations.delete(principalOf(res.locals), id(req));
    res.json(conversationDeletedObject(id(req)));
  });
  router.post("/v1/conversations/:conversationId/messages", doc({ summary: "Append messages to a conversation", tag: "Conversations", body: AppendMessagesSchema }), scope, async (req, res) => {
    const body = jsonBody(req, AppendMessagesSchema);
    const appended = await conversations.append(
      principalOf(res.locals),
      id(req),
      body.messages.map((m) => ({ role: m.role, content: m.content, citations: m.citations ?? null, grounded: m.grounded ?? null, model: m.model ?? null, stopped: m.stopped ?? false })),
    );
    res.status(201).json({ object: "list", data: appended.map(messageObject) });
  });
  router.get("/v1/conversations/:conversationId/export", doc({ summary: "Export a conversation as Markdown", tag: "Conversations", query: ExportQuerySchema, response: { contentType: "text/markdown" } }), scope, async (req, res) => {
    parseWith(ExportQuerySchema, req.query, "query string");
    const principal = principalOf(res.locals);
    const c = await conversations.get(principal, id(req));
    let corpusName: string | null = null;
    if (c.corpusId) {
      try {
        corpusName = (await corpora.record(principal, c.corpusId)).name;
      } catch {
        corpusName = null;
      }
    }
    const filename = `${c.title.replace(/[^\p{L}\p{N} ._-]+/gu, "").trim().slice(0, 80) || "conversation"}.md`;
    res.setHeader("Content-Type", "text/markdown; charset=utf-8");
    res.setHeader("Content-Disposition", `attachment; filename="conversation.md"; filename*=UTF-8''${encodeURIComponent(filename)}`);
    res.send(conversationMarkdown(c, corpusName));
  });
  return router;
}
