/**
 * One row of the documents table: the file (with its relation when it came out of another
 * document, what OCR read of it, and a fold for what came out of it), its figures and live
 * state; and the rows of a folded document's attachments or messages, a page at a time.
 */
import { useInfiniteQuery } from "@tanstack/react-query";
import { ChevronRight, Mail, Paperclip, ScanText, Trash2, TriangleAlert } from "lucide-react";
import type { ReactNode } from "react";
import { useApi } from "../api/api-context.js";
import type { RagDocument } from "../api/contract.js";
import { listChildDocuments } from "../api/corpora-api.js";
import { describeCode } from "../i18n/describe-error.js";
import { countOf, useI18n } from "../i18n/i18n.js";
import { formatBytes, fraction } from "../lib/format.js";
import { ErrorNotice } from "../ui/ErrorNotice.js";
import { ProgressBar } from "../ui/ProgressBar.js";
import { StatusBadge } from "../ui/StatusBadge.js";
import { phaseText, phaseTone } from "./corpus-status.js";
import { ocrFigures, type Children, type DocumentTree } from "./document-tree.js";
import type { DocState, Phase } from "./upload-reducer.js";

/** Attachments or messages fetched per "Show more". */
export const CHILDREN_PAGE = 50;

export interface DocumentRowProps {
  corpusId: string;
  doc: RagDocument;
  /** 0 for an upload, 1 for what came out of it, and so on. */
  level: number;
  live: Record<string, DocState>;
  tree: DocumentTree;
  expanded: ReadonlySet<string>;
  onToggle: (id: string) => void;
  onDelete: (doc: RagDocument) => void;
  onOcr: (doc: RagDocument) => void;
  /** Name the document's relation to its parent (under its parent, or in a filtered list). */
  showRelation?: boolean;
}

function phaseOf(doc: RagDocument, live: DocState | undefined): DocState {
  if (doc.status === "indexed" || doc.status === "failed") return { phase: doc.status, progress: null, error: doc.error };
  // A live event is newer than a list fetched before it: an "indexed" event must not fall back to
  // "Reading" while the list is being fetched again.
  if (live) return live;
  return { phase: doc.status === "queued" ? "queued" : ("parsing" satisfies Phase), progress: null, error: null };
}

/** "3 attachments", "5,000 messages", "2 attachments and 1 message". */
function derivedLabel(t: ReturnType<typeof useI18n>["t"], number: (n: number) => string, c: Children): string {
  const parts: string[] = [];
  if (c.messages > 0) parts.push(countOf(t, "documents.messages", c.messages, number));
  if (c.attachments > 0) parts.push(countOf(t, "documents.attachments", c.attachments, number));
  return parts.join(t("documents.and"));
}

