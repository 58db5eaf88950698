/**
 * A verified bundle before it is imported: the signer's key id first (to compare with what the
 * sender gave), where it came from, what it holds, its embedding model and whether it is here
 * (if not, a local model to index the documents again), the new corpus's name; then Import or
 * Discard.
 */
import { ShieldCheck, TriangleAlert } from "lucide-react";
import { useId, useState, type FormEvent } from "react";
import type { BundleImport } from "../api/contract.js";
import { useI18n } from "../i18n/i18n.js";
import { formatBytes } from "../lib/format.js";
import { modelsOfType, useModels } from "../models/use-models.js";
import { ErrorNotice } from "../ui/ErrorNotice.js";
import { ProgressBar } from "../ui/ProgressBar.js";

export interface BundlePreviewProps {
  preview: BundleImport;
  error: unknown;
  busy: boolean;
  onImport: (options: { name: string; embeddingModel: string | null }) => void;
  onDiscard: () => void;
}

export function BundlePreview({ preview, error, busy, onImport, onDiscard }: BundlePreviewProps) {
  const { t, number, dateTime } = useI18n();
  const id = useId();
  const models = useModels();
  const local = modelsOfType(models.data, "embedding");
  const [name, setName] = useState(preview.source.corpus_name);
  const [confirmed, setConfirmed] = useState(false);
  const [model, setModel] = useState("");
  const missing = preview.embedding_model.local === null;
  const ready = confirmed && name.trim().length > 0 && (!missing || model !== "") && !busy;
  const { source, counts } = preview;

  const submit = (e: FormEvent) => {
    e.preventDefault();
    if (ready) onImport({ name, embeddingModel: missing ? model : null });
  };

  return (
    <form className="stack bundle-preview" onSubmit={submit} aria-busy={busy}>
      <section className="bundle-signer" aria-labelledby={`${id}-signer`}>
        <div className="bundle-signer-head">
          <h3 className="field-label" id={`${id}-signer`}>
            {t("bundle.preview.signer")}
          </h3>
          <p className="bundle-verified" role="status">
            <ShieldCheck aria-hidden="true" size={15} /> {t("bundle.preview.verified")}
          </p>
        </div>
        <code className="bundle-keyid-large" tabIndex={0} aria-describedby={`${id}-compare`}>
          {preview.signer.key_id}
        </code>
        <p id={`${id}-compare`}>{t("bundle.preview.compare")}</p>
        <label className="bundle-check strong">
          <input type="checkbox" checked={confirmed} disabled={busy} onChange={(e) => setConfirmed(e.target.checked)} autoFocus /> {t("bundle.preview.confirm")}
        </label>
      </section>
      <div className="bundle-columns">
        <section aria-labelledby={`${id}-source`}>
          <h3 className="bundle-subtitle" id={`${id}-source`}>
            {t("bundle.preview.source")}
          </h3>
          <dl className="facts">
            <dt>{t("bundle.preview.corpus")}</dt>
            <dd className="strong">{source.corpus_name}</dd>
            {/* The instance is the signer's own key id; one that differs was signed again by another key. */}
            {source.instance !== preview.signer.key_id && (
              <>
                <dt>{t("bundle.preview.instance")}</dt>
                <dd>
                  <code className="mono">{source.instance}</code> <span className="bundle-warn">{t("bundle.preview.notSigner")}</span>
                </dd>
              </>
            )}
            <dt>{t("bundle.preview.by")}</dt>
            <dd className="mono">{source.exported_by}</dd>
            <dt>{t("bundle.preview.when")}</dt>
            <dd>{dateTime(source.exported_at)}</dd>
            <dt>{t("bundle.preview.version")}</dt>
            <dd>Pustaka {source.app_version}</dd>
          </dl>
        </section>
        <section aria-labelledby={`${id}-contents`}>
          <h3 className="bundle-subtitle" id={`${id}-contents`}>
            {t("bundle.preview.contents")}
          </h3>
          <dl className="facts">
            <dt>{t("bundle.preview.documents")}</dt>
            <dd>{number(counts.documents)}</dd>
            <dt>{t("bundle.preview.passages")}</dt>
            <dd>{number(counts.passages)}</dd>
            <dt>{t("bundle.preview.originals")}</dt>
            <dd>{formatBytes(counts.original_bytes)}</dd>
            <dt>{t("bundle.preview.bundleSize")}</dt>
            <dd>{formatBytes(preview.bytes)}</dd>
            <dt>{t("bundle.preview.encryptedFor")}</dt>
            <dd>{t(preview.encrypted_for === "passphrase" ? "bundle.preview.byPassphrase" : "bundle.preview.byRecipient")}</dd>
            <dt>{t("bundle.preview.model")}</dt>
            <dd>
              <code className="mono">{preview.embedding_model.name}</code> · {t("bundle.preview.dimensions", { n: preview.embedding_model.dimensions })}
              {!missing && <span className="bundle-model-here">{t("bundle.preview.modelHere", { name: preview.embedding_model.local ?? "" })}</span>}
            </dd>
          </dl>
        </section>
      </div>
      {missing && (
        <div className="notice notice-warning compact bundle-model-missing">
          <TriangleAlert aria-hidden="true" size={18} className="notice-icon" />
          <div className="notice-body stack-tight">
            <p className="notice-title">{t("bundle.preview.modelMissing")}</p>
            <p className="notice-detail">{t("bundle.preview.modelMissingBody", { name: preview.embedding_model.name })}</p>
            {local.length > 0 ? (
              <div className="bundle-reembed">
                <label className="field-label" htmlFor={`${id}-reembed`}>
                  {t("bundle.preview.reembedWith")}
                </label>
                <select id={`${id}-reembed`} className="select" value={model} disabled={busy} onChange={(e) => setModel(e.target.value)}>
                  <option value="">{t("bundle.preview.chooseModel")}</option>
                  {local.map((m) => (
                    <option key={m.id} value={m.id}>
                      {m.id} · {m.dimensions ?? "?"}d
                    </option>
                  ))}
                </select>
              </div>
            ) : (
              <p className="notice-detail strong">{models.isPending ? t("common.loading") : t("bundle.preview.noModels")}</p>
            )}
          </div>
        </div>
      )}
      <div className="field">
        <label className="field-label" htmlFor={`${id}-name`}>
          {t("bundle.preview.name")}
        </label>
        <input id={`${id}-name`} className="input" value={name} maxLength={200} required disabled={busy} onChange={(e) => setName(e.target.value)} />
      </div>
      {error !== null && <ErrorNotice error={error} compact />}
      {busy && (
        <div className="stack-tight">
          <p className="strong" role="status">
            {t("bundle.import.importingLong")}
          </p>
          <ProgressBar value={null} label={t("bundle.import.importingLong")} />
        </div>
      )}
      <div className="dialog-actions">
        <button type="button" className="btn" onClick={onDiscard} disabled={busy}>
          {t("bundle.preview.discard")}
        </button>
        <button type="submit" className="btn btn-primary" disabled={!ready} aria-describedby={!confirmed ? `${id}-compare` : undefined}>
          {busy ? t("bundle.import.importing") : t("bundle.preview.import")}
        </button>
      </div>
    </form>
  );
}
