/** Creates a service account: a name, the most its tokens may do, and optionally its public key (JWK). */
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useId, useState, type FormEvent } from "react";
import { useApi } from "../api/api-context.js";
import type { CreatedServiceAccount, Scope } from "../api/contract.js";
import { createServiceAccount } from "../api/service-accounts-api.js";
import { useI18n } from "../i18n/i18n.js";
import { ErrorNotice } from "../ui/ErrorNotice.js";
import { Modal } from "../ui/Modal.js";
import { SCOPES } from "./CreateKeyDialog.js";
import { parsePublicJwk } from "./service-account-snippet.js";

export interface CreateServiceAccountDialogProps {
  open: boolean;
  onOpenChange: (open: boolean) => void;
  workspaceId: string;
  onCreated: (account: CreatedServiceAccount) => void;
}

export function CreateServiceAccountDialog({ open, onOpenChange, workspaceId, onCreated }: CreateServiceAccountDialogProps) {
  const { t } = useI18n();
  const client = useApi();
  const queryClient = useQueryClient();
  const id = useId();
  const [name, setName] = useState("");
  const [scopes, setScopes] = useState<Scope[]>(["inference", "rag.read"]);
  const [jwk, setJwk] = useState("");
  const [jwkInvalid, setJwkInvalid] = useState(false);
  const create = useMutation({
    mutationFn: (publicKey: Record<string, unknown> | undefined) => createServiceAccount(client, workspaceId, { name: name.trim(), scopes, ...(publicKey ? { public_key: publicKey } : {}) }),
    onSuccess: (account) => {
      void queryClient.invalidateQueries({ queryKey: ["service-accounts", workspaceId] });
      onOpenChange(false);
      setName("");
      setJwk("");
      onCreated(account);
    },
  });
  const toggle = (scope: Scope) => setScopes((s) => (s.includes(scope) ? s.filter((x) => x !== scope) : [...s, scope]));
  const submit = (e: FormEvent) => {
    e.preventDefault();
    const parsed = parsePublicJwk(jwk);
    setJwkInvalid(!parsed.ok);
    if (parsed.ok && name.trim() && scopes.length > 0) create.mutate(parsed.value);
  };
  return (
    <Modal open={open} onOpenChange={onOpenChange} title={t("sa.createTitle")}>
      <form className="stack" onSubmit={submit}>
        <div className="field">
          <label className="field-label" htmlFor={`${id}-name`}>
            {t("sa.name")}
          </label>
          <input id={`${id}-name`} className="input" value={name} onChange={(e) => setName(e.target.value)} placeholder={t("sa.namePlaceholder")} required maxLength={200} autoFocus />
        </div>
        <fieldset className="field fieldset">
          <legend className="field-label">{t("sa.scopes")}</legend>
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
          <label className="field-label" htmlFor={`${id}-jwk`}>
            {t("sa.publicKey")}
          </label>
          <textarea
            id={`${id}-jwk`}
            className="textarea mono"
            rows={3}
            value={jwk}
            onChange={(e) => {
              setJwk(e.target.value);
              setJwkInvalid(false);
            }}
            aria-invalid={jwkInvalid}
            aria-describedby={`${id}-jwk-hint`}
            placeholder='{"kty":"OKP","crv":"Ed25519","x":"…"}'
            spellCheck={false}
          />
          <p id={`${id}-jwk-hint`} className={jwkInvalid ? "field-hint warn-text" : "field-hint"} role={jwkInvalid ? "alert" : undefined}>
            {jwkInvalid ? t("sa.publicKeyInvalid") : t("sa.publicKeyHint")}
          </p>
        </div>
        {create.isError && <ErrorNotice error={create.error} compact />}
        <div className="dialog-actions">
          <button type="button" className="btn" onClick={() => onOpenChange(false)}>
            {t("common.cancel")}
          </button>
          <button type="submit" className="btn btn-primary" disabled={!name.trim() || scopes.length === 0 || create.isPending}>
            {create.isPending ? t("common.working") : t("sa.create")}
          </button>
        </div>
      </form>
    </Modal>
  );
}
