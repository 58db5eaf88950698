/**
 * The cited pages of a PDF, rendered by pdf.js (its worker is a separate bundled file),
 * with the passage highlighted in the text layer and scrolled into view; on pages OCR read
 * (scans: no text layer, or one of garbage) the passage is highlighted with OCR's word
 * boxes over the page image instead. Loaded lazily.
 */
import { useQueries, useQuery } from "@tanstack/react-query";
import * as pdfjs from "pdfjs-dist";
import workerUrl from "pdfjs-dist/build/pdf.worker.min.mjs?url";
import { useEffect, useRef, useState } from "react";
import { createPortal } from "react-dom";
import { useApi } from "../api/api-context.js";
import { getDocumentContent, getOcrPage } from "../api/corpora-api.js";
import { useI18n } from "../i18n/i18n.js";
import { ErrorNotice } from "../ui/ErrorNotice.js";
import { Skeleton } from "../ui/Skeleton.js";
import { highlightOcrPages } from "./ocr-highlight.js";
import { OcrOverlay } from "./OcrOverlay.js";
import { findPassageSpans } from "./pdf-highlight.js";
import "./pdf-view.css";

pdfjs.GlobalWorkerOptions.workerSrc = workerUrl;

/** At most this many pages are drawn for one citation. */
const MAX_PAGES = 3;

export interface PdfViewProps {
  corpusId: string;
  documentId: string;
  pageStart: number;
  pageEnd: number | null;
  passage: string;
  /**
   * The page of the part of the passage that supports the answer, and that part: drawn in
   * view and highlighted more strongly than the rest of the passage.
   */
  focusPage?: number | null;
  support?: string | null;
  /** Called when the file cannot be shown, so the caller can show the text instead. */
  onUnavailable?: (error: unknown) => void;
  /** Pages OCR read (the document's `ocr.pages`): their text layer is not trusted; OCR's words are highlighted. */
  ocrPages?: readonly number[];
}

interface RenderState {
  status: "rendering" | "done" | "failed";
  /** Whether the passage was found in a text layer. */
  found: boolean;
  error?: unknown;
  /** The page elements drawn, by page number (OCR highlights are drawn into them). */
  pages: { n: number; el: HTMLElement }[];
}

