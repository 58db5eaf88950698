/**
 * Imports a corpus bundle: choose the file (and its passphrase), upload it with the bytes sent
 * shown, read the verified preview and compare the signer, then import it as a new corpus or
 * discard it. Closing the dialog discards a bundle that was not imported.
 */
import { CircleCheck } from "lucide-react";
import { useI18n } from "../i18n/i18n.js";
import { formatBytes, fraction } from "../lib/format.js";
import { routeHref } from "../lib/route.js";
import { Modal } from "../ui/Modal.js";
import { ProgressBar } from "../ui/ProgressBar.js";
import { useReturnFocus } from "../ui/use-return-focus.js";
import { BundlePreview } from "./BundlePreview.js";
import { ImportBundleForm } from "./ImportBundleForm.js";
import { useBundleImport } from "./use-bundle-import.js";
import "./bundles.css";

/** React's autoFocus covers form controls only; the way on after an import is a link. */
const focusOnMount = (element: HTMLElement | null) => element?.focus();

export function ImportBundleDialog({ open, onOpenChange }: { open: boolean; onOpenChange: (open: boolean) => void }) {
  const { t, number } = useI18n();
  const flow = useBundleImport();
  const { state } = flow;
  const returnFocus = useReturnFocus(open);
  const change = (next: boolean) => {
    if (!next) flow.close();
    onOpenChange(next);
  };

  return (
    <Modal open={open} onOpenChange={change} onCloseAutoFocus={returnFocus} title={t("bundle.import.title")} wide className="bundle-dialog">
      {state.phase === "choose" && <ImportBundleForm error={state.error} withoutPassphrase={state.withoutPassphrase} lastFile={state.file} lastPassphrase={state.passphrase} onUpload={(file, passphrase) => void flow.upload(file, passphrase)} onCancel={() => change(false)} />}
      {state.phase === "uploading" && (
        <div className="stack" aria-busy="true">
          {state.sent < state.total ? (
            <>
              <p className="strong" role="status">
                {t("bundle.import.sending", { name: state.file.name })}
              </p>
              <ProgressBar value={fraction(state.sent, state.total)} label={t("bundle.import.progress")} valueText={t("bundle.import.sent", { sent: formatBytes(state.sent), total: formatBytes(state.total) })} />
              <p className="muted bundle-count">{t("bundle.import.sent", { sent: formatBytes(state.sent), total: formatBytes(state.total) })}</p>
            </>
          ) : (
            <>
              <p className="strong" role="status">
                {t("bundle.import.verifying")}
              </p>
              <ProgressBar value={null} label={t("bundle.import.verifying")} />
              <p className="muted">{t("bundle.import.verifyingHint")}</p>
            </>
          )}
          <div className="dialog-actions">
            <button type="button" className="btn" onClick={flow.stop} autoFocus>
              {t("bundle.import.stop")}
            </button>
          </div>
        </div>
      )}
      {(state.phase === "preview" || state.phase === "importing") && (
        <BundlePreview preview={state.preview} error={state.phase === "preview" ? state.error : null} busy={state.phase === "importing"} onImport={(options) => void flow.commit(options)} onDiscard={() => void flow.discard()} />
      )}
      {state.phase === "done" && (
        <div className="stack">
          <div className="notice notice-success" role="status">
            <CircleCheck aria-hidden="true" size={18} className="notice-icon" />
            <div className="notice-body">
              <p className="notice-title">{t("bundle.import.done", { name: state.corpus.name })}</p>
              <p className="notice-detail">{t("bundle.import.doneBody", { docs: number(state.corpus.document_counts.total), passages: number(state.preview.counts.passages) })}</p>
            </div>
          </div>
          {state.reembedded && <p>{t("bundle.import.reindexing", { model: state.corpus.embedding_model })}</p>}
          <div className="dialog-actions">
            <button type="button" className="btn" onClick={() => change(false)}>
              {t("common.close")}
            </button>
            <a className="btn btn-primary" href={routeHref({ page: "corpora", corpusId: state.corpus.id })} onClick={() => change(false)} ref={focusOnMount}>
              {t("bundle.import.open")}
            </a>
          </div>
        </div>
      )}
    </Modal>
  );
}
