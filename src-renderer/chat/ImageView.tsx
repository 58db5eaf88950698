/**
 * A cited page of an image document (a scan uploaded as PNG, JPEG or TIFF): the page image,
 * fetched with the client's credentials and shown from a blob URL, with the cited words
 * OCR found on it highlighted.
 */
import { useQuery } from "@tanstack/react-query";
import { useEffect, useRef, useState } from "react";
import { useApi } from "../api/api-context.js";
import { getOcrPage, getPageImage } from "../api/corpora-api.js";
import { useI18n } from "../i18n/i18n.js";
import { ErrorNotice } from "../ui/ErrorNotice.js";
import { Skeleton } from "../ui/Skeleton.js";
import { highlightOcrPages } from "./ocr-highlight.js";
import { OcrOverlay } from "./OcrOverlay.js";
// The page frame and highlight styles it shares with the PDF view (loaded even when no PDF was opened).
import "./pdf-view.css";

export interface ImageViewProps {
  corpusId: string;
  documentId: string;
  page: number;
  passage: string;
  support?: string | null;
  /** Whether OCR read this page (the document's `ocr.pages` lists it): only then are there words to highlight. */
  ocrRead: boolean;
}

export function ImageView({ corpusId, documentId, page, passage, support = null, ocrRead }: ImageViewProps) {
  const { t } = useI18n();
  const client = useApi();
  const image = useQuery({ queryKey: ["page-image", corpusId, documentId, page], queryFn: ({ signal }) => getPageImage(client, corpusId, documentId, page, signal), staleTime: Infinity, retry: false });
  const ocr = useQuery({ queryKey: ["ocr-page", corpusId, documentId, page], queryFn: ({ signal }) => getOcrPage(client, corpusId, documentId, page, signal), staleTime: Infinity, retry: false, enabled: ocrRead });
  const img = useRef<HTMLImageElement>(null);
  const [loaded, setLoaded] = useState(false);
  // The image is shown from an object URL, revoked when the blob changes or the view goes.
  useEffect(() => {
    if (!image.data || !img.current) return;
    const url = URL.createObjectURL(image.data);
    img.current.setAttribute("src", url);
    return () => URL.revokeObjectURL(url);
  }, [image.data]);
  const highlight = ocr.data ? highlightOcrPages([ocr.data], passage, support)[0] : undefined;
  const found = highlight ? highlight.passage.length + highlight.support.length > 0 : null;

  if (image.isError) return <ErrorNotice error={image.error} compact />;
  return (
    <div className="pdf-view">
      {!loaded && <Skeleton rows={8} height={16} />}
      {found === false && <p className="field-hint">{t("source.notLocated")}</p>}
      {ocr.isError && <p className="field-hint">{t("source.ocrWordsUnavailable")}</p>}
      {image.data && (
        <div className="pdf-pages" hidden={!loaded}>
          <div className="pdf-page image-page" role="img" aria-label={highlight && found ? t("source.pageNHighlighted", { n: page }) : t("source.pageN", { n: page })}>
            <img ref={img} alt="" draggable={false} onLoad={() => setLoaded(true)} />
            {highlight && loaded && <OcrOverlay highlight={highlight} />}
          </div>
        </div>
      )}
    </div>
  );
}
