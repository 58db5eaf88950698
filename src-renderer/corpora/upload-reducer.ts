/**
 * The state of files being uploaded and indexed: each picked file is a row that moves
 * uploading → queued → parsing/chunking/embedding/storing → indexed | failed, or is
 * rejected with the server's reason. Indexing events may arrive before the upload's
 * 202 names the document, so per-document state is kept apart from the rows.
 */
import type { CorpusEvent, ErrorDetail, FileRejection, UploadResult } from "../api/contract.js";

export type Phase = "uploading" | "queued" | "parsing" | "chunking" | "embedding" | "storing" | "indexed" | "failed" | "rejected";

export interface DocState {
  phase: Phase;
  progress: { done: number; total: number } | null;
  error: ErrorDetail | null;
  /** While parsing: the progress counts pages read by OCR (of the pages that need it). */
  ocr?: boolean;
}

export interface UploadRow {
  key: string;
  batch: string;
  filename: string;
  bytes: number;
  documentId: string | null;
  /** Phase before the server names the document (uploading, rejected, failed upload). */
  phase: Phase;
  error: ErrorDetail | null;
}

export interface UploadState {
  rows: UploadRow[];
  docs: Record<string, DocState>;
}

/** The server's per-request limit on `file` parts. */
export const MAX_FILES = 100;

export type UploadAction =
  | { type: "add"; batch: string; files: { name: string; size: number }[] }
  | { type: "accepted"; batch: string; result: UploadResult }
  | { type: "failed"; batch: string; error: ErrorDetail; rejected?: FileRejection[] }
  | { type: "event"; event: CorpusEvent }
  | { type: "clear-finished" };

export const initialUploadState: UploadState = { rows: [], docs: {} };

const FINISHED: readonly Phase[] = ["indexed", "failed", "rejected"];

export function uploadReducer(state: UploadState, action: UploadAction): UploadState {
  switch (action.type) {
    case "add": {
      const rows = action.files.map((file, i): UploadRow => ({ key: `${action.batch}:${i}`, batch: action.batch, filename: file.name, bytes: file.size, documentId: null, phase: "uploading", error: null }));
      return { ...state, rows: [...state.rows, ...rows] };
    }
    case "accepted": {
      const documents = [...action.result.documents];
      const rejected = [...action.result.rejected];
      const rows = state.rows.map((row): UploadRow => {
        if (row.batch !== action.batch || row.phase !== "uploading") return row;
        const d = documents.findIndex((doc) => doc.filename === row.filename);
        if (d >= 0) {
          const [doc] = documents.splice(d, 1);
          return { ...row, documentId: doc!.id, phase: doc!.status === "failed" ? ("failed") : ("queued"), error: doc!.error };
        }
        const r = rejected.findIndex((rej) => rej.filename === row.filename);
        if (r >= 0) {
          const [rej] = rejected.splice(r, 1);
          return { ...row, phase: "rejected", error: rej!.error };
        }
        return { ...row, phase: "rejected", error: { code: "unknown", message: "the server did not report this file" } };
      });
      return { ...state, rows };
    }
    case "failed": {
      const rejected = [...(action.rejected ?? [])];
      const rows = state.rows.map((row): UploadRow => {
        if (row.batch !== action.batch || row.phase !== "uploading") return row;
        const r = rejected.findIndex((rej) => rej.filename === row.filename);
        const error = r >= 0 ? rejected.splice(r, 1)[0]!.error : action.error;
        return { ...row, phase: "rejected", error };
      });
      return { ...state, rows };
    }
    case "event":
      return applyEvent(state, action.event);
    case "clear-finished":
      return { ...state, rows: state.rows.filter((row) => !FINISHED.includes(rowView(state, row).phase)) };
  }
}

function applyEvent(state: UploadState, event: CorpusEvent): UploadState {
  if (event.object === "rag.document.progress") {
    const previous = state.docs[event.document_id];
    if (previous && FINISHED.includes(previous.phase)) return state;
    // The indexer opens parsing with "0 of 1"; the pages OCR reads come after, marked so.
    const ocr = event.stage === "parsing" && event.ocr;
    const doc: DocState = { phase: event.stage, progress: { done: event.done, total: event.total }, error: null, ...(ocr ? { ocr } : {}) };
    return { ...state, docs: { ...state.docs, [event.document_id]: doc } };
  }
  if (event.object === "rag.document.status") {
    const previous = state.docs[event.document_id];
    let doc: DocState;
    if (event.status === "indexed") doc = { phase: "indexed", progress: null, error: null };
    else if (event.status === "failed") doc = { phase: "failed", progress: null, error: event.error };
    else if (event.status === "queued") doc = { phase: "queued", progress: null, error: null };
    else doc = previous && previous.phase !== "queued" ? previous : { phase: "parsing", progress: null, error: null };
    return { ...state, docs: { ...state.docs, [event.document_id]: doc } };
  }
  return state;
}

/** A row as shown: its own phase until the server names the document, then the document's. */
export function rowView(state: UploadState, row: UploadRow): DocState {
  const doc = row.documentId ? state.docs[row.documentId] : undefined;
  if (doc) return doc;
  return { phase: row.phase, progress: null, error: row.error };
}

/** Counts for the live summary read to screen readers. */
export function uploadSummary(state: UploadState): { total: number; done: number; failed: number; active: number } {
  let done = 0;
  let failed = 0;
  for (const row of state.rows) {
    const { phase } = rowView(state, row);
    if (phase === "indexed") done++;
    else if (phase === "failed" || phase === "rejected") failed++;
  }
  return { total: state.rows.length, done, failed, active: state.rows.length - done - failed };
}
