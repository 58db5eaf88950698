/** Creates a corpus: name, chunking (explained), embedding model, OCR languages, retention (explained). */
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useId, useState, type FormEvent } from "react";
import { useApi } from "../api/api-context.js";
import type { ChunkingStrategy } from "../api/contract.js";
import { createCorpus } from "../api/corpora-api.js";
import { useI18n } from "../i18n/i18n.js";
import { modelsOfType, useModels } from "../models/use-models.js";
import { routeHref } from "../lib/route.js";
import { ErrorNotice } from "../ui/ErrorNotice.js";
import { Modal } from "../ui/Modal.js";
import { initialLanguages, OcrLanguagesField, useOcrStatus } from "./OcrLanguagesField.js";

const CHUNKING: ChunkingStrategy[] = ["semantic", "fixed", "paragraph"];

export function CreateCorpusDialog({ open, onOpenChange }: { open: boolean; onOpenChange: (open: boolean) => void }) {
  const { t } = useI18n();
  const client = useApi();
  const queryClient = useQueryClient();
  const models = useModels();
  const embedding = modelsOfType(models.data, "embedding");
  const id = useId();
  const [name, setName] = useState("");
  const [chunking, setChunking] = useState<ChunkingStrategy>("semantic");
  const [model, setModel] = useState("");
  const [retention, setRetention] = useState(30);
  const [ocr, setOcr] = useState<string[] | null>(null);
  const ocrStatus = useOcrStatus();
  const chosenModel = model || embedding[0]?.id || "";
  // Languages are sent only when the server can read scans; otherwise it keeps its defaults.
  const ocrLanguages = ocrStatus.data?.available ? (ocr ?? initialLanguages(ocrStatus.data, null)) : undefined;

  const create = useMutation({
    mutationFn: () => createCorpus(client, { name: name.trim(), chunking, embedding_model: chosenModel || undefined, retention_days: retention, ocr_languages: ocrLanguages }),
    onSuccess: (corpus) => {
      void queryClient.invalidateQueries({ queryKey: ["corpora"] });
      onOpenChange(false);
      setName("");
      setOcr(null);
      window.location.hash = routeHref({ page: "corpora", corpusId: corpus.id });
    },
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    if (name.trim()) create.mutate();
  };

  return (
    <Modal open={open} onOpenChange={onOpenChange} title={t("createCorpus.title")} wide>
      <form className="stack" onSubmit={submit}>
        <div className="field">
          <label className="field-label" htmlFor={`${id}-name`}>
            {t("createCorpus.name")}
          </label>
          <input id={`${id}-name`} className="input" value={name} onChange={(e) => setName(e.target.value)} required maxLength={200} placeholder={t("createCorpus.namePlaceholder")} autoFocus />
        </div>
        <fieldset className="field fieldset">
          <legend className="field-label">{t("createCorpus.chunking")}</legend>
          {CHUNKING.map((c) => (
            <label key={c} className="choice">
              <input type="radio" name={`${id}-chunking`} value={c} checked={chunking === c} onChange={() => setChunking(c)} />
              <span>
                <span className="choice-title">{t(`chunking.${c}`)}</span>
                <span className="choice-hint"> — {t(`chunking.${c}.hint`)}</span>
              </span>
            </label>
          ))}
        </fieldset>
        <div className="field">
          <label className="field-label" htmlFor={`${id}-model`}>
            {t("createCorpus.embedding")}
          </label>
          {embedding.length > 0 ? (
            <select id={`${id}-model`} className="select" value={chosenModel} onChange={(e) => setModel(e.target.value)}>
              {embedding.map((m) => (
                <option key={m.id} value={m.id}>
                  {m.id === m.root ? m.id : `${m.id} → ${m.root}`} · {m.dimensions ?? "?"}d
                </option>
              ))}
            </select>
          ) : (
            <p className="field-hint">{models.isPending ? t("common.loading") : t("createCorpus.noEmbedding")}</p>
          )}
          <p className="field-hint">{t("createCorpus.embeddingHint")}</p>
        </div>
        <OcrLanguagesField value={ocr} onChange={setOcr} />
        <div className="field">
          <label className="field-label" htmlFor={`${id}-retention`}>
            {t("createCorpus.retention")}
          </label>
          <input id={`${id}-retention`} className="input" type="number" min={0} max={3650} value={retention} onChange={(e) => setRetention(Math.max(0, Math.min(3650, Math.round(Number(e.target.value) || 0))))} style={{ width: 120 }} aria-describedby={`${id}-retention-hint`} />
          <p className="field-hint" id={`${id}-retention-hint`}>
            {t("createCorpus.retentionHint", { days: retention })}
          </p>
        </div>
        {create.isError && <ErrorNotice error={create.error} compact />}
        <div className="dialog-actions">
          <button type="button" className="btn" onClick={() => onOpenChange(false)}>
            {t("common.cancel")}
          </button>
          <button type="submit" className="btn btn-primary" disabled={!name.trim() || create.isPending}>
            {create.isPending ? t("common.working") : t("createCorpus.submit")}
          </button>
        </div>
      </form>
    </Modal>
  );
}
