/**
 * Puts an API key or a service account on a named rate-limit tier (administrators,
 * `workspaces.manage`). The caller says what is changed and how the change is sent.
 */
import { useMutation } from "@tanstack/react-query";
import { useId, useState, type FormEvent } from "react";
import { useI18n } from "../i18n/i18n.js";
import { ErrorNotice } from "../ui/ErrorNotice.js";
import { Modal } from "../ui/Modal.js";

/** What has a tier: an API key or a service account. */
export interface TierTarget {
  id: string;
  name: string;
  rate_limit_tier: string;
}

export interface TierDialogProps<T extends TierTarget> {
  target: T | null;
  onClose: () => void;
  /** Explains what the tier limits (a key, a service account). */
  description: string;
  /** Tier names seen (keys, accounts, the workspace, the caller's limits), offered as suggestions. */
  knownTiers: string[];
  /** Sends the change (null: back to the default tier); the dialog closes when it resolves and shows the error otherwise. */
  save: (target: T, tier: string | null) => Promise<unknown>;
}

export function TierDialog<T extends TierTarget>(props: TierDialogProps<T>) {
  const { t } = useI18n();
  const { target, onClose } = props;
  return (
    <Modal open={target !== null} onOpenChange={(open) => !open && onClose()} title={t("tier.title", { name: target?.name ?? "" })}>
      {target && <TierForm key={target.id} {...props} target={target} />}
    </Modal>
  );
}

function TierForm<T extends TierTarget>({ target, onClose, description, knownTiers, save: send }: TierDialogProps<T> & { target: T }) {
  const { t } = useI18n();
  const id = useId();
  const [tier, setTier] = useState(target.rate_limit_tier);
  const [useDefault, setUseDefault] = useState(false);
  const save = useMutation({ mutationFn: () => send(target, useDefault ? null : tier.trim()), onSuccess: onClose });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    if (useDefault || tier.trim()) save.mutate();
  };
  return (
    <form className="stack" onSubmit={submit}>
      <p className="muted">{description}</p>
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
