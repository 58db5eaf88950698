/**
 * Team servers (remote models) for administrators (`workspaces.manage`): every remote model
 * with its replicas' health, refreshed every 5 s while the page is visible, a connection
 * test each, Remove for those added here, and the form to add one. Anyone else, or a server
 * that refuses or lacks the admin API, sees nothing of it here (the model table still lists
 * remote models).
 */
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { CircleCheck, Plus, Server } from "lucide-react";
import { useEffect, useRef, useState } from "react";
import { isMissingEndpoint } from "../api/api-error.js";
import { useApi } from "../api/api-context.js";
import type { RemoteModel } from "../api/contract.js";
import { deleteRemoteModel, listRemoteModels } from "../api/remote-models-api.js";
import { useAuth } from "../auth/principal-context.js";
import { useI18n } from "../i18n/i18n.js";
import { ConfirmDialog } from "../ui/ConfirmDialog.js";
import { EmptyState } from "../ui/EmptyState.js";
import { ErrorNotice } from "../ui/ErrorNotice.js";
import { isScopeRefusal } from "../ui/ScopeRequired.js";
import { Skeleton } from "../ui/Skeleton.js";
import { AddTeamServerDialog } from "./AddTeamServerDialog.js";
import { RemoteModelCard } from "./RemoteModelCard.js";

/** How often replicas' health is refreshed while the page is visible. */
export const HEALTH_REFRESH_MS = 5000;
const STATUS_MS = 10_000;

const hidden = (error: unknown) => isScopeRefusal(error) || isMissingEndpoint(error);

export function TeamServersSection() {
  const { principal } = useAuth();
  if (!principal.scopes.includes("workspaces.manage")) return null;
  return <TeamServers />;
}

function TeamServers() {
  const { t } = useI18n();
  const client = useApi();
  const queryClient = useQueryClient();
  const remote = useQuery({
    queryKey: ["remote-models"],
    queryFn: ({ signal }) => listRemoteModels(client, signal).then((list) => [...list.data].sort((a, b) => a.id.localeCompare(b.id))),
    // Paused while the page is hidden (react-query does not poll in the background); stops on a refusal.
    refetchInterval: (query) => (query.state.error && hidden(query.state.error) ? false : HEALTH_REFRESH_MS),
  });
  const [adding, setAdding] = useState(false);
  const [removing, setRemoving] = useState<RemoteModel | null>(null);
  /** What the last add or removal did, said (and announced) until the next, or for a while. */
  const [status, setStatus] = useState<{ done: "added" | "removed"; id: string } | null>(null);
  useEffect(() => {
    if (!status) return;
    const timer = setTimeout(() => setStatus(null), STATUS_MS);
    return () => clearTimeout(timer);
  }, [status]);
  const headingRef = useRef<HTMLHeadingElement>(null);
  /** Set when a dialog's action changed the list: focus then goes to the heading (the button that opened it may be gone). */
  const changed = useRef(false);
  const focusAfterChange = (event: Event) => {
    if (!changed.current) return;
    changed.current = false;
    event.preventDefault();
    headingRef.current?.focus();
  };

  if (remote.isError && hidden(remote.error)) return null;

  const refresh = () => {
    void queryClient.invalidateQueries({ queryKey: ["remote-models"] });
    void queryClient.invalidateQueries({ queryKey: ["models"] });
  };
  const added = (model: RemoteModel) => {
    queryClient.setQueryData<RemoteModel[]>(["remote-models"], (list) => [...(list ?? []).filter((m) => m.id !== model.id), model].sort((a, b) => a.id.localeCompare(b.id)));
    refresh();
    changed.current = true;
    setStatus({ done: "added", id: model.id });
    setAdding(false);
  };
  const remove = async (model: RemoteModel) => {
    await deleteRemoteModel(client, model.id);
    queryClient.setQueryData<RemoteModel[]>(["remote-models"], (list) => (list ?? []).filter((m) => m.id !== model.id));
    refresh();
    changed.current = true;
    setStatus({ done: "removed", id: model.id });
  };
  const openAdd = () => {
    setStatus(null);
    setAdding(true);
  };
  const models = remote.data;

  return (
    <section className="section team-servers" aria-labelledby="team-servers-title">
      <div className="section-head team-head">
        <div className="team-head-titles">
          <h2 id="team-servers-title" ref={headingRef} tabIndex={-1}>
            {t("team.title")}
          </h2>
          <p>{t("team.subtitle")}</p>
        </div>
        {models && models.length > 0 && (
          <button type="button" className="btn" onClick={openAdd}>
            <Plus aria-hidden="true" size={15} /> {t("team.add")}
          </button>
        )}
      </div>
      <div role="status" className="team-status">
        {status && (
          <p className="notice notice-success compact">
            <CircleCheck aria-hidden="true" size={16} className="notice-icon" />
            {t(status.done === "added" ? "team.added" : "team.removed", { id: status.id })}
          </p>
        )}
      </div>
      {remote.isPending && <Skeleton rows={3} height={44} />}
      {remote.isError && <ErrorNotice error={remote.error} onRetry={() => void remote.refetch()} compact={models !== undefined} />}
      {models && models.length === 0 && (
        <div className="card team-empty">
          <EmptyState
            icon={Server}
            title={t("team.emptyTitle")}
            titleLevel={3}
            actions={
              <button type="button" className="btn btn-primary" onClick={openAdd}>
                <Plus aria-hidden="true" size={15} /> {t("team.add")}
              </button>
            }
          >
            <p>{t("team.emptyBody")}</p>
            <p>{t("team.emptyHow")}</p>
          </EmptyState>
        </div>
      )}
      {models && models.length > 0 && (
        <ul className="team-list">
          {models.map((model) => (
            <RemoteModelCard key={model.id} model={model} onRemove={setRemoving} />
          ))}
        </ul>
      )}
      <AddTeamServerDialog open={adding} onOpenChange={setAdding} onAdded={added} onCloseAutoFocus={focusAfterChange} />
      <ConfirmDialog
        open={removing !== null}
        onOpenChange={(open) => !open && setRemoving(null)}
        title={t("team.removeTitle", { id: removing?.id ?? "" })}
        confirmLabel={t("team.remove")}
        onConfirm={() => (removing ? remove(removing) : Promise.resolve())}
        onCloseAutoFocus={focusAfterChange}
      >
        <p>{t("team.removeBody", { id: removing?.id ?? "" })}</p>
      </ConfirmDialog>
    </section>
  );
}
