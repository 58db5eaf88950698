/** Corpora, their documents, uploads, indexing events and cited passages. */
import type { ApiClient } from "./client.js";
import type { ChunkContext, Corpus, CorpusDeleted, CorpusEvent, CreateCorpusRequest, ListPage, OcrPage, OcrStatus, PatchCorpusRequest, RagDocument, UploadResult } from "./contract.js";
import { parseJsonData } from "./sse.js";

const base = (id: string) => `/v1/rag/corpora/${encodeURIComponent(id)}`;

export const listCorpora = (c: ApiClient) => c.json<ListPage<Corpus>>("GET", "/v1/rag/corpora?limit=100");
export const getCorpus = (c: ApiClient, id: string) => c.json<Corpus>("GET", base(id));
export const createCorpus = (c: ApiClient, body: CreateCorpusRequest) => c.json<Corpus>("POST", "/v1/rag/corpora", { json: body });
export const patchCorpus = (c: ApiClient, id: string, body: PatchCorpusRequest) => c.json<Corpus>("PATCH", base(id), { json: body });
export const deleteCorpus = (c: ApiClient, id: string) => c.json<CorpusDeleted>("DELETE", base(id));

/**
 * The documents uploaded to a corpus (at most 5,000, following `has_more`; what came out of
 * them, a mailbox's messages, is listed per document with `listChildDocuments`), or every
 * document with `status`, wherever it came from.
 */
export async function listDocuments(c: ApiClient, id: string, status?: RagDocument["status"]): Promise<RagDocument[]> {
  const all: RagDocument[] = [];
  let after: string | null = null;
  for (let i = 0; i < 50; i++) {
    const query: string = `?limit=100&order=asc${status ? `&status=${status}` : "&parent_document_id=none"}${after ? `&after=${encodeURIComponent(after)}` : ""}`;
    const page = await c.json<ListPage<RagDocument>>("GET", `${base(id)}/documents${query}`);
    all.push(...page.data);
    if (!page.has_more || !page.last_id) break;
    after = page.last_id;
  }
  return all;
}

/** Uploads 1–100 files in one multipart request (`file` parts). */
export function uploadDocuments(c: ApiClient, id: string, files: readonly File[], signal?: AbortSignal): Promise<UploadResult> {
  const form = new FormData();
  for (const file of files) form.append("file", file, file.name);
  return c.json<UploadResult>("POST", `${base(id)}/documents`, { body: form, signal });
}

export const getDocument = (c: ApiClient, id: string, documentId: string, signal?: AbortSignal) => c.json<RagDocument>("GET", `${base(id)}/documents/${encodeURIComponent(documentId)}`, { signal });

/**
 * One page of the documents that came out of `parentId` (an e-mail's attachments, a
 * mailbox's messages), in their order in it; `after` continues from the last one shown.
 */
export function listChildDocuments(c: ApiClient, id: string, parentId: string, options: { after?: string | null; limit?: number; signal?: AbortSignal } = {}): Promise<ListPage<RagDocument>> {
  const query = new URLSearchParams({ limit: String(options.limit ?? 50), order: "asc", parent_document_id: parentId });
  if (options.after) query.set("after", options.after);
  return c.json<ListPage<RagDocument>>("GET", `${base(id)}/documents?${query.toString()}`, { signal: options.signal });
}

export const deleteDocument = (c: ApiClient, id: string, documentId: string) => c.json<unknown>("DELETE", `${base(id)}/documents/${encodeURIComponent(documentId)}`);

/** Follows a corpus's indexing events until `signal` aborts or the corpus is deleted. */
export function followCorpusEvents(c: ApiClient, id: string, onEvent: (event: CorpusEvent) => void, signal: AbortSignal): Promise<void> {
  return c.sse(
    "GET",
    `${base(id)}/events`,
    (data) => {
      const event = parseJsonData<CorpusEvent>(data);
      onEvent(event);
      return event.object === "rag.corpus.deleted" ? "stop" : undefined;
    },
    { signal },
  );
}

export const getChunk = (c: ApiClient, id: string, chunkId: string, signal?: AbortSignal) => c.json<ChunkContext>("GET", `${base(id)}/chunks/${encodeURIComponent(chunkId)}`, { signal });

/** Whether this server reads scans and images (OCR), and in which languages. */
export const getOcrStatus = (c: ApiClient, signal?: AbortSignal) => c.json<OcrStatus>("GET", "/v1/rag/ocr", { signal });

/** Fetches one language's data for the built-in OCR engine (resolves once it is installed; needs `workspaces.manage`). */
export const fetchOcrLanguage = (c: ApiClient, language: string) => c.json<OcrStatus>("POST", `/v1/rag/ocr/languages/${encodeURIComponent(language)}`);

const pagePath = (id: string, documentId: string, page: number) => `${base(id)}/documents/${encodeURIComponent(documentId)}/pages/${page}`;

/** The words OCR read on a page of a document, with their boxes on the page image. */
export const getOcrPage = (c: ApiClient, id: string, documentId: string, page: number, signal?: AbortSignal) => c.json<OcrPage>("GET", `${pagePath(id, documentId, page)}/ocr`, { signal });

/** A page of an image document as an image (fetched with the client's credentials, for a blob URL). */
export async function getPageImage(c: ApiClient, id: string, documentId: string, page: number, signal?: AbortSignal): Promise<Blob> {
  const res = await c.request("GET", `${pagePath(id, documentId, page)}/image`, { signal, headers: { accept: "image/*" } });
  return res.blob();
}

/** The original bytes of a document (for pdf.js). */
export async function getDocumentContent(c: ApiClient, id: string, documentId: string, signal?: AbortSignal): Promise<ArrayBuffer> {
  const res = await c.request("GET", `${base(id)}/documents/${encodeURIComponent(documentId)}/content`, { signal });
  return res.arrayBuffer();
}
