/**
 * The Ollama-compatible listener: whether it is open, on which address, and which key it acts
 * as (its workspace and scopes), why it does not work when it does not, and for an
 * administrator the controls to open it with a key of the workspace, move it, or close it,
 * with a plain warning that any program on this computer can then use that key's access.
 */
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { Plug, TriangleAlert } from "lucide-react";
import { useId, useState, type FormEvent, type ReactNode } from "react";
import { useApi } from "../api/api-context.js";
import type { ApiKey, OllamaListener } from "../api/contract.js";
import { listKeys } from "../api/keys-api.js";
import { closeOllamaListener, getOllamaListener, openOllamaListener } from "../api/ollama-listener-api.js";
import { useAuth } from "../auth/principal-context.js";
import { useI18n, type MessageKey } from "../i18n/i18n.js";
import { routeHref } from "../lib/route.js";
import { CopyButton } from "../ui/CopyButton.js";
import { ErrorNotice } from "../ui/ErrorNotice.js";
import { Skeleton } from "../ui/Skeleton.js";
import { StatusBadge, type Tone } from "../ui/StatusBadge.js";
import { SecurityCard } from "./SecurityCard.js";

const QUERY_KEY = ["ollama-listener"];
const TONES: Record<OllamaListener["status"], Tone> = { closed: "neutral", open: "success", broken: "danger", unavailable: "neutral" };
/** Keys the server refuses to lend: with no secret to present, any local program would hold these. */
const ADMIN_SCOPES = ["keys.manage", "workspaces.manage"];

/** Whether the server would let the listener act as `key`: active, and no administrative scope. */
export const lendable = (key: ApiKey, nowSeconds = Date.now() / 1000) => key.revoked_at === null && (key.expires_at === null || key.expires_at > nowSeconds) && !key.scopes.some((s) => ADMIN_SCOPES.includes(s));

export function OllamaListenerCard() {
  const { t } = useI18n();
  const client = useApi();
  const listener = useQuery({ queryKey: QUERY_KEY, queryFn: ({ signal }) => getOllamaListener(client, signal) });
  return (
    <SecurityCard id="sec-ollama" icon={<Plug size={18} />} title={t("security.ollama.title")}>
      <p className="field-hint">{t("security.ollama.body")}</p>
      {listener.isPending && <Skeleton rows={3} height={18} />}
      {listener.isError && <ErrorNotice error={listener.error} compact onRetry={() => void listener.refetch()} />}
      {listener.data && <ListenerView state={listener.data} />}
    </SecurityCard>
  );
}

function ListenerView({ state }: { state: OllamaListener }) {
  const { t } = useI18n();
  const client = useApi();
  const queryClient = useQueryClient();
  const [editing, setEditing] = useState(false);
  const close = useMutation({
    mutationFn: () => closeOllamaListener(client),
    onSuccess: (closed) => {
      queryClient.setQueryData(QUERY_KEY, closed);
      setEditing(false);
    },
  });
  const opened = state.status === "open" || state.status === "broken";
  const showForm = state.status === "closed" || state.status === "broken" || editing;
  const closeButton = opened && (
    <button type="button" className="btn btn-small" disabled={close.isPending} onClick={() => close.mutate()}>
      {close.isPending ? t("common.working") : t("security.ollama.close")}
    </button>
  );
  return (
    <>
      <ListenerFacts state={state} />
      {opened && !showForm && <Warning />}
      {close.isError && <ErrorNotice error={close.error} compact />}
      {state.status !== "unavailable" && showForm && <OpenForm state={state} onCancel={editing ? () => setEditing(false) : null} onOpened={() => setEditing(false)} extraAction={closeButton} />}
      {opened && !showForm && (
        <div className="security-actions">
          <button type="button" className="btn btn-small" onClick={() => setEditing(true)}>
            {t("security.ollama.change")}
          </button>
          {closeButton}
        </div>
      )}
    </>
  );
}

