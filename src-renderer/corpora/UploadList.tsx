/** The files of recent uploads, each with its own state, live; a summary is read to screen readers. */
import { useI18n } from "../i18n/i18n.js";
import { describeCode } from "../i18n/describe-error.js";
import { formatBytes, fraction } from "../lib/format.js";
import { ProgressBar } from "../ui/ProgressBar.js";
import { StatusBadge } from "../ui/StatusBadge.js";
import { phaseText, phaseTone } from "./corpus-status.js";
import { rowView, uploadSummary, type UploadState } from "./upload-reducer.js";

export function UploadList({ state, onClear }: { state: UploadState; onClear: () => void }) {
  const { t, number } = useI18n();
  const summary = uploadSummary(state);
  if (state.rows.length === 0) return null;
  return (
    <section className="upload-list card" aria-labelledby="uploads-title">
      <div className="section-head">
        <h2 id="uploads-title">{t("upload.title")}</h2>
        <p aria-live="polite" role="status">
          {t("upload.summary", { done: summary.done, total: summary.total, failed: summary.failed })}
        </p>
        <span className="spacer" />
        {summary.active < summary.total && (
          <button type="button" className="btn btn-small btn-ghost" onClick={onClear}>
            {t("upload.clear")}
          </button>
        )}
      </div>
      <ul className="upload-rows">
        {state.rows.map((row) => {
          const view = rowView(state, row);
          const error = view.error ? describeCode(t, view.error.code, view.error.message) : null;
          const active = !["indexed", "failed", "rejected"].includes(view.phase);
          const label = phaseText(t, view, number);
          return (
            <li key={row.key} className="upload-row">
              <span className="upload-name" title={row.filename}>
                {row.filename}
              </span>
              <span className="upload-size">{formatBytes(row.bytes)}</span>
              <span className="upload-state">
                <StatusBadge tone={phaseTone[view.phase]}>{label}</StatusBadge>
                {active && <ProgressBar value={view.progress ? fraction(view.progress.done, view.progress.total) : null} label={t("upload.progressOf", { name: row.filename })} valueText={view.ocr ? label : undefined} />}
              </span>
              {error && (
                <span className="upload-error">
                  {error.title} {error.detail && <span className="muted">— {error.detail}</span>}
                </span>
              )}
            </li>
          );
        })}
      </ul>
    </section>
  );
}
