/**
 * Service accounts of the workspace: list, create (secret shown once), disable or enable,
 * rotate the secret, delete. Each change is one request; the list refreshes after it.
 */
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { Bot, Plus } from "lucide-react";
import { useState } from "react";
import { useApi } from "../api/api-context.js";
import type { ServiceAccount } from "../api/contract.js";
import { deleteServiceAccount, listServiceAccounts, patchServiceAccount, rotateServiceAccountSecret } from "../api/service-accounts-api.js";
import { useI18n } from "../i18n/i18n.js";
import { ConfirmDialog } from "../ui/ConfirmDialog.js";
import { EmptyState } from "../ui/EmptyState.js";
import { ErrorNotice } from "../ui/ErrorNotice.js";
import { Skeleton } from "../ui/Skeleton.js";
import { StatusBadge } from "../ui/StatusBadge.js";
import { CreateServiceAccountDialog } from "./CreateServiceAccountDialog.js";
import { ServiceAccountSecretDialog, type ShownSecret } from "./ServiceAccountSecretDialog.js";

export function ServiceAccounts({ workspaceId }: { workspaceId: string }) {
  const { t } = useI18n();
  const client = useApi();
  const queryClient = useQueryClient();
  const [creating, setCreating] = useState(false);
  const [shown, setShown] = useState<ShownSecret | null>(null);
  const [rotating, setRotating] = useState<ServiceAccount | null>(null);
  const [deleting, setDeleting] = useState<ServiceAccount | null>(null);
  const key = ["service-accounts", workspaceId];
  const accounts = useQuery({ queryKey: key, queryFn: () => listServiceAccounts(client, workspaceId).then((p) => p.data) });
  const refresh = () => queryClient.invalidateQueries({ queryKey: key });
  const toggle = useMutation({
    mutationFn: (account: ServiceAccount) => patchServiceAccount(client, workspaceId, account.id, { disabled: account.disabled_at === null }),
    onSettled: refresh,
  });
  const rotate = async (account: ServiceAccount) => {
    const created = await rotateServiceAccountSecret(client, workspaceId, account.id);
    await refresh();
    setShown({ account: created, reason: "rotated" });
  };
  const remove = async (account: ServiceAccount) => {
    await deleteServiceAccount(client, workspaceId, account.id);
    await refresh();
  };
  const newButton = (
    <button type="button" className="btn btn-primary" onClick={() => setCreating(true)}>
      <Plus aria-hidden="true" size={16} /> {t("sa.new")}
    </button>
  );

  return (
    <section className="section" aria-labelledby="sa-title">
      <div className="section-head">
        <div className="section-titles">
          <h2 id="sa-title">{t("sa.title")}</h2>
          <p>{t("sa.hint")}</p>
        </div>
        <span className="spacer" />
        {accounts.data && accounts.data.length > 0 && newButton}
      </div>
      {accounts.isPending && <Skeleton rows={3} height={32} />}
      {accounts.isError && <ErrorNotice error={accounts.error} onRetry={() => void accounts.refetch()} />}
      {toggle.isError && <ErrorNotice error={toggle.error} compact />}
      {accounts.data?.length === 0 && (
        <div className="card">
          <EmptyState icon={Bot} title={t("sa.emptyTitle")} actions={newButton}>
            {t("sa.emptyBody")}
          </EmptyState>
        </div>
      )}
      {accounts.data && accounts.data.length > 0 && <ServiceAccountTable accounts={accounts.data} busyId={toggle.isPending ? toggle.variables.id : null} onToggle={(a) => toggle.mutate(a)} onRotate={setRotating} onDelete={setDeleting} />}
      <CreateServiceAccountDialog open={creating} onOpenChange={setCreating} workspaceId={workspaceId} onCreated={(account) => setShown({ account, reason: "created" })} />
      <ServiceAccountSecretDialog shown={shown} onClose={() => setShown(null)} />
      <ConfirmDialog open={rotating !== null} onOpenChange={(open) => !open && setRotating(null)} title={t("sa.rotateTitle", { name: rotating?.name ?? "" })} confirmLabel={t("sa.rotate")} onConfirm={() => (rotating ? rotate(rotating) : Promise.resolve())}>
        <p>{t("sa.rotateBody")}</p>
      </ConfirmDialog>
      <ConfirmDialog open={deleting !== null} onOpenChange={(open) => !open && setDeleting(null)} title={t("sa.deleteTitle", { name: deleting?.name ?? "" })} confirmLabel={t("common.delete")} onConfirm={() => (deleting ? remove(deleting) : Promise.resolve())}>
        <p>{t("sa.deleteBody")}</p>
      </ConfirmDialog>
    </section>
  );
}

interface TableProps {
  accounts: ServiceAccount[];
  busyId: string | null;
  onToggle: (account: ServiceAccount) => void;
  onRotate: (account: ServiceAccount) => void;
  onDelete: (account: ServiceAccount) => void;
}

function ServiceAccountTable({ accounts, busyId, onToggle, onRotate, onDelete }: TableProps) {
  const { t, dateTime } = useI18n();
  return (
    <div className="table-wrap">
      <table className="table">
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
                <td className="scopes">{a.scopes.join(", ")}</td>
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
                <td className="muted nowrap">{a.last_token_at ? dateTime(a.last_token_at) : t("keys.never")}</td>
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
