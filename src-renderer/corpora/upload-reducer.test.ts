import { describe, expect, it } from "vitest";
import type { RagDocument, UploadResult } from "../api/contract.js";
import { translate } from "../i18n/i18n.js";
import { phaseText } from "./corpus-status.js";
import { initialUploadState, rowView, uploadReducer, uploadSummary, type UploadAction, type UploadState } from "./upload-reducer.js";

const doc = (id: string, filename: string): RagDocument => ({ id, object: "rag.document", corpus_id: "c", filename, content_type: "text/plain", bytes: 1, sha256: "", status: "queued", error: null, page_count: null, chunk_count: 0, metadata: {}, created_at: 0, indexed_at: null, parent_document_id: null, relation: null, position: null, children: { attachments: 0, messages: 0 }, ocr: null });
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
      { type: "event", event: { object: "rag.document.progress", document_id: "doc_1", stage: "embedding", done: 3, total: 10, ocr: false } },
    ]);
    expect(phases(s)).toEqual(["uploading"]);
    s = uploadReducer(s, { type: "accepted", batch: "b1", result });
    expect(rowView(s, s.rows[0]!)).toMatchObject({ phase: "embedding", progress: { done: 3, total: 10 } });
    s = uploadReducer(s, { type: "event", event: { object: "rag.document.status", document_id: "doc_1", status: "failed", error: { code: "corrupt_document", message: "bad" }, chunk_count: 0 } });
    expect(rowView(s, s.rows[0]!)).toMatchObject({ phase: "failed", error: { code: "corrupt_document" } });
    // A late progress event does not revive a finished document.
    s = uploadReducer(s, { type: "event", event: { object: "rag.document.progress", document_id: "doc_1", stage: "storing", done: 1, total: 1, ocr: false } });
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

  it("tells OCR's pages from the indexer's opening 'parsing 0 of 1': a scan reads 'Reading page 3 of 12 (OCR)', a text PDF never mentions OCR", () => {
    const result: UploadResult = { object: "rag.upload", corpus_id: "c", documents: [doc("doc_1", "scan.pdf"), doc("doc_2", "text.pdf"), doc("doc_3", "one-page.png")], rejected: [] };
    const progress = (id: string, done: number, total: number, stage: "parsing" | "chunking" = "parsing", ocr = false) => ({ type: "event" as const, event: { object: "rag.document.progress" as const, document_id: id, stage, done, total, ocr } });
    const ocrPage = (id: string, done: number, total: number) => progress(id, done, total, "parsing", true);
    const processing = (id: string) => ({ type: "event" as const, event: { object: "rag.document.status" as const, document_id: id, status: "processing" as const, error: null, chunk_count: 0 } });
    let s = run([
      { type: "add", batch: "b1", files: [{ name: "scan.pdf", size: 1 }, { name: "text.pdf", size: 1 }, { name: "one-page.png", size: 1 }] },
      { type: "accepted", batch: "b1", result },
      processing("doc_1"),
      progress("doc_1", 0, 1),
      processing("doc_2"),
      progress("doc_2", 0, 1),
      processing("doc_3"),
      progress("doc_3", 0, 1),
    ]);
    const text = (i: number) => phaseText((key, vars) => translate("en", key, vars), rowView(s, s.rows[i]!));
    expect([text(0), text(1), text(2)]).toEqual(["Reading", "Reading", "Reading"]);
    s = [ocrPage("doc_1", 0, 12), ocrPage("doc_1", 1, 12), ocrPage("doc_1", 2, 12), ocrPage("doc_3", 0, 1)].reduce(uploadReducer, s);
    expect(rowView(s, s.rows[0]!)).toMatchObject({ phase: "parsing", ocr: true, progress: { done: 2, total: 12 } });
    expect(text(0)).toBe("Reading page 3 of 12 (OCR)");
    expect(text(1)).toBe("Reading");
    // A one-page scan: its "0 of 1" after the indexer's is OCR's (the event says so).
    expect(text(2)).toBe("Reading page 1 of 1 (OCR)");
    s = [ocrPage("doc_1", 12, 12), progress("doc_2", 0, 1, "chunking")].reduce(uploadReducer, s);
    expect(text(0)).toBe("Read 12 pages (OCR)");
    expect(text(1)).toBe("Splitting");
    // In Malay too.
    expect(phaseText((key, vars) => translate("ms", key, vars), { phase: "parsing", ocr: true, progress: { done: 2, total: 12 }, error: null })).toBe("Membaca halaman 3 daripada 12 (OCR)");
  });
});
