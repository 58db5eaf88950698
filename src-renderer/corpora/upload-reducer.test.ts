import { describe, expect, it } from "vitest";
import type { RagDocument, UploadResult } from "../api/contract.js";
import { initialUploadState, rowView, uploadReducer, uploadSummary, type UploadAction, type UploadState } from "./upload-reducer.js";

const doc = (id: string, filename: string): RagDocument => ({ id, object: "rag.document", corpus_id: "c", filename, content_type: "text/plain", bytes: 1, sha256: "", status: "queued", error: null, page_count: null, chunk_count: 0, metadata: {}, created_at: 0, indexed_at: null });
const run = (actions: UploadAction[]) => actions.reduce(uploadReducer, initialUploadState);
const phases = (s: UploadState) => s.rows.map((r) => rowView(s, r).phase);

describe("uploadReducer", () => {
  const files = [
    { name: "a.pdf", size: 10 },
    { name: "b.txt", size: 5 },
    { name: "a.pdf", size: 11 },
  ];

  it("matches the 202's documents and rejections to the picked files, duplicates names in order", () => {
    const result: UploadResult = { object: "rag.upload", corpus_id: "c", documents: [doc("doc_1", "a.pdf"), doc("doc_2", "a.pdf")], rejected: [{ filename: "b.txt", error: { code: "empty_file", message: "empty" } }] };
    const s = run([{ type: "add", batch: "b1", files }, { type: "accepted", batch: "b1", result }]);
    expect(s.rows.map((r) => r.documentId)).toEqual(["doc_1", null, "doc_2"]);
    expect(phases(s)).toEqual(["queued", "rejected", "queued"]);
    expect(s.rows[1]!.error?.code).toBe("empty_file");
  });

  it("follows indexing events, including ones that arrive before the 202", () => {
    const result: UploadResult = { object: "rag.upload", corpus_id: "c", documents: [doc("doc_1", "a.pdf")], rejected: [] };
    let s = run([
      { type: "add", batch: "b1", files: [files[0]!] },
      { type: "event", event: { object: "rag.document.progress", document_id: "doc_1", stage: "embedding", done: 3, total: 10 } },
    ]);
    expect(phases(s)).toEqual(["uploading"]);
    s = uploadReducer(s, { type: "accepted", batch: "b1", result });
    expect(rowView(s, s.rows[0]!)).toMatchObject({ phase: "embedding", progress: { done: 3, total: 10 } });
    s = uploadReducer(s, { type: "event", event: { object: "rag.document.status", document_id: "doc_1", status: "failed", error: { code: "corrupt_document", message: "bad" }, chunk_count: 0 } });
    expect(rowView(s, s.rows[0]!)).toMatchObject({ phase: "failed", error: { code: "corrupt_document" } });
    // A late progress event does not revive a finished document.
    s = uploadReducer(s, { type: "event", event: { object: "rag.document.progress", document_id: "doc_1", stage: "storing", done: 1, total: 1 } });
    expect(phases(s)).toEqual(["failed"]);
  });

  it("gives every file of a refused upload its own reason, else the request's", () => {
    const s = run([
      { type: "add", batch: "b1", files },
      { type: "failed", batch: "b1", error: { code: "unsupported_file_type", message: "nothing accepted" }, rejected: [{ filename: "b.txt", error: { code: "file_too_large", message: "big" } }] },
    ]);
    expect(s.rows.map((r) => r.error?.code)).toEqual(["unsupported_file_type", "file_too_large", "unsupported_file_type"]);
    expect(uploadSummary(s)).toEqual({ total: 3, done: 0, failed: 3, active: 0 });
  });

  it("clears finished rows and keeps active ones", () => {
    const result: UploadResult = { object: "rag.upload", corpus_id: "c", documents: [doc("doc_1", "a.pdf"), doc("doc_2", "b.txt")], rejected: [] };
    let s = run([{ type: "add", batch: "b1", files: files.slice(0, 2) }, { type: "accepted", batch: "b1", result }]);
    s = uploadReducer(s, { type: "event", event: { object: "rag.document.status", document_id: "doc_1", status: "indexed", error: null, chunk_count: 4 } });
    s = uploadReducer(s, { type: "clear-finished" });
    expect(s.rows.map((r) => r.filename)).toEqual(["b.txt"]);
  });
});
