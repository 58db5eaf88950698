/**
 * Rerank wire format: the request shape llama.cpp's server, Jina and Cohere share
 * (`{model, query, documents, top_n, return_documents}`), documents as strings or as
 * Jina/Cohere `{text}` objects; the response is llama.cpp's (`object: "list"`, `usage`)
 * with Cohere's `id` and the optional `document: {text}` of Jina and Cohere.
 */
import { z } from "zod";
import type { RerankResponse } from "../../contract/index.js";
import type { RerankInput, RerankOutput } from "../../inference/rerank-service.js";
import { MAX_INPUT_CHARS } from "./embeddings-wire.js";

const DOCUMENT_ERROR = "each document must be a string or an object with a string 'text'";

const WireDocument = z.union([z.string().max(MAX_INPUT_CHARS), z.object({ text: z.string().max(MAX_INPUT_CHARS) })], { error: DOCUMENT_ERROR });

export const RerankRequestSchema = z
  .object({
    model: z.string().min(1).max(256).optional(),
    query: z.string({ error: "query is required and must be a string" }).min(1, "must not be empty").max(MAX_INPUT_CHARS),
    documents: z.array(WireDocument, { error: "documents is required and must be an array of strings or {text} objects" }).min(1, "must not be an empty array"),
    top_n: z.number().int().positive().optional(),
    return_documents: z.boolean().default(false),
  })
  .strict();

export type WireRerankRequest = z.infer<typeof RerankRequestSchema>;

/** The request in the service's terms. */
export function rerankInput(body: WireRerankRequest): RerankInput {
  return {
    model: body.model,
    query: body.query,
    documents: body.documents.map((d) => (typeof d === "string" ? d : d.text)),
    topN: body.top_n,
    returnDocuments: body.return_documents,
  };
}

export function rerankObject(id: string, output: RerankOutput): RerankResponse {
  return {
    id,
    object: "list",
    model: output.model,
    results: output.results.map((r) => ({ index: r.index, relevance_score: r.score, ...(r.document !== undefined ? { document: { text: r.document } } : {}) })),
    usage: { prompt_tokens: output.promptTokens, total_tokens: output.promptTokens },
  };
}
