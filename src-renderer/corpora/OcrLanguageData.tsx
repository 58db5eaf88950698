/**
 * The built-in OCR engine's language data (for machines without Tesseract, such as the
 * desktop app): each language the server can fetch, its size, and a button to fetch it,
 * with progress. Fetching needs an administrator's key; others are told so.
 */
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { Check, Download } from "lucide-react";
import { useApi } from "../api/api-context.js";
import type { OcrStatus } from "../api/contract.js";
import { fetchOcrLanguage } from "../api/corpora-api.js";
import { useAuth } from "../auth/principal-context.js";
import { useI18n } from "../i18n/i18n.js";
import { formatBytes, fraction } from "../lib/format.js";
import { ErrorNotice } from "../ui/ErrorNotice.js";
import { ProgressBar } from "../ui/ProgressBar.js";
import { ocrLanguageName, sortLanguages } from "./ocr-languages.js";

export function OcrLanguageData({ status }: { status: OcrStatus }) {
  const { t, locale } = useI18n();
  const client = useApi();
  const queryClient = useQueryClient();
  const { principal } = useAuth();
  const canFetch = principal.scopes.includes("workspaces.manage");
  const fetchOne = useMutation({
    mutationFn: (language: string) => fetchOcrLanguage(client, language),
    // The status shows the download once the server has begun it (and polls while it runs).
    onMutate: () => void setTimeout(() => void queryClient.invalidateQueries({ queryKey: ["ocr-status"] }), 400),
    onSuccess: (next) => queryClient.setQueryData(["ocr-status"], next),
    onSettled: () => void queryClient.invalidateQueries({ queryKey: ["ocr-status"] }),
  });
  const data = status.language_data ?? [];
  if (data.length === 0) return null;
  const order = sortLanguages(
    data.map((d) => d.language),
    status.default_languages,
    locale,
  );
  const rows = order.map((code) => data.find((d) => d.language === code)!);

  return (
    <div className="lang-data">
      <p className="field-hint">{canFetch ? t("ocr.dataIntro") : t("ocr.dataAskAdmin")}</p>
      <ul className="lang-data-list">
        {rows.map((d) => {
          const busy = d.state === "fetching" || (fetchOne.isPending && fetchOne.variables === d.language);
          const name = ocrLanguageName(d.language, locale);
          return (
            <li key={d.language} className="lang-data-row">
              <span className="lang-name">{name}</span>
              <span className="lang-code mono">{d.language}</span>
              <span className="lang-size">{formatBytes(d.bytes)}</span>
              {d.state === "installed" ? (
                <span className="lang-installed">
                  <Check aria-hidden="true" size={14} /> {t("ocr.dataInstalled")}
                </span>
              ) : busy ? (
                <ProgressBar value={fraction(d.received, d.bytes)} label={t("ocr.dataFetching", { name })} />
              ) : (
                canFetch && (
                  <button type="button" className="btn btn-small" disabled={fetchOne.isPending} onClick={() => fetchOne.mutate(d.language)} aria-label={t("ocr.dataFetch", { name })}>
                    <Download aria-hidden="true" size={14} /> {t("ocr.dataFetchShort")}
                  </button>
                )
              )}
            </li>
          );
        })}
      </ul>
      {fetchOne.isError && <ErrorNotice error={fetchOne.error} compact />}
    </div>
  );
}
