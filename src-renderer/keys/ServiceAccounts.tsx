/**
 * Service accounts of the workspace: list, create (secret shown once), disable or enable,
 * rotate the secret, change the rate-limit tier (administrators), delete. Each change is
 * one request; the list refreshes after it.
 */
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { Bot, Plus } from "lucide-react";
import { useMemo, useState } from "react";
import { useApi } from "../api/api-context.js";
import type { ServiceAccount } from "../api/contract.js";
import { deleteServiceAccount, listServiceAccounts, patchServiceAccount, rotateServiceAccountSecret } from "../api/service-accounts-api.js";
import { useAuth } from "../auth/principal-context.js";
import { useI18n } from "../i18n/i18n.js";
import { ConfirmDialog } from "../ui/ConfirmDialog.js";
import { EmptyState } from "../ui/EmptyState.js";
import { ErrorNotice } from "../ui/ErrorNotice.js";
import { Skeleton } from "../ui/Skeleton.js";
import { CreateServiceAccountDialog } from "./CreateServiceAccountDialog.js";
import { ServiceAccountSecretDialog, type ShownSecret } from "./ServiceAccountSecretDialog.js";
import { ServiceAccountTable } from "./ServiceAccountTable.js";
import { suggestedTiers } from "./suggested-tiers.js";
import { TierDialog } from "./TierDialog.js";

export function ServiceAccounts({ workspaceId }: { workspaceId: string }) {
  const { t } = useI18n();
  const client = useApi();
  const queryClient = useQueryClient();
  const { principal } = useAuth();
  const [creating, setCreating] = useState(false);
  const [shown, setShown] = useState<ShownSecret | null>(null);
  const [rotating, setRotating] = useState<ServiceAccount | null>(null);
  const [deleting, setDeleting] = useState<ServiceAccount | null>(null);
  const [tierOf, setTierOf] = useState<ServiceAccount | null>(null);
  const key = ["service-accounts", workspaceId];
  const accounts = useQuery({ queryKey: key, queryFn: () => listServiceAccounts(client, workspaceId).then((p) => p.data) });
  const refresh = () => queryClient.invalidateQueries({ queryKey: key });
  const isAdmin = principal.scopes.includes("workspaces.manage");
  const knownTiers = useMemo(() => suggestedTiers(principal, (accounts.data ?? []).map((a) => a.rate_limit_tier)), [accounts.data, principal]);
  const toggle = useMutation({
    mutationFn: (account: ServiceAccount) => patchServiceAccount(client, workspaceId, account.id, { disabled: account.disabled_at === null }),
    onSettled: refresh,
  });
  const rotate = async (account: ServiceAccount) => {
    const created = await rotateServiceAccountSecret(client, workspaceId, account.id);
    await refresh();
    setShown({ account: created, reason: "rotated" });
  };
  const saveTier = async (account: ServiceAccount, tier: string | null) => {
    await patchServiceAccount(client, workspaceId, account.id, { rate_limit_tier: tier });
    void refresh();
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
      {accounts.data && accounts.data.length > 0 && (
        <ServiceAccountTable
          accounts={accounts.data}
          busyId={toggle.isPending ? toggle.variables.id : null}
          onToggle={(a) => toggle.mutate(a)}
          onRotate={setRotating}
          onDelete={setDeleting}
          onChangeTier={isAdmin ? setTierOf : null}
        />
      )}
      <CreateServiceAccountDialog open={creating} onOpenChange={setCreating} workspaceId={workspaceId} onCreated={(account) => setShown({ account, reason: "created" })} />
      <ServiceAccountSecretDialog shown={shown} onClose={() => setShown(null)} />
      <TierDialog target={tierOf} onClose={() => setTierOf(null)} description={t("tier.serviceAccountBody")} knownTiers={knownTiers} save={saveTier} />
      <ConfirmDialog open={rotating !== null} onOpenChange={(open) => !open && setRotating(null)} title={t("sa.rotateTitle", { name: rotating?.name ?? "" })} confirmLabel={t("sa.rotate")} onConfirm={() => (rotating ? rotate(rotating) : Promise.resolve())}>
        <p>{t("sa.rotateBody")}</p>
      </ConfirmDialog>
      <ConfirmDialog open={deleting !== null} onOpenChange={(open) => !open && setDeleting(null)} title={t("sa.deleteTitle", { name: deleting?.name ?? "" })} confirmLabel={t("common.delete")} onConfirm={() => (deleting ? remove(deleting) : Promise.resolve())}>
        <p>{t("sa.deleteBody")}</p>
      </ConfirmDialog>
    </section>
  );
}