/** Its status; where it listens, the key it acts as, that key's workspace and scopes; why it does not work. */
function ListenerFacts({ state }: { state: OllamaListener }) {
  const { t, dateTime } = useI18n();
  const opened = state.status === "open" || state.status === "broken";
  return (
    <>
      <div className="security-lead">
        <StatusBadge tone={TONES[state.status]}>{t(`security.ollama.status.${state.status}` as MessageKey)}</StatusBadge>
      </div>
      {opened && state.url && state.key && (
        <dl className="facts">
          <dt>{t("security.ollama.address")}</dt>
          <dd className="issuer">
            <span className="mono">{state.url}</span>
            <CopyButton text={state.url} />
          </dd>
          <dt>{t("security.ollama.key")}</dt>
          <dd>
            {state.key.name} <span className="mono">({state.key.prefix}…)</span>
          </dd>
          <dt>{t("security.ollama.workspace")}</dt>
          <dd>
            {state.workspace?.name ?? "—"} {state.workspace && <span className="mono muted">({state.workspace.id})</span>}
          </dd>
          <dt>{t("security.ollama.scopes")}</dt>
          <dd className="mono">{state.key.scopes.join(", ")}</dd>
          {state.opened_at !== null && (
            <>
              <dt>{t("security.ollama.opened")}</dt>
              <dd>{dateTime(state.opened_at)}</dd>
            </>
          )}
        </dl>
      )}
      {state.problem && (
        <div className="notice notice-error" role="note">
          <TriangleAlert aria-hidden="true" size={18} className="notice-icon" />
          <div className="notice-body">
            <p className="notice-title">{t(`security.ollama.problem.${state.problem.code}` as MessageKey)}</p>
            <p className="notice-detail">{state.problem.message}</p>
          </div>
        </div>
      )}
      {state.status === "open" && state.url && <p className="field-hint">{t("security.ollama.connect", { url: state.url })}</p>}
    </>
  );
}

function Warning() {
  const { t } = useI18n();
  return (
    <div className="notice notice-warning" role="note">
      <TriangleAlert aria-hidden="true" size={18} className="notice-icon" />
      <div className="notice-body">
        <p className="notice-title">{t("security.ollama.warnTitle")}</p>
        <p className="notice-detail">{t("security.ollama.warn")}</p>
      </div>
    </div>
  );
}

function OpenForm({ state, onCancel, onOpened, extraAction }: { state: OllamaListener; onCancel: (() => void) | null; onOpened: () => void; extraAction: ReactNode }) {
  const { t } = useI18n();
  const id = useId();
  const client = useApi();
  const queryClient = useQueryClient();
  const { principal } = useAuth();
  const keys = useQuery({ queryKey: ["keys", principal.workspace_id], queryFn: () => listKeys(client, principal.workspace_id).then((p) => p.data) });
  const eligible = (keys.data ?? []).filter((k) => lendable(k));
  const [chosen, setChosen] = useState<string | null>(null);
  const [port, setPort] = useState(String(state.port ?? state.default_port));
  const keyId = chosen ?? (eligible.some((k) => k.id === state.key?.id) ? state.key!.id : (eligible[0]?.id ?? ""));
  const portNumber = Number(port);
  const portValid = Number.isInteger(portNumber) && portNumber >= 1 && portNumber <= 65535;
  const open = useMutation({
    mutationFn: () => openOllamaListener(client, { key_id: keyId, port: portNumber }),
    onSuccess: (opened) => {
      queryClient.setQueryData(QUERY_KEY, opened);
      onOpened();
    },
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    if (keyId && portValid) open.mutate();
  };
  if (keys.isPending) return <Skeleton rows={2} height={18} />;
  if (keys.isError) return <ErrorNotice error={keys.error} compact onRetry={() => void keys.refetch()} />;
  if (eligible.length === 0) {
    return (
      <p className="field-hint">
        {t("security.ollama.noKeys")}{" "}
        <a href={routeHref({ page: "keys" })}>{t("security.ollama.keysPage")}</a>
      </p>
    );
  }
  return (
    <form className="stack" onSubmit={submit} aria-label={t("security.ollama.formLabel")}>
      <div className="field">
        <label className="field-label" htmlFor={`${id}-key`}>
          {t("security.ollama.chooseKey")}
        </label>
        <select id={`${id}-key`} className="select" value={keyId} onChange={(e) => setChosen(e.target.value)}>
          {eligible.map((k) => (
            <option key={k.id} value={k.id}>
              {t("security.ollama.keyOption", { name: k.name, prefix: k.prefix, scopes: k.scopes.join(", ") })}
            </option>
          ))}
        </select>
        <p className="field-hint">{t("security.ollama.keyHint")}</p>
      </div>
      <div className="field">
        <label className="field-label" htmlFor={`${id}-port`}>
          {t("security.ollama.port")}
        </label>
        <input id={`${id}-port`} className="input mono" inputMode="numeric" value={port} onChange={(e) => setPort(e.target.value.trim())} aria-invalid={!portValid} required />
        <p className="field-hint">{t("security.ollama.portHint", { port: state.default_port })}</p>
      </div>
      <Warning />
      {open.isError && <ErrorNotice error={open.error} compact />}
      <div className="security-actions">
        {onCancel && (
          <button type="button" className="btn btn-small" onClick={onCancel}>
            {t("common.cancel")}
          </button>
        )}
        <button type="submit" className="btn btn-small btn-primary" disabled={open.isPending || !keyId || !portValid}>
          {open.isPending ? t("common.working") : t(state.status === "open" ? "security.ollama.move" : "security.ollama.open")}
        </button>
        {extraAction}
      </div>
    </form>
  );
}
