/**
 * The workspace's service accounts as a table: name and client ID, scopes with the
 * rate-limit tier beneath (a change button for administrators), how each signs in, its
 * last token, its state, and the row's actions.
 */
import { Gauge } from "lucide-react";
import type { ServiceAccount } from "../api/contract.js";
import { useI18n } from "../i18n/i18n.js";
import { StatusBadge } from "../ui/StatusBadge.js";

export interface ServiceAccountTableProps {
  accounts: ServiceAccount[];
  /** The account whose enable/disable request is under way. */
  busyId: string | null;
  onToggle: (account: ServiceAccount) => void;
  onRotate: (account: ServiceAccount) => void;
  onDelete: (account: ServiceAccount) => void;
  /** Offers the tier change; null when the caller lacks `workspaces.manage`. */
  onChangeTier: ((account: ServiceAccount) => void) | null;
}

export function ServiceAccountTable({ accounts, busyId, onToggle, onRotate, onDelete, onChangeTier }: ServiceAccountTableProps) {
  const { t, dateTime } = useI18n();
  return (
    <div className="table-wrap">
      <table className="table sa-table">
        <caption className="sr-only">{t("sa.title")}</caption>
        <thead>
          <tr>
            <th scope="col">{t("sa.col.name")}</th>
            <th scope="col">{t("sa.col.scopes")}</th>
            <th scope="col">{t("sa.col.methods")}</th>
            <th scope="col">{t("sa.col.lastToken")}</th>
            <th scope="col">{t("sa.col.state")}</th>
            <th scope="col">
              <span className="sr-only">{t("common.actions")}</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {accounts.map((a) => {
            const disabled = a.disabled_at !== null;
            return (
              <tr key={a.id}>
                <td>
                  <span className="strong">{a.name}</span>
                  <span className="cell-sub mono sa-client">{a.client_id}</span>
                </td>
                <td className="sa-scopes">
                  <span className="scopes">{a.scopes.join(", ")}</span>
                  <span className="sa-tier">
                    {/* The column names the tier; a screen reader hears it in the badge too. */}
                    <span className="badge badge-neutral">
                      <span className="sr-only">{t("tier.name")}: </span>
                      {a.rate_limit_tier}
                    </span>
                    {onChangeTier && (
                      <button type="button" className="icon-btn" onClick={() => onChangeTier(a)} aria-label={t("tier.changeOne", { name: a.name })} title={t("tier.change")}>
                        <Gauge aria-hidden="true" size={14} />
                      </button>
                    )}
                  </span>
                </td>
                <td>
                  <span className="method-list">
                    {a.auth_methods.map((m) => (
                      <StatusBadge key={m} tone="info">
                        {t(`sa.method.${m}`)}
                      </StatusBadge>
                    ))}
                  </span>
                  {a.secret_prefix && <span className="cell-sub mono">{a.secret_prefix}…</span>}
                </td>
                <td className="muted">{a.last_token_at ? dateTime(a.last_token_at) : t("keys.never")}</td>
                <td>
                  <StatusBadge tone={disabled ? "warning" : "success"}>{t(disabled ? "sa.state.disabled" : "sa.state.active")}</StatusBadge>
                </td>
                <td>
                  <div className="row-actions">
                    <button type="button" className="btn btn-small" onClick={() => onToggle(a)} disabled={busyId === a.id} aria-label={t(disabled ? "sa.enableOne" : "sa.disableOne", { name: a.name })}>
                      {t(disabled ? "sa.enable" : "sa.disable")}
                    </button>
                    {a.auth_methods.includes("client_secret") && (
                      <button type="button" className="btn btn-small" onClick={() => onRotate(a)} aria-label={t("sa.rotateOne", { name: a.name })}>
                        {t("sa.rotate")}
                      </button>
                    )}
                    <button type="button" className="btn btn-small btn-danger-ghost" onClick={() => onDelete(a)} aria-label={t("sa.deleteOne", { name: a.name })}>
                      {t("common.delete")}
                    </button>
                  </div>
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}
