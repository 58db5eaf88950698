/**
 * One remote model as its administrator sees it: where it comes from, each replica's server,
 * health, load and last error, whether a key or client certificate is sent (never the key),
 * a connection test, and Remove for a model added here.
 */
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { BadgeCheck, CircleAlert, KeyRound, PlugZap, Trash2, X } from "lucide-react";
import { useId } from "react";
import { useApi } from "../api/api-context.js";
import type { RemoteModel } from "../api/contract.js";
import { testRemoteModel } from "../api/remote-models-api.js";
import { useI18n } from "../i18n/i18n.js";
import { ErrorNotice } from "../ui/ErrorNotice.js";
import { StatusBadge } from "../ui/StatusBadge.js";
import { healthBadge, RemoteTestResults, summaryTone } from "./RemoteTestResults.js";

export function RemoteModelCard({ model, onRemove }: { model: RemoteModel; onRemove: (model: RemoteModel) => void }) {
  const { t, number, shortDate } = useI18n();
  const client = useApi();
  const queryClient = useQueryClient();
  const id = useId();
  const test = useMutation({
    mutationFn: () => testRemoteModel(client, model.id),
    // A test probes the replicas in place: their health has changed.
    onSettled: () => void queryClient.invalidateQueries({ queryKey: ["remote-models"] }),
  });
  const healthy = model.upstreams.filter((u) => u.health === "healthy").length;
  const facts = [
    model.context_length ? t("catalog.context", { n: number(model.context_length) }) : null,
    model.dimensions ? t("models.dimensions", { n: model.dimensions }) : null,
    model.source === "admin" && model.created_at ? t("team.addedOn", { date: shortDate(model.created_at) }) : null,
  ].filter((f): f is string => f !== null);

  return (
    <li className="card team-card" aria-labelledby={`${id}-name`}>
      <div className="team-card-head">
        <div className="team-card-titles">
          <div className="row wrap">
            <h3 id={`${id}-name`} className="mono team-card-name">
              {model.id}
            </h3>
            <StatusBadge tone={model.type === "chat" ? "info" : "neutral"}>{t(`models.type.${model.type}`)}</StatusBadge>
            <StatusBadge tone={model.source === "admin" ? "info" : "neutral"}>{t(`team.source.${model.source}`)}</StatusBadge>
            <StatusBadge tone={summaryTone(model.upstreams.map((u) => u.health))}>{t("models.replicasHealthy", { n: healthy, of: model.upstreams.length })}</StatusBadge>
          </div>
          {(facts.length > 0 || model.source === "config") && (
            <p className="team-card-facts">
              {facts.join(" · ")}
              {model.source === "config" && (
                <>
                  {facts.length > 0 && " · "}
                  {t("team.source.configHint")}
                </>
              )}
            </p>
          )}
        </div>
        <div className="team-card-actions">
          <button type="button" className="btn btn-small" onClick={() => test.mutate()} disabled={test.isPending} aria-label={t("team.testOne", { id: model.id })}>
            <PlugZap aria-hidden="true" size={14} /> {test.isPending ? t("team.testing") : t("team.test")}
          </button>
          {model.source === "admin" && (
            <button type="button" className="btn btn-small btn-danger-quiet" onClick={() => onRemove(model)} aria-label={t("team.removeOne", { id: model.id })}>
              <Trash2 aria-hidden="true" size={14} /> {t("team.remove")}
            </button>
          )}
        </div>
      </div>
      <div className="table-wrap">
        <table className="table team-replicas">
          <thead>
            <tr>
              <th scope="col" className="col-server">
                {t("team.col.replica")}
              </th>
              <th scope="col" className="col-model">
                {t("team.col.model")}
              </th>
              <th scope="col" className="col-health">
                {t("team.col.health")}
              </th>
              <th scope="col" className="col-num num">
                {t("team.col.inFlight")}
              </th>
              <th scope="col" className="col-num num">
                {t("team.col.requests")}
              </th>
              <th scope="col" className="col-creds">
                {t("team.col.credentials")}
              </th>
            </tr>
          </thead>
          <tbody>
            {model.upstreams.map((u) => {
              const badge = healthBadge(u.health);
              return (
                <tr key={u.id}>
                  <td>
                    <p className="replica-name mono strong">{u.id}</p>
                    <p className="replica-url mono">{u.url}</p>
                    {u.last_error && (
                      <p className={u.health === "healthy" ? "replica-error past" : "replica-error"}>
                        <CircleAlert aria-hidden="true" size={13} className="replica-error-icon" />
                        <span>
                          <span className="replica-error-label">{t("team.lastError")}</span>{" "}
                          <span lang="en">{u.last_error}</span>
                        </span>
                      </p>
                    )}
                  </td>
                  <td>
                    <ModelName name={u.model} />
                  </td>
                  <td>
                    <StatusBadge tone={badge.tone}>{t(badge.label)}</StatusBadge>
                  </td>
                  <td className="num">
                    {number(u.in_flight)}
                    {u.queued > 0 && <span className="cell-sub">{t("team.queued", { n: number(u.queued) })}</span>}
                  </td>
                  <td className="num">
                    {number(u.requests)}
                    {u.failures > 0 && <span className="cell-sub replica-failures">{t("team.failures", { n: number(u.failures) })}</span>}
                  </td>
                  <td>
                    <ul className="cred-list">
                      {u.api_key && (
                        <li>
                          <KeyRound aria-hidden="true" size={13} /> {t("team.apiKey")}
                        </li>
                      )}
                      {u.client_certificate && (
                        <li>
                          <BadgeCheck aria-hidden="true" size={13} /> {t("team.clientCert")}
                        </li>
                      )}
                      {!u.api_key && !u.client_certificate && <li className="faint">{t("team.noCredentials")}</li>}
                    </ul>
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      </div>
      <div aria-live="polite" className="team-card-test">
        {(test.isError || test.data) && (
          <div className="team-card-test-body">
            {test.isError && <ErrorNotice error={test.error} compact />}
            {test.data && <RemoteTestResults result={test.data} modelFor={(replica) => model.upstreams.find((u) => u.id === replica)?.model} />}
            <button type="button" className="icon-btn team-card-test-close" onClick={() => test.reset()} aria-label={t("common.dismiss")}>
              <X aria-hidden="true" size={15} />
            </button>
          </div>
        )}
      </div>
    </li>
  );
}

/** An upstream model's name, wrapped after its `/` (`meta-llama/` · `Llama-3.3-70B-Instruct`) rather than at its hyphens. */
function ModelName({ name }: { name: string }) {
  const parts = name.split("/");
  return (
    <span className="mono replica-model">
      {parts.map((part, i) => (
        <span key={i} className="replica-model-part">
          {part}
          {i < parts.length - 1 && "/"}
        </span>
      ))}
    </span>
  );
}
