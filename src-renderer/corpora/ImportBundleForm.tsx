/**
 * The first step of an import: the bundle file, and its passphrase when it was not made for
 * this instance's key (which is shown below, for people who want bundles made for it).
 */
import { CircleAlert, FileArchive } from "lucide-react";
import { useId, useRef, useState, type FormEvent } from "react";
import { ApiError } from "../api/api-error.js";
import { useI18n } from "../i18n/i18n.js";
import { formatBytes } from "../lib/format.js";
import { ErrorNotice } from "../ui/ErrorNotice.js";
import { BUNDLE_EXTENSION } from "./bundle-save.js";
import { RecipientKeyCard } from "./RecipientKeyCard.js";

export interface ImportBundleFormProps {
  /** The last attempt's failure, and whether it was sent without a passphrase. */
  error: unknown;
  withoutPassphrase: boolean;
  /** The file and passphrase of the last attempt, to try again (another file, the passphrase corrected). */
  lastFile: File | null;
  lastPassphrase: string;
  onUpload: (file: File, passphrase: string) => void;
  onCancel: () => void;
}

export function ImportBundleForm({ error, withoutPassphrase, lastFile, lastPassphrase, onUpload, onCancel }: ImportBundleFormProps) {
  const { t } = useI18n();
  const id = useId();
  const input = useRef<HTMLInputElement>(null);
  const passphraseInput = useRef<HTMLInputElement>(null);
  const [file, setFile] = useState<File | null>(lastFile);
  const [passphrase, setPassphrase] = useState(lastPassphrase);
  const [attempted, setAttempted] = useState(false);
  // A bundle made for a passphrase, sent without one, fails as a key mismatch: say what that most likely means.
  const needsPassphrase = withoutPassphrase && error instanceof ApiError && error.code === "bundle_key_mismatch";

  const submit = (e: FormEvent) => {
    e.preventDefault();
    setAttempted(true);
    if (file) onUpload(file, passphrase);
  };

  return (
    <form className="stack" onSubmit={submit} noValidate>
      <p className="muted">{t("bundle.import.intro")}</p>
      {error !== null &&
        (needsPassphrase ? (
          <div className="notice notice-error compact" role="alert">
            <CircleAlert aria-hidden="true" size={18} className="notice-icon" />
            <div className="notice-body">
              <p className="notice-title">{t("bundle.import.needsPassphrase")}</p>
            </div>
          </div>
        ) : (
          <ErrorNotice error={error} compact />
        ))}
      <div className="field">
        <span className="field-label" id={`${id}-file-label`}>
          {t("bundle.import.file")}
        </span>
        <div className="bundle-file">
          <button type="button" className="btn" onClick={() => input.current?.click()} aria-labelledby={`${id}-file-label ${id}-file-choose`} aria-describedby={`${id}-file-name`} autoFocus={!needsPassphrase}>
            <FileArchive aria-hidden="true" size={16} /> <span id={`${id}-file-choose`}>{t("bundle.import.choose")}</span>
          </button>
          <span className={file ? "bundle-file-name" : "bundle-file-name muted"} id={`${id}-file-name`}>
            {file ? `${file.name} · ${formatBytes(file.size)}` : t("bundle.import.noFile")}
          </span>
        </div>
        <p className="field-hint">{t("bundle.import.fileHint")}</p>
        {attempted && !file && (
          <p className="bundle-field-error" role="alert">
            {t("bundle.import.fileMissing")}
          </p>
        )}
        <input
          ref={input}
          type="file"
          accept={`${BUNDLE_EXTENSION},application/vnd.pustaka.bundle`}
          className="sr-only"
          tabIndex={-1}
          aria-hidden="true"
          data-testid="bundle-file-input"
          onChange={(e) => {
            const chosen = e.target.files?.[0] ?? null;
            e.target.value = "";
            if (chosen) setFile(chosen);
          }}
        />
      </div>
      <div className="field">
        <label className="field-label" htmlFor={`${id}-pass`}>
          {t("bundle.import.passphrase")}
        </label>
        <input
          ref={passphraseInput}
          id={`${id}-pass`}
          className="input"
          type="password"
          autoComplete="off"
          spellCheck={false}
          maxLength={1024}
          value={passphrase}
          onChange={(e) => setPassphrase(e.target.value)}
          aria-describedby={`${id}-pass-hint`}
          aria-invalid={needsPassphrase}
          // After "it needs a passphrase", the field is where the person goes next.
          autoFocus={needsPassphrase}
        />
        <p className="field-hint" id={`${id}-pass-hint`}>
          {t("bundle.import.passphraseHint")}
        </p>
      </div>
      <div className="dialog-actions">
        <button type="button" className="btn" onClick={onCancel}>
          {t("common.cancel")}
        </button>
        <button type="submit" className="btn btn-primary">
          {t("bundle.import.submit")}
        </button>
      </div>
      <RecipientKeyCard />
    </form>
  );
}
