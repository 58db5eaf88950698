/** Status words and tones for corpora and documents. */
import type { CorpusStatus } from "../api/contract.js";
import type { MessageKey, Translate } from "../i18n/i18n.js";
import type { Tone } from "../ui/StatusBadge.js";
import type { DocState, Phase } from "./upload-reducer.js";

export const corpusTone: Record<CorpusStatus, Tone> = { empty: "neutral", indexing: "info", ready: "success", failed: "danger" };
export const corpusLabel: Record<CorpusStatus, MessageKey> = { empty: "corpus.status.empty", indexing: "corpus.status.indexing", ready: "corpus.status.ready", failed: "corpus.status.failed" };

export const phaseTone: Record<Phase, Tone> = {
  uploading: "info",
  queued: "neutral",
  parsing: "info",
  chunking: "info",
  embedding: "info",
  storing: "info",
  indexed: "success",
  failed: "danger",
  rejected: "warning",
};

export const phaseLabel: Record<Phase, MessageKey> = {
  uploading: "phase.uploading",
  queued: "phase.queued",
  parsing: "phase.parsing",
  chunking: "phase.chunking",
  embedding: "phase.embedding",
  storing: "phase.storing",
  indexed: "phase.indexed",
  failed: "phase.failed",
  rejected: "phase.rejected",
};

/** A document's state in words: "Reading page 3 of 12 (OCR)" while OCR reads a scan, else the phase. */
export function phaseText(t: Translate, state: DocState, number: (n: number) => string = String): string {
  if (state.phase === "parsing" && state.ocr && state.progress && state.progress.total > 0) {
    const { done, total } = state.progress;
    if (done >= total) return t("phase.ocrDone", { total: number(total) });
    return t("phase.ocrPage", { n: number(done + 1), total: number(total) });
  }
  return t(phaseLabel[state.phase]);
}
