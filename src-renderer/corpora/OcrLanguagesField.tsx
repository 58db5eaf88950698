/**
 * The languages a corpus's scans and images are read in (OCR): a checkbox per language the
 * server can read, the defaults first. When the server cannot read scans it says why and
 * what to install, and the corpus is still created or saved (its other documents work).
 */
import { useQuery } from "@tanstack/react-query";
import { ScanText, TriangleAlert } from "lucide-react";
import { useId } from "react";
import { useApi } from "../api/api-context.js";
import type { OcrStatus } from "../api/contract.js";
import { getOcrStatus } from "../api/corpora-api.js";
import { describeError } from "../i18n/describe-error.js";
import { useI18n } from "../i18n/i18n.js";
import { OcrLanguageData } from "./OcrLanguageData.js";
import { languageList, ocrLanguageName, sortLanguages } from "./ocr-languages.js";

/** The server takes at most this many OCR languages per corpus. */
export const MAX_OCR_LANGUAGES = 8;

export function useOcrStatus() {
  const client = useApi();
  return useQuery({
    queryKey: ["ocr-status"],
    queryFn: ({ signal }) => getOcrStatus(client, signal),
    staleTime: 60_000,
    retry: false,
    // While language data is being fetched, its progress is followed.
    refetchInterval: (query) => (query.state.data?.language_data?.some((d) => d.state === "fetching") ? 1000 : false),
  });
}

/** The languages to start from: the current ones (settings) or the server's defaults that are installed. */
export function initialLanguages(status: OcrStatus, current: readonly string[] | null): string[] {
  const wanted = current ?? status.default_languages;
  if (!status.available) return [...wanted];
  const installed = wanted.filter((l) => status.languages.includes(l));
  if (installed.length > 0) return installed;
  return status.languages.slice(0, 1);
}

export interface OcrLanguagesFieldProps {
  /** The chosen languages; null until the server's status is known. */
  value: string[] | null;
  onChange: (languages: string[]) => void;
  /** The corpus's languages now (settings), kept shown even when one is no longer installed. */
  current?: readonly string[];
}

export function OcrLanguagesField({ value, onChange, current = [] }: OcrLanguagesFieldProps) {
  const { t, locale } = useI18n();
  const id = useId();
  const status = useOcrStatus();

  const legend = (
    <legend className="field-label">
      <ScanText aria-hidden="true" size={15} className="legend-icon" /> {t("ocr.languages")}
    </legend>
  );
  if (status.isPending) {
    return (
      <fieldset className="field fieldset">
        {legend}
        <p className="field-hint">{t("ocr.checking")}</p>
      </fieldset>
    );
  }
  if (status.isError) {
    const { detail } = describeError(t, status.error);
    return (
      <fieldset className="field fieldset">
        {legend}
        <p className="field-hint">{t("ocr.statusFailed", { detail: detail ?? "" })}</p>
      </fieldset>
    );
  }
  const s = status.data;
  const chosen = value ?? initialLanguages(s, current.length > 0 ? current : null);
  // Installed languages, and any the corpus names that are not (so they can be unticked).
  const offered = sortLanguages([...new Set([...s.languages, ...current])], s.default_languages, locale);
  const full = chosen.length >= MAX_OCR_LANGUAGES;
  const toggle = (code: string, on: boolean) => {
    const next = on ? [...chosen, code] : chosen.filter((c) => c !== code);
    if (next.length > 0) onChange(sortLanguages(next, s.default_languages, locale));
  };

  return (
    <fieldset className="field fieldset" aria-describedby={`${id}-hint`}>
      {legend}
      <p className="field-hint" id={`${id}-hint`}>
        {t("ocr.languagesHint")}
      </p>
      {!s.available && (
        <div className="notice notice-warning compact" role="status">
          <TriangleAlert aria-hidden="true" size={18} className="notice-icon" />
          <div className="notice-body">
            <p className="notice-title">{t("ocr.unavailable")}</p>
            {s.reason && <p className="notice-detail">{s.reason}</p>}
            <p className="notice-detail">{t("ocr.unavailableThen", { languages: languageList(chosen, locale) })}</p>
          </div>
        </div>
      )}
      {(!s.available || s.engine === "tesseract-wasm") && <OcrLanguageData status={s} />}
      {s.available && (
        <>
          {s.reason && s.engine !== "tesseract-wasm" && (
            <div className="notice notice-warning compact" role="status">
              <TriangleAlert aria-hidden="true" size={18} className="notice-icon" />
              <div className="notice-body">
                <p className="notice-detail">{s.reason}</p>
              </div>
            </div>
          )}
          <div className="lang-grid">
            {offered.map((code) => {
              const checked = chosen.includes(code);
              const missing = !s.languages.includes(code);
              return (
                <label key={code} className={checked ? "lang-choice on" : "lang-choice"}>
                  <input type="checkbox" checked={checked} disabled={(!checked && (full || missing)) || (checked && chosen.length === 1)} onChange={(e) => toggle(code, e.target.checked)} />
                  <span className="lang-name">{ocrLanguageName(code, locale)}</span>
                  <span className="lang-code mono">{code}</span>
                  {missing && <span className="lang-missing">{t("ocr.notInstalled")}</span>}
                </label>
              );
            })}
          </div>
          <p className="field-hint" aria-live="polite">
            {t("ocr.engine", { engine: s.engine === "tesseract-wasm" ? "Tesseract (WebAssembly)" : "Tesseract", version: s.version ?? "" })}
            {full && ` ${t("ocr.max", { n: MAX_OCR_LANGUAGES })}`}
            {chosen.length === 1 && ` ${t("ocr.atLeastOne")}`}
          </p>
        </>
      )}
    </fieldset>
  );
}
