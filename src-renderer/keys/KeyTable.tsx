/** The workspace's keys: prefix, scopes, rate-limit tier, dates, state; revoke with confirmation; administrators change tiers. */
import { useQueryClient } from "@tanstack/react-query";
import { Gauge } from "lucide-react";
import { useState } from "react";
import { useApi } from "../api/api-context.js";
import type { ApiKey } from "../api/contract.js";
import { revokeKey } from "../api/keys-api.js";
import { useI18n } from "../i18n/i18n.js";
import { ConfirmDialog } from "../ui/ConfirmDialog.js";
import { StatusBadge } from "../ui/StatusBadge.js";

export interface KeyTableProps {
  keys: ApiKey[];
  workspaceId: string;
  currentKeyId: string;
  /** Shows the tier change (the caller has `workspaces.manage`). */
  canChangeTier: boolean;
  onChangeTier: (key: ApiKey) => void;
}

export function KeyTable({ keys, workspaceId, currentKeyId, canChangeTier, onChangeTier }: KeyTableProps) {
  const { t, dateTime, shortDate } = useI18n();
  const client = useApi();
  const queryClient = useQueryClient();
  const [target, setTarget] = useState<ApiKey | null>(null);
  const [now] = useState(() => Date.now() / 1000);
  const revoke = async (key: ApiKey) => {
    await revokeKey(client, workspaceId, key.id);
    await queryClient.invalidateQueries({ queryKey: ["keys", workspaceId] });
  };
  return (
    <div className="table-wrap">
      <table className="table">
        <caption className="sr-only">{t("keys.listTitle")}</caption>
        <thead>
          <tr>
            <th scope="col">{t("keys.col.name")}</th>
            <th scope="col">{t("keys.col.prefix")}</th>
            <th scope="col">{t("keys.col.scopes")}</th>
            <th scope="col">{t("keys.col.tier")}</th>
            <th scope="col">{t("keys.col.created")}</th>
            <th scope="col">{t("keys.col.lastUsed")}</th>
            <th scope="col">{t("keys.col.expires")}</th>
            <th scope="col">{t("keys.col.state")}</th>
            <th scope="col">
              <span className="sr-only">{t("common.actions")}</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {keys.map((k) => {
            const expired = k.expires_at !== null && k.expires_at < now;
            const state = k.revoked_at ? "revoked" : expired ? "expired" : "active";
            return (
              <tr key={k.id}>
                <td className="strong">
                  {k.name}
                  {k.id === currentKeyId && <span className="this-key"> · {t("keys.thisSession")}</span>}
                </td>
                <td className="mono key-prefix">{k.prefix}…</td>
                <td className="scopes">{k.scopes.join(", ")}</td>
                <td className="nowrap">
                  <span className="tier-cell">
                    <span className="mono tier-name">{k.rate_limit_tier}</span>
                    {canChangeTier && state === "active" && (
                      <button type="button" className="icon-btn" onClick={() => onChangeTier(k)} aria-label={t("tier.changeOne", { name: k.name })} title={t("tier.change")}>
                        <Gauge aria-hidden="true" size={14} />
                      </button>
                    )}
                  </span>
                </td>
                <td className="muted nowrap" title={dateTime(k.created_at)}>
                  {shortDate(k.created_at)}
                </td>
                <td className="muted">{k.last_used_at ? dateTime(k.last_used_at) : t("keys.never")}</td>
                <td className="muted nowrap" title={k.expires_at ? dateTime(k.expires_at) : undefined}>
                  {k.expires_at ? shortDate(k.expires_at) : t("keys.noExpiry")}
                </td>
                <td>
                  <StatusBadge tone={state === "active" ? "success" : state === "revoked" ? "danger" : "warning"}>{t(`keys.state.${state}`)}</StatusBadge>
                </td>
                <td>
                  {state === "active" && (
                    <button type="button" className="btn btn-small" onClick={() => setTarget(k)} aria-label={t("keys.revokeOne", { name: k.name })}>
                      {t("keys.revoke")}
                    </button>
                  )}
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
      <ConfirmDialog open={target !== null} onOpenChange={(open) => !open && setTarget(null)} title={t("keys.revokeTitle", { name: target?.name ?? "" })} confirmLabel={t("keys.revoke")} onConfirm={() => (target ? revoke(target) : Promise.resolve())}>
        <p>{t("keys.revokeBody")}</p>
        {target?.id === currentKeyId && <p className="strong">{t("keys.revokeSelf")}</p>}
      </ConfirmDialog>
    </div>
  );
}
