/** A connection test's answer, replica by replica: how fast each answered, or why it did not. */
import { CircleCheck, CircleX, TriangleAlert } from "lucide-react";
import type { RemoteModelTest, UpstreamHealth } from "../api/contract.js";
import { useI18n, type MessageKey } from "../i18n/i18n.js";
import type { Tone } from "../ui/StatusBadge.js";

/** A replica's health as a badge's tone and words. */
export function healthBadge(health: UpstreamHealth): { tone: Tone; label: MessageKey } {
  if (health === "healthy") return { tone: "success", label: "team.health.healthy" };
  if (health === "ejected") return { tone: "warning", label: "team.health.ejected" };
  if (health === "down") return { tone: "danger", label: "team.health.down" };
  return { tone: "neutral", label: "team.health.unknown" };
}

/** A model's replicas at a glance: all healthy, some, none, or not checked yet. */
export function summaryTone(healths: readonly UpstreamHealth[]): Tone {
  const healthy = healths.filter((h) => h === "healthy").length;
  if (healths.length > 0 && healthy === healths.length) return "success";
  if (healthy > 0) return "warning";
  return healths.every((h) => h === "unknown") ? "neutral" : "danger";
}

const LISTED = 5;

/** `modelFor`: the model a replica (by id and position) was asked to serve, named in "serves …". */
export function RemoteTestResults({ result, modelFor }: { result: RemoteModelTest; modelFor?: (replicaId: string, index: number) => string | undefined }) {
  const { t, number } = useI18n();
  const failed = result.upstreams.filter((u) => !u.ok).length;
  return (
    <div className={result.ok ? "test-results ok" : "test-results failed"}>
      <p className="test-results-head">
        {result.ok ? <CircleCheck aria-hidden="true" size={16} className="test-icon ok" /> : <TriangleAlert aria-hidden="true" size={16} className="test-icon failed" />}
        <span className="strong">{t("team.result.title")}:</span> {result.ok ? t("team.result.allOk") : t("team.result.someFailed", { n: failed, of: result.upstreams.length })}
      </p>
      <ul className="test-rows">
        {result.upstreams.map((u, i) => {
          const model = modelFor?.(u.id, i);
          const unlisted = u.ok && u.serves_model !== true && u.models.length > 0;
          return (
            <li key={u.id} className="test-row">
              {u.ok ? <CircleCheck aria-hidden="true" size={15} className="test-icon ok" /> : <CircleX aria-hidden="true" size={15} className="test-icon failed" />}
              <div className="test-row-body">
                <p className="test-row-target">
                  <span className="mono strong">{u.id}</span> <span className="mono faint test-url">{u.url}</span>
                </p>
                {u.ok ? (
                  <p className="test-row-outcome">
                    <span className="test-ok">{t("team.result.ok", { ms: number(u.ms) })}</span>
                    {u.serves_model === true && model && <span className="muted"> · {t("team.result.serves", { model })}</span>}
                  </p>
                ) : (
                  <p className="test-row-outcome">
                    <span className="test-failed">{t("team.result.failed", { ms: number(u.ms) })}</span>
                    {u.error && (
                      <>
                        {" "}
                        <span className="test-error" lang="en">
                          {u.error}
                        </span>
                      </>
                    )}
                  </p>
                )}
                {unlisted && (
                  <p className="test-row-note">
                    {t("team.result.notListed", { list: u.models.slice(0, LISTED).join(", ") + (u.models.length > LISTED ? ", …" : "") })}
                  </p>
                )}
              </div>
            </li>
          );
        })}
      </ul>
    </div>
  );
}
