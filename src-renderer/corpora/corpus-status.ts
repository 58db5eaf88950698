/** Status words and tones for corpora and documents. */
import type { CorpusStatus } from "../api/contract.js";
import type { MessageKey } from "../i18n/i18n.js";
import type { Tone } from "../ui/StatusBadge.js";
import type { Phase } from "./upload-reducer.js";

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
