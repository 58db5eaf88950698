/** Puts an API key on a named rate-limit tier (administrators, `workspaces.manage`). */
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useId, useState, type FormEvent } from "react";
import { useApi } from "../api/api-context.js";
import type { ApiKey } from "../api/contract.js";
import { setKeyTier } from "../api/keys-api.js";
import { useI18n } from "../i18n/i18n.js";
import { ErrorNotice } from "../ui/ErrorNotice.js";
import { Modal } from "../ui/Modal.js";

export interface TierDialogProps {
  target: ApiKey | null;
  onClose: () => void;
  workspaceId: string;
  /** Tier names seen (keys, the workspace, the caller's limits), offered as suggestions. */
  knownTiers: string[];
}

export function TierDialog({ target, onClose, workspaceId, knownTiers }: TierDialogProps) {
  const { t } = useI18n();
  return (
    <Modal open={target !== null} onOpenChange={(open) => !open && onClose()} title={t("tier.title", { name: target?.name ?? "" })}>
      {target && <TierForm key={target.id} target={target} onClose={onClose} workspaceId={workspaceId} knownTiers={knownTiers} />}
    </Modal>
  );
}

function TierForm({ target, onClose, workspaceId, knownTiers }: TierDialogProps & { target: ApiKey }) {
  const { t } = useI18n();
  const client = useApi();
  const queryClient = useQueryClient();
  const id = useId();
  const [tier, setTier] = useState(target.rate_limit_tier);
  const [useDefault, setUseDefault] = useState(false);
  const save = useMutation({
    mutationFn: () => setKeyTier(client, workspaceId, target.id, useDefault ? null : tier.trim()),
    onSuccess: () => {
      void queryClient.invalidateQueries({ queryKey: ["keys", workspaceId] });
      void queryClient.invalidateQueries({ queryKey: ["me", "usage"] });
      onClose();
    },
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    if (useDefault || tier.trim()) save.mutate();
  };
  return (
    <form className="stack" onSubmit={submit}>
      <p className="muted">{t("tier.body")}</p>
      <div className="field">
        <label className="field-label" htmlFor={`${id}-tier`}>
          {t("tier.name")}
        </label>
        <input id={`${id}-tier`} className="input mono" list={`${id}-tiers`} value={tier} onChange={(e) => setTier(e.target.value)} disabled={useDefault} required={!useDefault} maxLength={40} autoFocus spellCheck={false} />
        <datalist id={`${id}-tiers`}>
          {knownTiers.map((name) => (
            <option key={name} value={name} />
          ))}
        </datalist>
        {knownTiers.length > 0 && <p className="field-hint">{t("tier.known", { list: knownTiers.join(", ") })}</p>}
      </div>
      <label className="row">
        <input type="checkbox" checked={useDefault} onChange={(e) => setUseDefault(e.target.checked)} />
        <span>{t("tier.useDefault")}</span>
      </label>
      {save.isError && <ErrorNotice error={save.error} compact />}
      <div className="dialog-actions">
        <button type="button" className="btn" onClick={onClose}>
          {t("common.cancel")}
        </button>
        <button type="submit" className="btn btn-primary" disabled={save.isPending || (!useDefault && !tier.trim())}>
          {save.isPending ? t("common.working") : t("tier.save")}
        </button>
      </div>
    </form>
  );
}
