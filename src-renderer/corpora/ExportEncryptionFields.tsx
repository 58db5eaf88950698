/**
 * What an exported bundle is encrypted for: a passphrase typed twice (with its strength and the
 * server's 12-character minimum), or the receiving instances' recipient keys, pasted.
 */
import { useId, useState } from "react";
import type { BundleEncryption } from "../api/bundles-api.js";
import { useI18n } from "../i18n/i18n.js";
import { MIN_PASSPHRASE_LENGTH, passphraseStrength } from "./passphrase-strength.js";
import { MAX_RECIPIENTS, parseRecipients } from "./recipient-keys.js";

export type EncryptionMode = "passphrase" | "recipient";

export interface EncryptionValue {
  mode: EncryptionMode;
  passphrase: string;
  repeat: string;
  recipients: string;
}

export const emptyEncryption: EncryptionValue = { mode: "passphrase", passphrase: "", repeat: "", recipients: "" };

/** The request's encryption, or null while the fields do not make a valid one. */
export function encryptionOf(value: EncryptionValue): BundleEncryption | null {
  if (value.mode === "recipient") {
    const { keys, problem } = parseRecipients(value.recipients);
    return problem ? null : { recipients: keys };
  }
  return [...value.passphrase].length >= MIN_PASSPHRASE_LENGTH && value.passphrase === value.repeat ? { passphrase: value.passphrase } : null;
}

const METER_WIDTH = { short: "12%", weak: "35%", fair: "65%", strong: "100%" } as const;

/** `attempted`: the person pressed Export, so every problem is shown, not only those already typed into. */
export function ExportEncryptionFields({ value, onChange, attempted }: { value: EncryptionValue; onChange: (value: EncryptionValue) => void; attempted: boolean }) {
  const { t } = useI18n();
  const id = useId();
  const [show, setShow] = useState(false);
  // The passphrase field takes the focus when the dialog opens, not when a radio is switched back to it.
  const [modeChanged, setModeChanged] = useState(false);
  const set = (patch: Partial<EncryptionValue>) => onChange({ ...value, ...patch });
  const chooseMode = (mode: EncryptionMode) => {
    setModeChanged(true);
    set({ mode });
  };
  const { strength } = passphraseStrength(value.passphrase);
  const length = [...value.passphrase].length;
  const mismatch = value.repeat.length > 0 && value.repeat !== value.passphrase && (attempted || value.repeat.length >= value.passphrase.length);
  const recipients = parseRecipients(value.recipients);
  const showRecipientProblem = recipients.problem !== null && (attempted || (recipients.problem !== "empty" && value.recipients.trim().length > 0));
  const recipientProblem =
    recipients.problem === "empty"
      ? t("bundle.recipient.empty")
      : recipients.problem === "tooMany"
        ? t("bundle.recipient.tooMany", { max: MAX_RECIPIENTS })
        : recipients.problem
          ? t(`bundle.recipient.${recipients.problem}`, { key: recipients.offending ?? "" })
          : "";

  return (
    <>
      <fieldset className="field fieldset">
        <legend className="field-label">{t("bundle.export.encryptFor")}</legend>
        <div className="bundle-modes">
          {(["passphrase", "recipient"] as const).map((mode) => (
            <label key={mode} className="choice">
              <input type="radio" name={`${id}-mode`} value={mode} checked={value.mode === mode} onChange={() => chooseMode(mode)} />
              <span>
                <span className="choice-title">{t(mode === "passphrase" ? "bundle.export.byPassphrase" : "bundle.export.byRecipient")}</span>
                <span className="choice-hint"> — {t(mode === "passphrase" ? "bundle.export.byPassphraseHint" : "bundle.export.byRecipientHint")}</span>
              </span>
            </label>
          ))}
        </div>
      </fieldset>
      {value.mode === "passphrase" ? (
        <div className="stack">
          <div className="field">
            <label className="field-label" htmlFor={`${id}-pass`}>
              {t("bundle.export.passphrase")}
            </label>
            <input id={`${id}-pass`} autoFocus={!modeChanged} className="input" type={show ? "text" : "password"} autoComplete="new-password" spellCheck={false} value={value.passphrase} maxLength={1024} onChange={(e) => set({ passphrase: e.target.value })} aria-describedby={`${id}-strength ${id}-tip`} aria-invalid={attempted && length < MIN_PASSPHRASE_LENGTH} />
            {value.passphrase && (
              <div className={`strength strength-${strength}`} aria-hidden="true">
                <div className="strength-fill" style={{ width: METER_WIDTH[strength] }} />
              </div>
            )}
            <p className={`field-hint strength-text strength-text-${value.passphrase ? strength : "none"}`} id={`${id}-strength`} aria-live="polite">
              {value.passphrase || attempted ? (strength === "short" ? t("bundle.strength.short", { min: MIN_PASSPHRASE_LENGTH, n: length }) : t(`bundle.strength.${strength}`)) : ""}
            </p>
            <p className="field-hint" id={`${id}-tip`}>
              {t("bundle.export.passphraseTip", { min: MIN_PASSPHRASE_LENGTH })}
            </p>
          </div>
          <div className="field">
            <label className="field-label" htmlFor={`${id}-repeat`}>
              {t("bundle.export.repeat")}
            </label>
            <input id={`${id}-repeat`} className="input" type={show ? "text" : "password"} autoComplete="new-password" spellCheck={false} value={value.repeat} maxLength={1024} onChange={(e) => set({ repeat: e.target.value })} aria-invalid={mismatch} aria-describedby={`${id}-mismatch`} />
            <p className="bundle-field-error" id={`${id}-mismatch`} aria-live="polite">
              {mismatch ? t("bundle.export.mismatch") : attempted && !value.repeat && value.passphrase ? t("bundle.export.repeatMissing") : ""}
            </p>
          </div>
          <label className="bundle-check">
            <input type="checkbox" checked={show} onChange={(e) => setShow(e.target.checked)} /> {t("bundle.export.show")}
          </label>
        </div>
      ) : (
        <div className="field">
          <label className="field-label" htmlFor={`${id}-recipient`}>
            {t("bundle.export.recipient")}
          </label>
          <textarea id={`${id}-recipient`} className="textarea mono" rows={2} spellCheck={false} autoComplete="off" placeholder="age1…" value={value.recipients} maxLength={4000} onChange={(e) => set({ recipients: e.target.value })} aria-invalid={showRecipientProblem} aria-describedby={`${id}-recipient-hint ${id}-recipient-error`} />
          <p className="field-hint" id={`${id}-recipient-hint`}>
            {t("bundle.export.recipientHint")}
          </p>
          <p className="bundle-field-error" id={`${id}-recipient-error`} aria-live="polite">
            {showRecipientProblem ? recipientProblem : ""}
          </p>
        </div>
      )}
    </>
  );
}
