/** Streamed chat completions and streamed grounded answers. */
import { ApiError, isErrorBody } from "./api-error.js";
import type { ApiClient } from "./client.js";
import type { AnswerStreamEvent, ChatCompletionChunk, ChatRequest, QueryRequest } from "./contract.js";
import { parseJsonData } from "./sse.js";

/** Streams `POST /v1/chat/completions`; `onDelta` gets each piece of text. Ends at `[DONE]`. */
export async function streamChat(c: ApiClient, request: Omit<ChatRequest, "stream">, onDelta: (text: string) => void, signal: AbortSignal): Promise<{ model: string | null }> {
  let model: string | null = null;
  const failure: { error: ApiError | null } = { error: null };
  await c.sse(
    "POST",
    "/v1/chat/completions",
    (data) => {
      if (data === "[DONE]") return "stop";
      const payload = parseJsonData<ChatCompletionChunk | { error: unknown }>(data);
      if (isErrorBody(payload)) {
        failure.error = ApiError.fromStreamBody(payload);
        return "stop";
      }
      const chunk = payload as ChatCompletionChunk;
      model = chunk.model;
      const text = chunk.choices[0]?.delta.content;
      if (text) onDelta(text);
      return undefined;
    },
    { json: { ...request, stream: true }, signal },
  );
  if (failure.error) throw failure.error;
  return { model };
}

export type AnswerEnd = Extract<AnswerStreamEvent, { object: "rag.answer.citations" }>;

/** Streams `POST /v1/rag/corpora/{id}/query`: deltas, then the citations event that ends it. */
export async function streamQuery(c: ApiClient, corpusId: string, request: Omit<QueryRequest, "stream">, onDelta: (text: string) => void, signal: AbortSignal): Promise<AnswerEnd> {
  let end: AnswerEnd | null = null;
  const failure: { error: ApiError | null } = { error: null };
  await c.sse(
    "POST",
    `/v1/rag/corpora/${encodeURIComponent(corpusId)}/query`,
    (data) => {
      const payload = parseJsonData<AnswerStreamEvent | { error: unknown }>(data);
      if (isErrorBody(payload)) {
        failure.error = ApiError.fromStreamBody(payload);
        return "stop";
      }
      const event = payload as AnswerStreamEvent;
      if (event.object === "rag.answer.delta") onDelta(event.delta);
      else if (event.object === "rag.answer.citations") {
        end = event;
        return "stop";
      }
      return undefined;
    },
    { json: { ...request, stream: true }, signal },
  );
  if (failure.error) throw failure.error;
  if (!end) throw new ApiError({ status: 200, message: "the answer stream ended before its citations", code: "stream_incomplete" });
  return end;
}