export default function PdfView({ corpusId, documentId, pageStart, pageEnd, passage, focusPage = null, support = null, ocrPages = [] }: PdfViewProps) {
  const { t } = useI18n();
  const client = useApi();
  const host = useRef<HTMLDivElement>(null);
  const [state, setState] = useState<RenderState>({ status: "rendering", found: false, pages: [] });
  const content = useQuery({ queryKey: ["document-content", corpusId, documentId], queryFn: ({ signal }) => getDocumentContent(client, corpusId, documentId, signal), staleTime: Infinity, retry: false });
  // A stable key for the effect (the array may be a new one on every render).
  const ocrKey = ocrPages.join(",");
  const ocrDrawn = state.pages.filter((p) => ocrPages.includes(p.n));
  const ocr = useQueries({
    queries: ocrDrawn.map((p) => ({ queryKey: ["ocr-page", corpusId, documentId, p.n], queryFn: ({ signal }: { signal: AbortSignal }) => getOcrPage(client, corpusId, documentId, p.n, signal), staleTime: Infinity, retry: false })),
  });
  const ocrRead = ocr.flatMap((q) => (q.data ? [q.data] : []));
  const ocrSettled = ocr.every((q) => !q.isPending);
  const highlights = ocrRead.length > 0 ? highlightOcrPages(ocrRead, passage, support) : [];
  const ocrFound = highlights.some((h) => h.passage.length + h.support.length > 0);

  useEffect(() => {
    const container = host.current;
    if (!content.data || !container) return;
    let cancelled = false;
    const task = pdfjs.getDocument({ data: new Uint8Array(content.data.slice(0)), isEvalSupported: false, enableXfa: false });
    const ocrSet = new Set(ocrKey ? ocrKey.split(",").map(Number) : []);
    const render = async () => {
      const pdf = await task.promise;
      // The pages of the passage, at most MAX_PAGES of them, always including the supporting page.
      const focus = focusPage !== null && focusPage >= pageStart && focusPage <= (pageEnd ?? pageStart) ? focusPage : null;
      const first = Math.max(1, pageStart, focus !== null ? focus - MAX_PAGES + 1 : 1);
      const last = Math.min(pdf.numPages, Math.max(first, pageEnd ?? first), first + MAX_PAGES - 1);
      let focusDiv: HTMLElement | null = null;
      const width = container.clientWidth || 400;
      const spans: HTMLElement[] = [];
      const drawn: RenderState["pages"] = [];
      container.replaceChildren();
      for (let n = first; n <= last && !cancelled; n++) {
        const page = await pdf.getPage(n);
        const base = page.getViewport({ scale: 1 });
        const scale = width / base.width;
        const viewport = page.getViewport({ scale });
        const pageDiv = document.createElement("div");
        pageDiv.className = "pdf-page";
        if (n === focus) focusDiv = pageDiv;
        pageDiv.style.setProperty("--scale-factor", String(scale));
        pageDiv.style.setProperty("--total-scale-factor", String(scale));
        pageDiv.style.width = `${viewport.width}px`;
        pageDiv.style.height = `${viewport.height}px`;
        pageDiv.setAttribute("aria-label", t(ocrSet.has(n) ? "source.pageNOcr" : "source.pageN", { n }));
        pageDiv.setAttribute("role", "img");
        const canvas = document.createElement("canvas");
        const ratio = window.devicePixelRatio || 1;
        canvas.width = Math.floor(viewport.width * ratio);
        canvas.height = Math.floor(viewport.height * ratio);
        canvas.style.width = `${viewport.width}px`;
        canvas.style.height = `${viewport.height}px`;
        const textDiv = document.createElement("div");
        textDiv.className = "textLayer";
        pageDiv.append(canvas, textDiv);
        container.append(pageDiv);
        drawn.push({ n, el: pageDiv });
        await page.render({ canvas, viewport, transform: ratio !== 1 ? [ratio, 0, 0, ratio, 0, 0] : undefined }).promise;
        // A page OCR read has no text layer worth matching (none, or garbage): OCR's words are highlighted instead.
        if (ocrSet.has(n)) continue;
        const layer = new pdfjs.TextLayer({ textContentSource: page.streamTextContent(), container: textDiv, viewport });
        await layer.render();
        spans.push(...(layer.textDivs));
      }
      if (cancelled) return;
      const hits = findPassageSpans(
        spans.map((s) => s.textContent ?? ""),
        passage,
      );
      for (const i of hits) spans[i]?.classList.add("passage-hl");
      const strong = support ? findPassageSpans(spans.map((s) => s.textContent ?? ""), support) : [];
      for (const i of strong) spans[i]?.classList.add("support-hl");
      // In view: the supporting sentence, else the passage, else the supporting page.
      const target = spans[strong[0] ?? hits[0] ?? -1] ?? focusDiv;
      target?.scrollIntoView({ block: "center" });
      setState({ status: "done", found: hits.length > 0, pages: drawn });
      await pdf.destroy();
    };
    render().catch((error: unknown) => {
      if (!cancelled) setState({ status: "failed", found: false, error, pages: [] });
    });
    return () => {
      cancelled = true;
      void task.destroy();
    };
  }, [content.data, pageStart, pageEnd, passage, focusPage, support, t, ocrKey]);

  if (content.isError) return <ErrorNotice error={content.error} compact />;
  return (
    <div className="pdf-view">
      {(content.isPending || state.status === "rendering") && <Skeleton rows={8} height={16} />}
      {state.status === "failed" && <ErrorNotice error={state.error} compact />}
      {state.status === "done" && !state.found && ocrSettled && !ocrFound && <p className="field-hint">{t("source.notLocated")}</p>}
      {ocr.some((q) => q.isError) && <p className="field-hint">{t("source.ocrWordsUnavailable")}</p>}
      <div ref={host} className="pdf-pages" />
      {highlights.map((h) => {
        const el = state.pages.find((p) => p.n === h.page)?.el;
        return el && h.passage.length + h.support.length > 0 ? createPortal(<OcrOverlay highlight={h} />, el, `ocr-${h.page}`) : null;
      })}
    </div>
  );
}
