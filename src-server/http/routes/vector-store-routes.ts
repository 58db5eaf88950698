/**
 * OpenAI's Vector Stores API (`/v1/vector_stores`) over corpora: stores, their files, file
 * batches and search. A vector store is a corpus (`vs_X` is `corp_X`), so everything done
 * here shows in the workbench and through `/v1/rag/...`, and is audited as corpus work.
 */
import { Router, type RequestHandler, type Response } from "express";
import type { VectorStoreFileService } from "../../rag/vector-stores/vector-store-file-service.js";
import type { VectorStoreSearch } from "../../rag/vector-stores/vector-store-search.js";
import type { VectorStoreService } from "../../rag/vector-stores/vector-store-service.js";
import type { OpenedStore } from "../../rag/vector-stores/vector-store-service.js";
import { principalOf, requireScope } from "../authenticate.js";
import type { Trail } from "../audit-trail.js";
import { jsonBody } from "../json-body.js";
import { doc } from "../openapi/route-doc.js";
import { routeParam } from "../route-param.js";
import { parseWith } from "../validate.js";
import { ListQuerySchema, listObject, toPageRequest } from "../wire/list-wire.js";
import {
  CreateFileBatchSchema,
  CreateVectorStoreFileSchema,
  CreateVectorStoreSchema,
  SearchSchema,
  UpdateVectorStoreFileSchema,
  UpdateVectorStoreSchema,
  VectorStoreFileListQuerySchema,
  batchItemsOf,
  fileBatchObject,
  fileChunkingOf,
  fileContentPage,
  parseFilters,
  searchResultsPage,
  vectorStoreDeletedObject,
  vectorStoreFileDeletedObject,
  vectorStoreFileObject,
  vectorStoreObject,
} from "../wire/vector-store-wire.js";

export interface VectorStoreRouteDeps {
  stores: VectorStoreService;
  files: VectorStoreFileService;
  search: VectorStoreSearch;
  /** Admission of costly operations: indexing (attachments) and search (the query is embedded). */
  costly: RequestHandler;
  trail: Trail;
}

const TAG = "Vector stores";
const BASE = "/v1/vector_stores";

/** Facts for the audit entry: which store, which corpus. */
function audit(res: Response, store: Pick<OpenedStore, "id" | "corpus">, data: Record<string, unknown> = {}): void {
  Object.assign(res.locals.audit?.data ?? {}, { vector_store_id: store.id, corpus_id: store.corpus.id, ...data });
}

