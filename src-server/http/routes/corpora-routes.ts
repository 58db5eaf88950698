/** /v1/rag/corpora: corpora, their documents (upload, list, delete) and indexing events. */
import { doc } from "../openapi/route-doc.js";
import { Router, type RequestHandler } from "express";
import { invalidRequest } from "../../errors.js";
import type { CorpusEvents } from "../../rag/corpus-events.js";
import type * as Api from "../../contract/index.js";
import type { CorpusService, CorpusView } from "../../rag/corpus-service.js";
import type { DocumentService } from "../../rag/document-service.js";
import { principalOf, requireScope } from "../authenticate.js";
import { routeParam } from "../route-param.js";
import { jsonBody } from "../json-body.js";
import { receiveUpload, type UploadLimits } from "../multipart-upload.js";
import { SseWriter } from "../sse.js";
import { actorOf, type AuditService } from "../../audit/audit-service.js";
import { recordSafely, type Trail } from "../audit-trail.js";
import { parseWith } from "../validate.js";
import { ListQuerySchema, listObject, toPageRequest } from "../wire/list-wire.js";
import {
  CorpusEventsQuerySchema,
  CreateCorpusSchema,
  DocumentListQuerySchema,
  PatchCorpusSchema,
  UploadMetadataSchema,
  corpusDeletedObject,
  corpusEventObject,
  corpusObject,
  corpusSnapshotEvent,
  documentDeletedObject,
  documentObject,
  uploadObject,
  searchDefaultsOf,
} from "../wire/rag-wire.js";

export interface CorporaRouteDeps {
  corpora: CorpusService;
  documents: DocumentService;
  events: CorpusEvents;
  upload: UploadLimits;
  /** Admission of costly operations (an upload counts one request). */
  costly: RequestHandler;
  trail: Trail;
  /** Uploads record one audit entry per file. */
  audit: AuditService;
}

