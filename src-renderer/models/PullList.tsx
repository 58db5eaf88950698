/** Downloads in progress and recent ones, with progress bars and cancel. */
import { useMutation } from "@tanstack/react-query";
import { X } from "lucide-react";
import { useApi } from "../api/api-context.js";
import type { ModelPull } from "../api/contract.js";
import { cancelPull } from "../api/models-api.js";
import { describeCode } from "../i18n/describe-error.js";
import { useI18n } from "../i18n/i18n.js";
import { formatBytes, fraction } from "../lib/format.js";
import { ErrorNotice } from "../ui/ErrorNotice.js";
import { ProgressBar } from "../ui/ProgressBar.js";
import { StatusBadge, type Tone } from "../ui/StatusBadge.js";
import { ACTIVE_PULL } from "./use-pulls.js";

const tone: Record<ModelPull["status"], Tone> = { queued: "neutral", downloading: "info", verifying: "info", converting: "info", done: "success", failed: "danger", cancelled: "warning" };

export function PullList({ pulls }: { pulls: ModelPull[] }) {
  const { t } = useI18n();
  const client = useApi();
  const cancel = useMutation({ mutationFn: (id: string) => cancelPull(client, id) });
  return (
    <section className="section card" aria-labelledby="pulls-title">
      <h2 id="pulls-title">{t("pulls.title")}</h2>
      {cancel.isError && <ErrorNotice error={cancel.error} compact />}
      <ul className="pull-rows" aria-live="polite">
        {pulls.slice(0, 6).map((p) => {
          const active = ACTIVE_PULL.has(p.status);
          const error = p.error ? describeCode(t, p.error.code, p.error.message) : null;
          return (
            <li key={p.id} className="pull-row">
              <div className="pull-main">
                <span className="mono strong">{p.source === "starter" ? t("pulls.starter") : p.models.join(", ")}</span>
                <StatusBadge tone={tone[p.status]}>{t(`pull.${p.status}`)}</StatusBadge>
                <span className="pull-stage muted">{p.stage}</span>
                <span className="spacer" />
                <span className="muted pull-bytes">
                  {formatBytes(p.received_bytes)}
                  {p.total_bytes ? ` / ${formatBytes(p.total_bytes)}` : ""}
                </span>
                {active && (
                  <button type="button" className="btn btn-small" onClick={() => cancel.mutate(p.id)} disabled={cancel.isPending}>
                    <X aria-hidden="true" size={13} /> {t("common.cancel")}
                  </button>
                )}
              </div>
              {active && <ProgressBar value={fraction(p.received_bytes, p.total_bytes)} label={t("pulls.progressOf", { name: p.models.join(", ") })} />}
              {error && (
                <p className="doc-error">
                  {error.title} {error.detail && <span className="muted">— {error.detail}</span>}
                </p>
              )}
            </li>
          );
        })}
      </ul>
    </section>
  );
}