export function DocumentRow({ doc, level, live, tree, expanded, onToggle, onDelete, onOcr, showRelation = false }: DocumentRowProps) {
  const { t, number, dateTime } = useI18n();
  const state = phaseOf(doc, live[doc.id]);
  const error = state.error ? describeCode(t, state.error.code, state.error.message) : null;
  const active = state.phase !== "indexed" && state.phase !== "failed";
  const label = phaseText(t, state, number);
  const derived = tree.children.get(doc.id);
  const open = expanded.has(doc.id);
  const ocr = ocrFigures(doc.ocr);
  const pagesText = ocr ? countOf(t, "ocr.pages", ocr.pages, number) : "";
  const relation = showRelation && doc.relation ? doc.relation : null;
  const RelationIcon = relation === "message" ? Mail : Paperclip;

  return (
    <tr className={level > 0 ? "doc-row child" : "doc-row"} data-level={level}>
      <td className="doc-file" style={{ paddingLeft: level > 0 ? `${12 + Math.min(level, 4) * 22}px` : undefined }}>
        <div className="doc-name-line">
          {relation && (
            <span className="doc-relation" title={t(`documents.relation.${relation}`)}>
              <RelationIcon aria-hidden="true" size={13} />
              <span className="sr-only">{t(`documents.relation.${relation}`)}: </span>
            </span>
          )}
          <span className="doc-name" title={doc.filename}>
            {doc.filename}
          </span>
        </div>
        {(derived || ocr) && (
          <div className="doc-meta">
            {derived && (
              <button type="button" className="doc-fold" aria-expanded={open} aria-label={`${derivedLabel(t, number, derived)} — ${doc.filename}`} onClick={() => onToggle(doc.id)}>
                <ChevronRight aria-hidden="true" size={14} className="doc-fold-icon" />
                {derivedLabel(t, number, derived)}
              </button>
            )}
            {ocr && (
              <button type="button" className={ocr.low ? "ocr-chip low" : "ocr-chip"} onClick={() => onOcr(doc)} aria-haspopup="dialog" aria-label={t(ocr.low ? "ocr.chipLabelLow" : "ocr.chipLabel", { name: doc.filename, pages: pagesText, confidence: ocr.confidence })}>
                {ocr.low ? <TriangleAlert aria-hidden="true" size={12} /> : <ScanText aria-hidden="true" size={12} />}
                <span>{t("ocr.chip", { pages: pagesText, confidence: ocr.confidence })}</span>
                {ocr.low && <span className="ocr-chip-low">{t("ocr.low")}</span>}
              </button>
            )}
          </div>
        )}
      </td>
      <td className="num">{doc.page_count ?? "—"}</td>
      <td className="num">{doc.status === "indexed" ? number(doc.chunk_count) : "—"}</td>
      <td className="num nowrap">{formatBytes(doc.bytes)}</td>
      <td className="doc-status">
        <div className="row">
          <StatusBadge tone={phaseTone[state.phase]}>{label}</StatusBadge>
          {active && <ProgressBar value={state.progress ? fraction(state.progress.done, state.progress.total) : null} label={t("upload.progressOf", { name: doc.filename })} valueText={state.ocr ? label : undefined} />}
        </div>
        {error && (
          <p className="doc-error">
            {error.title}
            {error.detail && <span className="muted"> — {error.detail}</span>}
          </p>
        )}
      </td>
      <td className="muted nowrap">{dateTime(doc.created_at)}</td>
      <td>
        <button type="button" className="icon-btn" aria-label={t("documents.deleteOne", { name: doc.filename })} onClick={() => onDelete(doc)}>
          <Trash2 aria-hidden="true" size={15} />
        </button>
      </td>
    </tr>
  );
}

/**
 * The documents that came out of `parent`, fetched CHILDREN_PAGE at a time from the server
 * (a mailbox may hold thousands), with a "Show more" row while there are more.
 */
export function ChildRows({ corpusId, parent, total, level, render }: { corpusId: string; parent: RagDocument; total: number; level: number; render: (doc: RagDocument) => ReactNode }) {
  const { t, number } = useI18n();
  const client = useApi();
  const query = useInfiniteQuery({
    queryKey: ["documents", corpusId, "children", parent.id],
    queryFn: ({ pageParam, signal }) => listChildDocuments(client, corpusId, parent.id, { after: pageParam, limit: CHILDREN_PAGE, signal }),
    initialPageParam: null as string | null,
    getNextPageParam: (last) => (last.has_more && last.last_id ? last.last_id : undefined),
  });
  const indent = { paddingLeft: `${12 + Math.min(level, 4) * 22}px` };
  if (query.isPending) {
    return (
      <tr className="doc-more">
        <td colSpan={7} style={indent} className="muted">
          {t("common.loading")}
        </td>
      </tr>
    );
  }
  if (query.isError) {
    return (
      <tr className="doc-more">
        <td colSpan={7} style={indent}>
          <ErrorNotice error={query.error} compact onRetry={() => void query.refetch()} />
        </td>
      </tr>
    );
  }
  const docs = query.data.pages.flatMap((p) => p.data);
  const left = Math.max(0, total - docs.length);
  return (
    <>
      {docs.map(render)}
      {query.hasNextPage && (
        <tr className="doc-more">
          <td colSpan={7} style={indent}>
            <button type="button" className="btn btn-small" disabled={query.isFetchingNextPage} onClick={() => void query.fetchNextPage()}>
              {query.isFetchingNextPage ? t("common.loading") : left > 0 ? t("documents.showMoreOf", { n: number(Math.min(CHILDREN_PAGE, left)), left: number(left), name: parent.filename }) : t("documents.showMoreAny", { name: parent.filename })}
            </button>
          </td>
        </tr>
      )}
    </>
  );
}