export function vectorStoreRoutes({ stores, files, search, costly, trail }: VectorStoreRouteDeps): Router {
  const router = Router();
  const read = requireScope("rag.read");
  const write = requireScope("rag.write");
  const page = (query: unknown) => toPageRequest(parseWith(ListQuerySchema, query, "query string"));

  router.post(BASE, doc({ summary: "Create a vector store (a corpus), with files to attach", tag: TAG, body: CreateVectorStoreSchema }), trail("corpus.create"), write, costly, async (req, res) => {
    const body = jsonBody(req, CreateVectorStoreSchema);
    const chunking = fileChunkingOf(body.chunking_strategy);
    const view = await stores.create(principalOf(res.locals), {
      name: body.name ?? "",
      description: body.description ?? null,
      metadata: body.metadata ?? {},
      expiresAfterDays: body.expires_after?.days ?? null,
      files: (body.file_ids ?? []).map((fileId) => ({ fileId, attributes: {}, chunking })),
    });
    audit(res, { id: view.id, corpus: view.corpus }, { embedding_model: view.corpus.embeddingModel, retention_days: view.corpus.retentionDays, files: body.file_ids?.length ?? 0 });
    res.json(vectorStoreObject(view));
  });
  router.get(BASE, doc({ summary: "List vector stores (every corpus of the workspace)", tag: TAG, query: ListQuerySchema }), read, async (req, res) => {
    const result = await stores.list(principalOf(res.locals), page(req.query));
    res.json(listObject(result.data.map(vectorStoreObject), result.hasMore));
  });
  router.get(`${BASE}/:vectorStoreId`, doc({ summary: "One vector store", tag: TAG }), read, async (req, res) => {
    res.json(vectorStoreObject(await stores.get(principalOf(res.locals), routeParam(req, "vectorStoreId"))));
  });
  router.post(`${BASE}/:vectorStoreId`, doc({ summary: "Modify a vector store: name, metadata, expiry", tag: TAG, body: UpdateVectorStoreSchema }), write, async (req, res) => {
    const body = jsonBody(req, UpdateVectorStoreSchema);
    const view = await stores.update(principalOf(res.locals), routeParam(req, "vectorStoreId"), {
      name: body.name ?? undefined,
      metadata: body.metadata === null ? {} : body.metadata,
      expiresAfterDays: body.expires_after === null ? null : body.expires_after?.days,
    });
    res.json(vectorStoreObject(view));
  });
  router.delete(`${BASE}/:vectorStoreId`, doc({ summary: "Delete a vector store: its corpus and documents (to tombstones); the files stay", tag: TAG }), trail("corpus.delete", { params: ["vectorStoreId"] }), write, async (req, res) => {
    const deleted = await stores.delete(principalOf(res.locals), routeParam(req, "vectorStoreId"));
    Object.assign(res.locals.audit?.data ?? {}, { corpus_id: deleted.corpusId });
    res.json(vectorStoreDeletedObject(deleted.id));
  });

  router.post(`${BASE}/:vectorStoreId/search`, doc({ summary: "Search a vector store (the corpus search, filtered on file attributes)", tag: TAG, body: SearchSchema }), trail("rag.search", { params: ["vectorStoreId"], digest: { name: "query", of: (body) => body.query } }), read, costly, async (req, res) => {
    const body = jsonBody(req, SearchSchema);
    const filters = body.filters === undefined ? undefined : parseFilters(body.filters);
    const vectorStoreId = routeParam(req, "vectorStoreId");
    const result = await search.search(
      principalOf(res.locals),
      [vectorStoreId],
      body.query,
      { maxResults: body.max_num_results, filters, ranking: body.ranking_options && { ranker: body.ranking_options.ranker, scoreThreshold: body.ranking_options.score_threshold }, rewriteQuery: body.rewrite_query },
      res.locals.signal,
    );
    await res.locals.admission?.settle(result.queryTokens);
    Object.assign(res.locals.audit?.data ?? {}, { results: result.hits.map((h) => ({ document_id: h.documentId, chunk_id: h.chunkId })), prompt_tokens: result.queryTokens });
    res.json(searchResultsPage(result));
  });

  // ── files ──
  router.post(`${BASE}/:vectorStoreId/files`, doc({ summary: "Attach a file to a vector store (it becomes a document and is indexed)", tag: TAG, body: CreateVectorStoreFileSchema }), trail("document.upload", { params: ["vectorStoreId"] }), write, costly, async (req, res) => {
    const body = jsonBody(req, CreateVectorStoreFileSchema);
    const { store, file } = await files.attach(principalOf(res.locals), routeParam(req, "vectorStoreId"), { fileId: body.file_id, attributes: body.attributes ?? {}, chunking: fileChunkingOf(body.chunking_strategy) });
    audit(res, store, { file_id: file.fileId, document_id: file.documentId, status: file.status });
    res.json(vectorStoreFileObject(store.id, file));
  });
  router.get(`${BASE}/:vectorStoreId/files`, doc({ summary: "List a vector store's files", tag: TAG, query: VectorStoreFileListQuerySchema }), read, async (req, res) => {
    const query = parseWith(VectorStoreFileListQuerySchema, req.query, "query string");
    const { store, files: result } = await files.list(principalOf(res.locals), routeParam(req, "vectorStoreId"), toPageRequest(query), query.filter);
    res.json(listObject(result.data.map((f) => vectorStoreFileObject(store.id, f)), result.hasMore));
  });
  router.get(`${BASE}/:vectorStoreId/files/:fileId`, doc({ summary: "One file of a vector store, with its indexing status", tag: TAG }), read, async (req, res) => {
    const { store, file } = await files.get(principalOf(res.locals), routeParam(req, "vectorStoreId"), routeParam(req, "fileId"));
    res.json(vectorStoreFileObject(store.id, file));
  });
  router.post(`${BASE}/:vectorStoreId/files/:fileId`, doc({ summary: "Replace a vector store file's attributes", tag: TAG, body: UpdateVectorStoreFileSchema }), write, async (req, res) => {
    const body = jsonBody(req, UpdateVectorStoreFileSchema);
    const { store, file } = await files.update(principalOf(res.locals), routeParam(req, "vectorStoreId"), routeParam(req, "fileId"), body.attributes ?? {});
    res.json(vectorStoreFileObject(store.id, file));
  });
  router.delete(`${BASE}/:vectorStoreId/files/:fileId`, doc({ summary: "Remove a file from a vector store (its document is deleted; the file stays)", tag: TAG }), trail("document.delete", { params: ["vectorStoreId", "fileId"] }), write, async (req, res) => {
    const { store, fileId } = await files.detach(principalOf(res.locals), routeParam(req, "vectorStoreId"), routeParam(req, "fileId"));
    audit(res, store);
    res.json(vectorStoreFileDeletedObject(fileId));
  });
  router.get(`${BASE}/:vectorStoreId/files/:fileId/content`, doc({ summary: "A vector store file's parsed text, as indexed", tag: TAG }), read, async (req, res) => {
    res.json(fileContentPage(await files.content(principalOf(res.locals), routeParam(req, "vectorStoreId"), routeParam(req, "fileId"))));
  });

  // ── file batches ──
  router.post(`${BASE}/:vectorStoreId/file_batches`, doc({ summary: "Attach several files at once (one upload)", tag: TAG, body: CreateFileBatchSchema }), trail("document.upload", { params: ["vectorStoreId"] }), write, costly, async (req, res) => {
    const body = jsonBody(req, CreateFileBatchSchema);
    const { store, batch } = await files.createBatch(principalOf(res.locals), routeParam(req, "vectorStoreId"), batchItemsOf(body));
    audit(res, store, { batch_id: batch.id, files: batch.fileCounts.total });
    res.json(fileBatchObject(batch));
  });
  router.get(`${BASE}/:vectorStoreId/file_batches/:batchId`, doc({ summary: "One file batch, with its counts", tag: TAG }), read, async (req, res) => {
    const { batch } = await files.getBatch(principalOf(res.locals), routeParam(req, "vectorStoreId"), routeParam(req, "batchId"));
    res.json(fileBatchObject(batch));
  });
  router.post(`${BASE}/:vectorStoreId/file_batches/:batchId/cancel`, doc({ summary: "Cancel a file batch: what is still indexing stops and is deleted", tag: TAG }), trail("document.delete", { params: ["vectorStoreId", "batchId"] }), write, async (req, res) => {
    const { store, batch } = await files.cancelBatch(principalOf(res.locals), routeParam(req, "vectorStoreId"), routeParam(req, "batchId"));
    audit(res, store, { cancelled: batch.fileCounts.cancelled });
    res.json(fileBatchObject(batch));
  });
  router.get(`${BASE}/:vectorStoreId/file_batches/:batchId/files`, doc({ summary: "List a file batch's files", tag: TAG, query: VectorStoreFileListQuerySchema }), read, async (req, res) => {
    const query = parseWith(VectorStoreFileListQuerySchema, req.query, "query string");
    const { store, files: result } = await files.listBatchFiles(principalOf(res.locals), routeParam(req, "vectorStoreId"), routeParam(req, "batchId"), toPageRequest(query), query.filter);
    res.json(listObject(result.data.map((f) => vectorStoreFileObject(store.id, f)), result.hasMore));
  });
  return router;
}
