/** Creates an API key: a name, its scopes and an optional expiry. */
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useId, useState, type FormEvent } from "react";
import { useApi } from "../api/api-context.js";
import type { CreatedApiKey, Scope } from "../api/contract.js";
import { createKey } from "../api/keys-api.js";
import { useI18n } from "../i18n/i18n.js";
import { ErrorNotice } from "../ui/ErrorNotice.js";
import { Modal } from "../ui/Modal.js";

export const SCOPES: Scope[] = ["inference", "rag.read", "rag.write", "keys.manage", "workspaces.manage", "audit.read", "metrics.read"];
const EXPIRY = [0, 7, 30, 90, 365];

export interface CreateKeyDialogProps {
  open: boolean;
  onOpenChange: (open: boolean) => void;
  workspaceId: string;
  onCreated: (key: CreatedApiKey) => void;
}

export function CreateKeyDialog({ open, onOpenChange, workspaceId, onCreated }: CreateKeyDialogProps) {
  const { t } = useI18n();
  const client = useApi();
  const queryClient = useQueryClient();
  const id = useId();
  const [name, setName] = useState("");
  const [scopes, setScopes] = useState<Scope[]>(["inference", "rag.read"]);
  const [expiry, setExpiry] = useState(0);
  const create = useMutation({
    mutationFn: () => createKey(client, workspaceId, { name: name.trim(), scopes, ...(expiry > 0 ? { expires_in_days: expiry } : {}) }),
    onSuccess: (key) => {
      void queryClient.invalidateQueries({ queryKey: ["keys", workspaceId] });
      onOpenChange(false);
      setName("");
      onCreated(key);
    },
  });
  const toggle = (scope: Scope) => setScopes((s) => (s.includes(scope) ? s.filter((x) => x !== scope) : [...s, scope]));
  const submit = (e: FormEvent) => {
    e.preventDefault();
    if (name.trim() && scopes.length > 0) create.mutate();
  };
  return (
    <Modal open={open} onOpenChange={onOpenChange} title={t("createKey.title")}>
      <form className="stack" onSubmit={submit}>
        <div className="field">
          <label className="field-label" htmlFor={`${id}-name`}>
            {t("createKey.name")}
          </label>
          <input id={`${id}-name`} className="input" value={name} onChange={(e) => setName(e.target.value)} placeholder={t("createKey.namePlaceholder")} required maxLength={200} autoFocus />
        </div>
        <fieldset className="field fieldset">
          <legend className="field-label">{t("createKey.scopes")}</legend>
          {SCOPES.map((scope) => (
            <label key={scope} className="choice">
              <input type="checkbox" checked={scopes.includes(scope)} onChange={() => toggle(scope)} />
              <span>
                <span className="choice-title mono">{scope}</span>
                <span className="choice-hint"> — {t(`scope.${scope}`)}</span>
              </span>
            </label>
          ))}
          {scopes.length === 0 && <p className="field-hint warn-text">{t("createKey.needScope")}</p>}
        </fieldset>
        <div className="field">
          <label className="field-label" htmlFor={`${id}-expiry`}>
            {t("createKey.expiry")}
          </label>
          <select id={`${id}-expiry`} className="select" value={expiry} onChange={(e) => setExpiry(Number(e.target.value))} style={{ width: 200 }}>
            {EXPIRY.map((d) => (
              <option key={d} value={d}>
                {d === 0 ? t("createKey.never") : t("createKey.days", { n: d })}
              </option>
            ))}
          </select>
        </div>
        {create.isError && <ErrorNotice error={create.error} compact />}
        <div className="dialog-actions">
          <button type="button" className="btn" onClick={() => onOpenChange(false)}>
            {t("common.cancel")}
          </button>
          <button type="submit" className="btn btn-primary" disabled={!name.trim() || scopes.length === 0 || create.isPending}>
            {create.isPending ? t("common.working") : t("createKey.submit")}
          </button>
        </div>
      </form>
    </Modal>
  );
}
