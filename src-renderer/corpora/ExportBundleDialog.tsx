/**
 * Exports a corpus as a bundle: choose what it is encrypted for, then the bundle is written
 * (to the file the person picks where the browser can stream, else downloaded) with the bytes
 * counted, and the result says its size and the key id to pass on to the recipient.
 */
import { CircleCheck, Download } from "lucide-react";
import { useState, type FormEvent } from "react";
import type { Corpus } from "../api/contract.js";
import { useI18n } from "../i18n/i18n.js";
import { formatBytes } from "../lib/format.js";
import { CopyButton } from "../ui/CopyButton.js";
import { ErrorNotice } from "../ui/ErrorNotice.js";
import { Modal } from "../ui/Modal.js";
import { ProgressBar } from "../ui/ProgressBar.js";
import { useReturnFocus } from "../ui/use-return-focus.js";
import { bundleFilename } from "./bundle-save.js";
import { emptyEncryption, encryptionOf, ExportEncryptionFields, type EncryptionValue } from "./ExportEncryptionFields.js";
import { useBundleExport } from "./use-bundle-export.js";
import "./bundles.css";

const canStream = () => typeof (window as unknown as { showSaveFilePicker?: unknown }).showSaveFilePicker === "function";

export function ExportBundleDialog({ corpus, open, onOpenChange }: { corpus: Corpus; open: boolean; onOpenChange: (open: boolean) => void }) {
  const { t } = useI18n();
  const exporter = useBundleExport(corpus.id, bundleFilename(corpus.name), t("bundle.fileType"));
  const [value, setValue] = useState<EncryptionValue>(emptyEncryption);
  const [attempted, setAttempted] = useState(false);
  const { state } = exporter;
  const indexing = corpus.status === "indexing";

  const returnFocus = useReturnFocus(open);
  const change = (next: boolean) => {
    if (!next) {
      // Closing stops an export under way (nothing is left of it) and forgets the passphrase.
      exporter.reset();
      setValue(emptyEncryption);
      setAttempted(false);
    }
    onOpenChange(next);
  };
  const submit = (e: FormEvent) => {
    e.preventDefault();
    setAttempted(true);
    const encryption = encryptionOf(value);
    if (encryption && !indexing) void exporter.start(encryption);
  };

  return (
    <Modal open={open} onOpenChange={change} onCloseAutoFocus={returnFocus} title={t("bundle.export.title", { name: corpus.name })} wide>
      {state.phase === "form" && (
        <form className="stack" onSubmit={submit} noValidate>
          <p className="muted">{t("bundle.export.intro")}</p>
          {indexing && (
            <p className="notice notice-warning compact" role="status">
              {t("bundle.export.busy")}
            </p>
          )}
          <ExportEncryptionFields value={value} onChange={setValue} attempted={attempted} />
          {state.error !== null && <ErrorNotice error={state.error} compact />}
          <p className="field-hint">{canStream() ? t("bundle.export.whereStream") : t("bundle.export.whereDownload")}</p>
          <div className="dialog-actions">
            <button type="button" className="btn" onClick={() => change(false)}>
              {t("common.cancel")}
            </button>
            <button type="submit" className="btn btn-primary" disabled={indexing}>
              <Download aria-hidden="true" size={16} /> {t("bundle.export.submit")}
            </button>
          </div>
        </form>
      )}
      {state.phase === "writing" && (
        <div className="stack" aria-busy="true">
          <p className="strong" role="status">
            {t("bundle.export.writing")}
          </p>
          <ProgressBar value={null} label={t("bundle.export.progress")} valueText={t("bundle.export.written", { size: formatBytes(state.bytes) })} />
          <p className="muted bundle-count">{t("bundle.export.written", { size: formatBytes(state.bytes) })}</p>
          <div className="dialog-actions">
            <button type="button" className="btn" onClick={exporter.cancel} autoFocus>
              {t("bundle.export.stop")}
            </button>
          </div>
        </div>
      )}
      {state.phase === "done" && (
        <div className="stack">
          <div className="notice notice-success" role="status">
            <CircleCheck aria-hidden="true" size={18} className="notice-icon" />
            <div className="notice-body">
              <p className="notice-title">{t("bundle.export.done")}</p>
              <p className="notice-detail">{t("bundle.export.savedAs", { name: state.saved.name, size: formatBytes(state.saved.bytes) })}</p>
            </div>
          </div>
          {state.signer && (
            <div className="bundle-signer">
              <p className="field-label">{t("bundle.export.signedBy")}</p>
              <div className="bundle-keybox">
                <code className="bundle-keyvalue bundle-keyid">{state.signer}</code>
                <CopyButton text={state.signer} label={t("bundle.export.copyKeyId")} className="btn" />
              </div>
              <p>{t("bundle.export.tellKeyId")}</p>
            </div>
          )}
          <p className="muted">{value.mode === "passphrase" ? t("bundle.export.tellPassphrase") : t("bundle.export.forRecipient")}</p>
          <div className="dialog-actions">
            <button type="button" className="btn btn-primary" onClick={() => change(false)} autoFocus>
              {t("bundle.done")}
            </button>
          </div>
        </div>
      )}
    </Modal>
  );
}
