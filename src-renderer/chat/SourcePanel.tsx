/**
 * The cited passage in its document: for a PDF, the cited pages (pdf.js) with the passage
 * highlighted; for an image document, the page image; on pages OCR read, the passage's
 * words highlighted with OCR's boxes, the panel saying so with OCR's confidence, and the
 * passage given as text below; for other formats, the surrounding text with the passage marked.
 */
import { useQuery } from "@tanstack/react-query";
import { ScanText, TriangleAlert, X } from "lucide-react";
import { lazy, Suspense, useEffect, useRef } from "react";
import { isMissingEndpoint } from "../api/api-error.js";
import { useApi } from "../api/api-context.js";
import { getChunk, getDocument } from "../api/corpora-api.js";
import { isImageDocument } from "../corpora/accepted-formats.js";
import { LOW_OCR_CONFIDENCE } from "../corpora/document-tree.js";
import { useI18n } from "../i18n/i18n.js";
import { ErrorNotice } from "../ui/ErrorNotice.js";
import { Skeleton } from "../ui/Skeleton.js";
import type { OpenSource } from "./ChatPage.js";
import { ImageView } from "./ImageView.js";
import { isPdf } from "./pdf-highlight.js";

const PdfView = lazy(() => import("./PdfView.js"));

export function SourcePanel({ source, onClose }: { source: OpenSource; onClose: () => void }) {
  const { t } = useI18n();
  const client = useApi();
  const heading = useRef<HTMLHeadingElement>(null);
  const { citation, corpusId } = source;
  const chunk = useQuery({ queryKey: ["chunk", corpusId, citation.chunk_id], queryFn: ({ signal }) => getChunk(client, corpusId, citation.chunk_id, signal), retry: false, staleTime: Infinity });
  // The document says which pages OCR read; without it (an older server, an error) pages are shown as they are.
  const docQuery = useQuery({ queryKey: ["document", corpusId, citation.document_id], queryFn: ({ signal }) => getDocument(client, corpusId, citation.document_id, signal), retry: false, staleTime: 30_000 });

  useEffect(() => {
    heading.current?.focus();
  }, []);

  const pageStart = chunk.data?.page_start ?? citation.page_start ?? citation.page;
  const pageEnd = chunk.data?.page_end ?? citation.page_end;
  const pdf = isPdf(chunk.data?.content_type, citation.filename) && pageStart !== null;
  const image = !pdf && isImageDocument(chunk.data?.content_type ?? docQuery.data?.content_type);
  const passage = chunk.data?.text ?? citation.text;
  // The part of the passage that supports the answer (offsets into the citation's text).
  const support = citation.support && citation.support.end > citation.support.start ? citation.support : null;
  const supportText = support ? citation.text.slice(support.start, support.end) : null;
  const supportAt = supportText ? passage.indexOf(supportText) : -1;
  const chunkMissing = chunk.isError && isMissingEndpoint(chunk.error, ["chunk_not_found"]);
  const ocrPages = docQuery.data?.ocr?.pages ?? [];
  // The page shown first: the supporting sentence's, else the passage's first (an image without pages: its only one).
  const shownPage = support?.page ?? pageStart ?? (image ? 1 : null);
  const ocrPage = shownPage !== null ? ocrPages.find((p) => p.page === shownPage) : undefined;
  const ocrLow = ocrPage !== undefined && ocrPage.confidence < LOW_OCR_CONFIDENCE;
  // While the document is being fetched, an image or PDF waits: it must know which pages OCR read.
  const waiting = chunk.isPending || ((pdf || image) && docQuery.isPending);
  const marked =
    supportAt >= 0 ? (
      <mark>
        {passage.slice(0, supportAt)}
        <strong className="support">{supportText}</strong>
        {passage.slice(supportAt + supportText!.length)}
      </mark>
    ) : (
      <mark>{passage}</mark>
    );

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
        {waiting && <Skeleton rows={6} />}
        {chunk.isError && !chunkMissing && <ErrorNotice error={chunk.error} compact />}
        {!waiting && ocrPage && (
          <p className={ocrLow ? "ocr-note low" : "ocr-note"} role="note">
            {ocrLow ? <TriangleAlert aria-hidden="true" size={15} /> : <ScanText aria-hidden="true" size={15} />}
            <span>
              {t(ocrLow ? "source.ocrLow" : "source.ocr", { n: ocrPage.page, confidence: Math.round(ocrPage.confidence) })}
              {ocrPage.deskewed ? ` · ${t("source.ocrStraightened", { degrees: Math.abs(ocrPage.deskewed).toFixed(1) })}` : ""}
            </span>
          </p>
        )}
        {!waiting && pdf && pageStart !== null && (
          <Suspense fallback={<Skeleton rows={8} />}>
            <PdfView corpusId={corpusId} documentId={citation.document_id} pageStart={pageStart} pageEnd={pageEnd} passage={passage} focusPage={support?.page ?? null} support={supportText} ocrPages={ocrPages.map((p) => p.page)} />
          </Suspense>
        )}
        {!waiting && image && shownPage !== null && <ImageView corpusId={corpusId} documentId={citation.document_id} page={shownPage} passage={passage} support={supportText} ocrRead={ocrPage !== undefined} />}
        {!waiting && (pdf || image) && ocrPage && (
          <section className="source-text ocr-text" aria-labelledby="ocr-text-title">
            <h3 id="ocr-text-title" className="ocr-text-title">
              {t("source.ocrText")}
            </h3>
            <p className="passage">{marked}</p>
          </section>
        )}
        {!waiting && !pdf && !image && (
          <div className="source-text">
            {chunk.data?.before && <p className="context">{chunk.data.before}</p>}
            <p className="passage">{marked}</p>
            {chunk.data?.after && <p className="context">{chunk.data.after}</p>}
            {chunkMissing && <p className="field-hint">{t("source.contextUnavailable")}</p>}
          </div>
        )}
      </div>
    </aside>
  );
}
