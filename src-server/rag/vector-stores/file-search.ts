/**
 * The Responses API's `file_search` tool, run as Pustaka answers from a corpus: the
 * question is searched in the named vector stores (the same search as
 * `/v1/vector_stores/{id}/search`), and the chat model answers from the passages found,
 * numbered, citing them (`rag/answer/grounded-prompt.ts`); the citations become
 * `file_citation` annotations naming each passage's file. The search runs once per
 * request, before generation, with the user's last message as the query: a small local
 * model does not reliably decide to call a tool or write its own queries, and a question put
 * to a vector store is what that tool is for.
 */
import type { Principal } from "../../domain/scopes.js";
import type { ChatMessage } from "../../engine/types.js";
import { invalidRequest } from "../../errors.js";
import { randomBase62 } from "../../ids.js";
import { attribute, attributionPlan } from "../answer/attribution.js";
import type { MarkerAnnotation } from "../answer/citation-markers.js";
import { groundedMessages } from "../answer/grounded-prompt.js";
import type { AttributeFilter } from "./attribute-filter.js";
import type { SearchOptions, VectorStoreHit, VectorStoreSearch } from "./vector-store-search.js";

export interface FileSearchTool {
  vectorStoreIds: string[];
  /** 1–50; default `FILE_SEARCH_DEFAULT_RESULTS`. */
  maxResults: number;
  filters?: AttributeFilter | undefined;
  ranking?: SearchOptions["ranking"];
}

/** Passages a file_search puts before the model by default: what a small model's context holds with room to answer. */
export const FILE_SEARCH_DEFAULT_RESULTS = 5;

export interface FileSearchRun {
  /** The output item's id (`fs_…`). */
  id: string;
  queries: string[];
  hits: VectorStoreHit[];
  queryTokens: number;
}

/** The text of the conversation's last user message: what is searched. */
export function lastUserText(messages: readonly ChatMessage[]): string {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i]!;
    if (m.role === "user" && typeof m.content === "string" && m.content.trim()) return m.content.trim();
  }
  throw invalidRequest("file_search needs a user message to search for", "invalid_parameter", "input");
}

export async function runFileSearch(search: VectorStoreSearch, principal: Principal, tool: FileSearchTool, query: string, signal: AbortSignal): Promise<FileSearchRun> {
  const found = await search.search(principal, tool.vectorStoreIds, query, { maxResults: tool.maxResults, filters: tool.filters, ranking: tool.ranking }, signal);
  return { id: `fs_${randomBase62(24)}`, queries: found.searchQuery, hits: found.hits, queryTokens: found.queryTokens };
}

/**
 * The conversation with the passages found: the grounded instructions join the system
 * message (after the request's own instructions), and the last user message carries the
 * numbered sources before its question.
 */
export function withSources(messages: readonly ChatMessage[], run: FileSearchRun): ChatMessage[] {
  const question = lastUserText(messages);
  const [system, user] = groundedMessages(
    question,
    run.hits.map((h, i) => ({ index: i + 1, filename: h.filename, pageStart: h.pageStart, pageEnd: h.pageEnd, headingPath: h.headingPath, text: h.text })),
  );
  const noSources = run.hits.length === 0 ? "\n\n(No passage in the vector stores matched the question.)" : "";
  const out: ChatMessage[] = [];
  let systemDone = false;
  let last = -1;
  messages.forEach((m, i) => {
    if (m.role === "user") last = i;
  });
  messages.forEach((m, i) => {
    if (m.role === "system" && !systemDone) {
      out.push({ role: "system", content: `${m.content}\n\n${system!.content as string}` });
      systemDone = true;
    } else if (i === last) {
      out.push({ role: "user", content: `${user!.content as string}${noSources}` });
    } else out.push(m);
  });
  if (!systemDone) out.unshift(system!);
  return out;
}

/** A place in the answer's text (markers taken out) and the file it cites. */
export interface FileCitationAt {
  index: number;
  fileId: string;
  filename: string;
}

/**
 * The answer's citations of files: where the model put markers, and — for a sentence a
 * passage supports that the model left unmarked (small models often do) — at the sentence's
 * end, for each passage the attribution finds supporting it. One citation per file and place.
 */
export function fileCitations(text: string, markers: readonly MarkerAnnotation[], run: FileSearchRun, options: { attribution?: boolean } = {}): FileCitationAt[] {
  const out: FileCitationAt[] = [];
  const add = (index: number, source: number) => {
    const hit = run.hits[source - 1];
    if (!hit || out.some((a) => a.index === index && a.fileId === hit.fileId)) return;
    out.push({ index, fileId: hit.fileId, filename: hit.filename });
  };
  for (const m of markers) add(m.index, m.source);
  if (options.attribution !== false && run.hits.length > 0 && text.trim()) {
    const sources = run.hits.map((h, i) => ({ index: i + 1, text: h.text }));
    const { sentences } = attribute(attributionPlan(text, sources), sources);
    for (const s of sentences) {
      if (!s.supported || markers.some((m) => m.index >= s.start && m.index <= s.end)) continue;
      // At the end of the sentence's words, before its closing punctuation.
      let end = s.end;
      while (end > s.start && /[\s.!?;:]/.test(text[end - 1]!)) end--;
      for (const source of s.citations) add(end, source);
    }
  }
  // Marker citations first, in the order written (a stream announces them as they come), then the attribution's.
  return out;
}
