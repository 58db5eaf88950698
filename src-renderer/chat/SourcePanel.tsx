/**
 * The cited passage in its document: for a PDF, the cited pages (pdf.js) with the passage
 * highlighted; for other formats, the surrounding text with the passage marked.
 */
import { useQuery } from "@tanstack/react-query";
import { X } from "lucide-react";
import { lazy, Suspense, useEffect, useRef } from "react";
import { isMissingEndpoint } from "../api/api-error.js";
import { useApi } from "../api/api-context.js";
import { getChunk } from "../api/corpora-api.js";
import { useI18n } from "../i18n/i18n.js";
import { ErrorNotice } from "../ui/ErrorNotice.js";
import { Skeleton } from "../ui/Skeleton.js";
import type { OpenSource } from "./ChatPage.js";
import { isPdf } from "./pdf-highlight.js";

const PdfView = lazy(() => import("./PdfView.js"));

export function SourcePanel({ source, onClose }: { source: OpenSource; onClose: () => void }) {
  const { t } = useI18n();
  const client = useApi();
  const heading = useRef<HTMLHeadingElement>(null);
  const { citation, corpusId } = source;
  const chunk = useQuery({ queryKey: ["chunk", corpusId, citation.chunk_id], queryFn: ({ signal }) => getChunk(client, corpusId, citation.chunk_id, signal), retry: false, staleTime: Infinity });

  useEffect(() => {
    heading.current?.focus();
  }, []);

  const pageStart = chunk.data?.page_start ?? citation.page_start ?? citation.page;
  const pageEnd = chunk.data?.page_end ?? citation.page_end;
  const pdf = isPdf(chunk.data?.content_type, citation.filename) && pageStart !== null;
  const passage = chunk.data?.text ?? citation.text;
  // The part of the passage that supports the answer (offsets into the citation's text).
  const support = citation.support && citation.support.end > citation.support.start ? citation.support : null;
  const supportText = support ? citation.text.slice(support.start, support.end) : null;
  const supportAt = supportText ? passage.indexOf(supportText) : -1;
  const chunkMissing = chunk.isError && isMissingEndpoint(chunk.error, ["chunk_not_found"]);

  return (
    <aside
      className="source-panel"
      aria-labelledby="source-title"
      onKeyDown={(e) => {
        if (e.key === "Escape") onClose();
      }}
    >
      <div className="source-head">
        <div className="source-head-text">
          <h2 id="source-title" ref={heading} tabIndex={-1}>
            <span className="source-n">{citation.index}</span> {citation.filename}
          </h2>
          <p className="source-sub">
            {pageStart !== null && (pageEnd !== null && pageEnd !== pageStart ? t("chat.pages", { from: pageStart, to: pageEnd }) : t("chat.page", { n: pageStart }))}
            {support?.page != null && pageEnd !== null && pageEnd !== pageStart && <span> · {t("source.supportPage", { n: support.page })}</span>}
            {chunk.data && chunk.data.heading_path.length > 0 && <span> · {chunk.data.heading_path.join(" › ")}</span>}
            <span> · {t("source.score", { score: citation.score.toFixed(3) })}</span>
          </p>
        </div>
        <button type="button" className="icon-btn" onClick={onClose} aria-label={t("source.close")}>
          <X aria-hidden="true" size={18} />
        </button>
      </div>
      <div className="source-body">
        {chunk.isPending && <Skeleton rows={6} />}
        {chunk.isError && !chunkMissing && <ErrorNotice error={chunk.error} compact />}
        {!chunk.isPending && pdf && pageStart !== null && (
          <Suspense fallback={<Skeleton rows={8} />}>
            <PdfView corpusId={corpusId} documentId={citation.document_id} pageStart={pageStart} pageEnd={pageEnd} passage={passage} focusPage={support?.page ?? null} support={supportText} />
          </Suspense>
        )}
        {!chunk.isPending && !pdf && (
          <div className="source-text">
            {chunk.data?.before && <p className="context">{chunk.data.before}</p>}
            <p className="passage">
              {supportAt >= 0 ? (
                <mark>
                  {passage.slice(0, supportAt)}
                  <strong className="support">{supportText}</strong>
                  {passage.slice(supportAt + supportText!.length)}
                </mark>
              ) : (
                <mark>{passage}</mark>
              )}
            </p>
            {chunk.data?.after && <p className="context">{chunk.data.after}</p>}
            {chunkMissing && <p className="field-hint">{t("source.contextUnavailable")}</p>}
          </div>
        )}
      </div>
    </aside>
  );
}
