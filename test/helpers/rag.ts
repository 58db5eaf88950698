/** Helpers for grounded-answer tests: uploads, waiting for indexing, reading event streams. */
import { readFileSync } from "node:fs";
import path from "node:path";
import { REPO_ROOT } from "./models.js";
import type { TestServer } from "./test-server.js";

export const EVAL_DOCS = path.join(REPO_ROOT, "test", "fixtures", "eval", "docs");

export interface UploadFile {
  name: string;
  content: Buffer | string;
}

export const evalDoc = (name: string): UploadFile => ({ name, content: readFileSync(path.join(EVAL_DOCS, name)) });

export async function upload(t: TestServer, corpusId: string, files: UploadFile[], metadata?: unknown, key = t.key) {
  const form = new FormData();
  if (metadata !== undefined) form.append("metadata", typeof metadata === "string" ? metadata : JSON.stringify(metadata));
  for (const f of files) form.append("file", new Blob([typeof f.content === "string" ? Buffer.from(f.content) : f.content]), f.name);
  const res = await fetch(`${t.url}/v1/rag/corpora/${corpusId}/documents`, { method: "POST", headers: { authorization: `Bearer ${key}` }, body: form });
  return { status: res.status, json: (await res.json()) as any };
}

export async function waitForStatus(t: TestServer, corpusId: string, timeoutMs = 300_000): Promise<any> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const corpus = (await t.call("GET", `/v1/rag/corpora/${corpusId}`)).json;
    if (corpus.status !== "indexing") return corpus;
    if (Date.now() > deadline) throw new Error(`corpus ${corpusId} still indexing after ${timeoutMs} ms: ${JSON.stringify(corpus.document_counts)}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** Collects SSE `data:` events until `until` says stop (or the stream ends). */
/** Reads an SSE stream's JSON events until `until` says so or the server ends it; `names` receives each event's `event:` name. */
export async function collectEvents(url: string, key: string, until: (event: any) => boolean, signal?: AbortSignal, names?: (string | undefined)[]): Promise<any[]> {
  const res = await fetch(url, { headers: { authorization: `Bearer ${key}` }, signal });
  const events: any[] = [];
  const decoder = new TextDecoder();
  let buffer = "";
  for await (const chunk of res.body!) {
    buffer += decoder.decode(chunk as Uint8Array, { stream: true });
    let end: number;
    while ((end = buffer.indexOf("\n\n")) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const data = block.split("\n").find((l) => l.startsWith("data: "));
      if (!data) continue;
      const event = JSON.parse(data.slice(6));
      events.push(event);
      names?.push(block.split("\n").find((l) => l.startsWith("event: "))?.slice(7));
      if (until(event)) return events;
    }
  }
  return events;
}
