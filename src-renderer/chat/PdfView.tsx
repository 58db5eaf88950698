/**
 * The cited pages of a PDF, rendered by pdf.js (its worker is a separate bundled file),
 * with the passage highlighted in the text layer and scrolled into view. Loaded lazily.
 */
import { useQuery } from "@tanstack/react-query";
import * as pdfjs from "pdfjs-dist";
import workerUrl from "pdfjs-dist/build/pdf.worker.min.mjs?url";
import { useEffect, useRef, useState } from "react";
import { useApi } from "../api/api-context.js";
import { getDocumentContent } from "../api/corpora-api.js";
import { useI18n } from "../i18n/i18n.js";
import { ErrorNotice } from "../ui/ErrorNotice.js";
import { Skeleton } from "../ui/Skeleton.js";
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
}

export default function PdfView({ corpusId, documentId, pageStart, pageEnd, passage, focusPage = null, support = null }: PdfViewProps) {
  const { t } = useI18n();
  const client = useApi();
  const host = useRef<HTMLDivElement>(null);
  const [state, setState] = useState<{ status: "rendering" | "done" | "failed"; found: boolean; error?: unknown }>({ status: "rendering", found: false });
  const content = useQuery({ queryKey: ["document-content", corpusId, documentId], queryFn: ({ signal }) => getDocumentContent(client, corpusId, documentId, signal), staleTime: Infinity, retry: false });

  useEffect(() => {
    const container = host.current;
    if (!content.data || !container) return;
    let cancelled = false;
    const task = pdfjs.getDocument({ data: new Uint8Array(content.data.slice(0)), isEvalSupported: false, enableXfa: false });
    const render = async () => {
      const pdf = await task.promise;
      // The pages of the passage, at most MAX_PAGES of them, always including the supporting page.
      const focus = focusPage !== null && focusPage >= pageStart && focusPage <= (pageEnd ?? pageStart) ? focusPage : null;
      const first = Math.max(1, pageStart, focus !== null ? focus - MAX_PAGES + 1 : 1);
      const last = Math.min(pdf.numPages, Math.max(first, pageEnd ?? first), first + MAX_PAGES - 1);
      let focusDiv: HTMLElement | null = null;
      const width = container.clientWidth || 400;
      const spans: HTMLElement[] = [];
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
        pageDiv.setAttribute("aria-label", t("source.pageN", { n }));
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
        await page.render({ canvas, viewport, transform: ratio !== 1 ? [ratio, 0, 0, ratio, 0, 0] : undefined }).promise;
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
      setState({ status: "done", found: hits.length > 0 });
      await pdf.destroy();
    };
    render().catch((error: unknown) => {
      if (!cancelled) setState({ status: "failed", found: false, error });
    });
    return () => {
      cancelled = true;
      void task.destroy();
    };
  }, [content.data, pageStart, pageEnd, passage, focusPage, support, t]);

  if (content.isError) return <ErrorNotice error={content.error} compact />;
  return (
    <div className="pdf-view">
      {(content.isPending || state.status === "rendering") && <Skeleton rows={8} height={16} />}
      {state.status === "failed" && <ErrorNotice error={state.error} compact />}
      {state.status === "done" && !state.found && <p className="field-hint">{t("source.notLocated")}</p>}
      <div ref={host} className="pdf-pages" />
    </div>
  );
}