export function corporaRoutes({ corpora, documents, events, upload, costly, trail, audit }: CorporaRouteDeps): Router {
  const router = Router();
  const read = requireScope("rag.read");
  const write = requireScope("rag.write");
  const page = (query: unknown) => toPageRequest(parseWith(ListQuerySchema, query, "query string"));

  router.post("/v1/rag/corpora", doc({ summary: "Create a corpus", tag: "Corpora", body: CreateCorpusSchema, response: { status: 201 } }), trail("corpus.create"), write, async (req, res) => {
    const body = jsonBody(req, CreateCorpusSchema);
    const corpus = await corpora.create(principalOf(res.locals), {
      name: body.name,
      chunking: body.chunking,
      embeddingModel: body.embedding_model,
      embeddingPrompts: body.embedding_prompts,
      rerankModel: body.rerank_model,
      searchDefaults: searchDefaultsOf(body.search_defaults),
      ocrLanguages: body.ocr_languages,
      retentionDays: body.retention_days,
      metadata: body.metadata,
    });
    Object.assign(res.locals.audit?.data ?? {}, { corpus_id: corpus.id, embedding_model: corpus.embeddingModel, retention_days: corpus.retentionDays });
    res.status(201).json(corpusObject(corpus));
  });
  router.get("/v1/rag/corpora", doc({ summary: "List corpora", tag: "Corpora", query: ListQuerySchema }), read, async (req, res) => {
    const result = await corpora.list(principalOf(res.locals), page(req.query));
    res.json(listObject(result.data.map(corpusObject), result.hasMore));
  });
  router.get("/v1/rag/corpora/:corpusId", doc({ summary: "One corpus with its indexing status and counts", tag: "Corpora" }), read, async (req, res) => {
    res.json(corpusObject(await corpora.get(principalOf(res.locals), routeParam(req, "corpusId"))));
  });
  router.patch("/v1/rag/corpora/:corpusId", doc({ summary: "Rename a corpus, change its retention, metadata, reranker, search settings or OCR languages", tag: "Corpora", body: PatchCorpusSchema }), write, async (req, res) => {
    const body = jsonBody(req, PatchCorpusSchema);
    res.json(corpusObject(await corpora.update(principalOf(res.locals), routeParam(req, "corpusId"), { name: body.name, retentionDays: body.retention_days, metadata: body.metadata, rerankModel: body.rerank_model, searchDefaults: searchDefaultsOf(body.search_defaults), ocrLanguages: body.ocr_languages })));
  });
  router.delete("/v1/rag/corpora/:corpusId", doc({ summary: "Delete a corpus (irreversible; tombstones until its retention ends)", tag: "Corpora" }), trail("corpus.delete", { params: ["corpusId"] }), write, async (req, res) => {
    const deleted = await corpora.delete(principalOf(res.locals), routeParam(req, "corpusId"));
    res.json(corpusDeletedObject(deleted.id, deleted.tombstone));
  });

  router.post("/v1/rag/corpora/:corpusId/documents", doc({ summary: "Upload documents (PDF, DOCX, TXT, MD, HTML) for indexing", tag: "Corpora", multipart: { file: "1–100 files", metadata: "JSON object applied to every file" }, response: { status: 202 } }), trail("document.upload", { params: ["corpusId"] }), write, costly, async (req, res) => {
    const corpus = await corpora.record(principalOf(res.locals), routeParam(req, "corpusId"));
    const received = await receiveUpload(req, corpus.id, documents, upload);
    let metadata: Record<string, unknown> = {};
    try {
      if (received.metadataText !== null) {
        let raw: unknown;
        try {
          raw = JSON.parse(received.metadataText);
        } catch {
          throw invalidRequest("metadata must be a JSON object encoded as a string", "invalid_metadata", "metadata");
        }
        metadata = parseWith(UploadMetadataSchema, raw, "metadata");
      }
      if (received.staged.length + received.rejected.length === 0) throw invalidRequest("the upload holds no 'file' part", "no_files", "file");
    } catch (error) {
      await documents.discard(corpus.id, received.staged);
      throw error;
    }
    const { documents: accepted, rejected } = await documents.accept(corpus.id, received.staged, metadata);
    const allRejected = [...received.rejected, ...rejected];
    // One entry per file, accepted or refused (and why); the request's own entry is then not needed.
    const principal = principalOf(res.locals);
    const file = (outcome: "success" | "failure", data: Record<string, unknown>) =>
      recordSafely(audit, res, { type: "document.upload", workspaceId: principal.workspaceId, actor: actorOf(principal), outcome, requestId: res.locals.requestId, data: { corpus_id: corpus.id, ...data } });
    for (const d of accepted) file("success", { document_id: d.id, sha256: d.sha256, bytes: d.bytes, format: d.format, accepted: true });
    for (const r of allRejected) file("failure", { sha256: r.sha256 ?? null, bytes: r.bytes ?? null, format: r.format ?? null, accepted: false, reason: r.error.code });
    if (res.locals.audit) res.locals.audit.done = true;
    if (accepted.length === 0) {
      // Nothing accepted: a 4xx that still lists why each file was refused.
      const first = allRejected[0]!;
      const status = allRejected.every((r) => r.error.code === "file_too_large") ? 413 : allRejected.every((r) => r.error.code === "unsupported_file_type") ? 415 : 400;
      res.status(status).json({
        error: { message: `no file was accepted: ${first.filename}: ${first.error.message}`, type: "invalid_request_error", param: "file", code: first.error.code },
        ...uploadObject(corpus.id, [], allRejected),
      });
      return;
    }
    res.status(202).json(uploadObject(corpus.id, accepted, allRejected));
  });
  router.get("/v1/rag/corpora/:corpusId/documents", doc({ summary: "List a corpus's documents", tag: "Corpora", query: DocumentListQuerySchema }), read, async (req, res) => {
    const query = parseWith(DocumentListQuerySchema, req.query, "query string");
    const result = await documents.list(principalOf(res.locals), routeParam(req, "corpusId"), toPageRequest(query), query.status, query.parent_document_id === "none" ? null : query.parent_document_id);
    res.json(listObject(result.data.map(documentObject), result.hasMore));
  });
  router.get("/v1/rag/corpora/:corpusId/documents/:documentId", doc({ summary: "One document with its status", tag: "Corpora" }), read, async (req, res) => {
    res.json(documentObject(await documents.get(principalOf(res.locals), routeParam(req, "corpusId"), routeParam(req, "documentId"))));
  });
  router.delete("/v1/rag/corpora/:corpusId/documents/:documentId", doc({ summary: "Delete a document", tag: "Corpora" }), trail("document.delete", { params: ["corpusId", "documentId"] }), write, async (req, res) => {
    const tombstone = await documents.delete(principalOf(res.locals), routeParam(req, "corpusId"), routeParam(req, "documentId"));
    res.json(documentDeletedObject(routeParam(req, "documentId"), tombstone));
  });

  /**
   * Indexing progress for progress bars: a snapshot, then every change, each as a named
   * SSE event (`event: rag.document.status` …). The stream lasts until the client leaves,
   * or with `?until=ready` until the corpus is ready (or every document failed; at once when
   * that is already so), with a final `event: end`.
   */
  router.get("/v1/rag/corpora/:corpusId/events", doc({ summary: "Indexing progress as server-sent events", tag: "Corpora", query: CorpusEventsQuerySchema, response: { contentType: "text/event-stream" } }), read, async (req, res) => {
    const { until } = parseWith(CorpusEventsQuerySchema, req.query, "query string");
    const principal = principalOf(res.locals);
    const corpus = await corpora.get(principal, routeParam(req, "corpusId"));
    const sse = new SseWriter(res);
    const send = (event: Api.CorpusEvent) => sse.sendEvent(event.object, event);
    // An empty corpus is waited on (its documents are still to come); a failed one is settled too.
    const settled = (c: CorpusView) => c.status === "ready" || c.status === "failed";
    let finished = false;
    const finish = async (reason: Api.CorpusEventsEnd["reason"]): Promise<void> => {
      if (finished) return;
      finished = true;
      const end: Api.CorpusEventsEnd = { object: "rag.corpus.events.end", reason };
      await sse.sendEvent("end", end);
      sse.end();
    };
    const snapshot = async (): Promise<void> => {
      const current = await corpora.get(principal, corpus.id);
      await send(corpusSnapshotEvent(current));
      if (until === "ready" && settled(current)) await finish(current.status === "ready" ? "ready" : "failed");
    };
    // The snapshot goes first; changes queue behind it, in order.
    let chain = snapshot();
    // After the status events published together (a group of documents committed at once),
    // one snapshot: taken after the first, it would already count the others as done.
    let waiting = 0;
    let changed = false;
    const unsubscribe = events.subscribe(corpus.id, (event) => {
      waiting++;
      chain = chain.then(async () => {
        waiting--;
        if (finished) return;
        await send(corpusEventObject(corpus.id, event));
        if (event.type === "corpus.deleted") return finish("deleted");
        changed ||= event.type === "document.status";
        if (changed && waiting === 0) {
          changed = false;
          await snapshot();
        }
      });
    });
    await chain;
    const keepAlive = setInterval(() => void sse.comment("keep-alive"), 15_000);
    await new Promise<void>((resolve) => (res.closed ? resolve() : res.on("close", resolve)));
    clearInterval(keepAlive);
    unsubscribe();
  });
  return router;
}
