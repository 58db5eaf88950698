/** Corpora, their documents, uploads, indexing events and cited passages. */
import type { ApiClient } from "./client.js";
import type { ChunkContext, Corpus, CorpusDeleted, CorpusEvent, CreateCorpusRequest, ListPage, PatchCorpusRequest, RagDocument, UploadResult } from "./contract.js";
import { parseJsonData } from "./sse.js";

const base = (id: string) => `/v1/rag/corpora/${encodeURIComponent(id)}`;

export const listCorpora = (c: ApiClient) => c.json<ListPage<Corpus>>("GET", "/v1/rag/corpora?limit=100");
export const getCorpus = (c: ApiClient, id: string) => c.json<Corpus>("GET", base(id));
export const createCorpus = (c: ApiClient, body: CreateCorpusRequest) => c.json<Corpus>("POST", "/v1/rag/corpora", { json: body });
export const patchCorpus = (c: ApiClient, id: string, body: PatchCorpusRequest) => c.json<Corpus>("PATCH", base(id), { json: body });
export const deleteCorpus = (c: ApiClient, id: string) => c.json<CorpusDeleted>("DELETE", base(id));

/** Every document of a corpus (follows `has_more`). */
/** Every document of a corpus (at most 5,000), or only those with `status`. */
export async function listDocuments(c: ApiClient, id: string, status?: RagDocument["status"]): Promise<RagDocument[]> {
  const all: RagDocument[] = [];
  let after: string | null = null;
  for (let i = 0; i < 50; i++) {
    const query: string = `?limit=100&order=asc${status ? `&status=${status}` : ""}${after ? `&after=${encodeURIComponent(after)}` : ""}`;
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

/** The original bytes of a document (for pdf.js). */
export async function getDocumentContent(c: ApiClient, id: string, documentId: string, signal?: AbortSignal): Promise<ArrayBuffer> {
  const res = await c.request("GET", `${base(id)}/documents/${encodeURIComponent(documentId)}/content`, { signal });
  return res.arrayBuffer();
}
