/** What OCR read of a document: each page it read, why, how sure it was, and whether it was straightened. */
import { TriangleAlert } from "lucide-react";
import type { RagDocument } from "../api/contract.js";
import { useI18n } from "../i18n/i18n.js";
import { Modal } from "../ui/Modal.js";
import { LOW_OCR_CONFIDENCE, ocrFigures } from "./document-tree.js";
import { languageList } from "./ocr-languages.js";

export function OcrDetailsDialog({ document, open, onOpenChange }: { document: RagDocument; open: boolean; onOpenChange: (open: boolean) => void }) {
  const { t, number, locale } = useI18n();
  const ocr = document.ocr;
  const figures = ocrFigures(ocr);
  if (!ocr || !figures) return null;
  const percent = (n: number) => `${Math.round(n)}%`;
  return (
    <Modal open={open} onOpenChange={onOpenChange} title={t("ocrDetails.title", { name: document.filename })} wide>
      <p>
        {t(summaryKey(figures.pages, document.page_count), {
          engine: engineLabel(ocr.engine),
          pages: number(figures.pages),
          total: number(document.page_count ?? figures.pages),
          languages: languageList(ocr.languages, locale),
          confidence: percent(figures.confidence),
        })}
      </p>
      {figures.lowPages.length > 0 && (
        <div className="notice notice-warning compact" role="note">
          <TriangleAlert aria-hidden="true" size={18} className="notice-icon" />
          <div className="notice-body">
            <p className="notice-detail">{t("ocrDetails.lowNote", { threshold: LOW_OCR_CONFIDENCE, pages: figures.lowPages.map(number).join(", ") })}</p>
          </div>
        </div>
      )}
      <div className="table-wrap ocr-pages-wrap">
        <table className="table ocr-pages">
          <caption className="sr-only">{t("ocrDetails.caption")}</caption>
          <thead>
            <tr>
              <th scope="col" className="num">{t("ocrDetails.col.page")}</th>
              <th scope="col">{t("ocrDetails.col.why")}</th>
              <th scope="col">{t("ocrDetails.col.confidence")}</th>
              <th scope="col" className="num">{t("ocrDetails.col.words")}</th>
              <th scope="col">{t("ocrDetails.col.straightened")}</th>
            </tr>
          </thead>
          <tbody>
            {ocr.pages.map((p) => {
              const low = p.confidence < LOW_OCR_CONFIDENCE;
              return (
                <tr key={p.page} className={low ? "low" : undefined}>
                  <th scope="row" className="num">{number(p.page)}</th>
                  <td>{t(`ocr.reason.${p.reason}`)}</td>
                  <td>
                    <span className={low ? "confidence low" : "confidence"}>
                      <span className="confidence-bar" aria-hidden="true">
                        <span style={{ width: `${Math.max(0, Math.min(100, p.confidence))}%` }} />
                      </span>
                      <span className="confidence-value">{percent(p.confidence)}</span>
                      {low && (
                        <span className="confidence-flag">
                          <TriangleAlert aria-hidden="true" size={13} /> {t("ocr.low")}
                        </span>
                      )}
                    </span>
                  </td>
                  <td className="num">{number(p.words)}</td>
                  <td className="muted">{p.deskewed !== undefined && p.deskewed !== 0 ? t("ocrDetails.straightened", { degrees: formatDegrees(p.deskewed, locale) }) : "—"}</td>
                </tr>
              );
            })}
          </tbody>
        </table>
      </div>
      <div className="dialog-actions">
        <button type="button" className="btn" onClick={() => onOpenChange(false)}>
          {t("common.close")}
        </button>
      </div>
    </Modal>
  );
}

/** Which summary fits: the only page, every page, some of the pages, or pages of a document without a page count. */
function summaryKey(read: number, total: number | null): "ocrDetails.summaryOne" | "ocrDetails.summaryAll" | "ocrDetails.summaryOf" | "ocrDetails.summary" {
  if (read === 1 && (total ?? 1) === 1) return "ocrDetails.summaryOne";
  if (total === null) return "ocrDetails.summary";
  return read >= total ? "ocrDetails.summaryAll" : "ocrDetails.summaryOf";
}

/** -2.5 → "2.5°": how far it was turned, to one decimal (which way matters little to a reader). */
function formatDegrees(degrees: number, locale: string): string {
  return `${new Intl.NumberFormat(locale === "ms" ? "ms-MY" : "en-GB", { maximumFractionDigits: 1 }).format(Math.abs(degrees))}°`;
}

/** "tesseract 5.3.0" → "Tesseract 5.3.0"; the built-in WebAssembly engine named as such. */
export function engineLabel(engine: string): string {
  return engine.replace(/^tesseract[-_ ]?wasm/i, "Tesseract (WebAssembly)").replace(/^tesseract/i, "Tesseract");
}
