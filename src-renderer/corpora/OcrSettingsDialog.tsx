/** A corpus's OCR languages, changed for the documents indexed from then on. */
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useState, type FormEvent } from "react";
import { useApi } from "../api/api-context.js";
import type { Corpus } from "../api/contract.js";
import { patchCorpus } from "../api/corpora-api.js";
import { useI18n } from "../i18n/i18n.js";
import { ErrorNotice } from "../ui/ErrorNotice.js";
import { Modal } from "../ui/Modal.js";
import { OcrLanguagesField, useOcrStatus } from "./OcrLanguagesField.js";

const same = (a: readonly string[], b: readonly string[]) => a.length === b.length && a.every((x) => b.includes(x));

export function OcrSettingsDialog({ corpus, open, onOpenChange }: { corpus: Corpus; open: boolean; onOpenChange: (open: boolean) => void }) {
  const { t } = useI18n();
  const client = useApi();
  const queryClient = useQueryClient();
  const status = useOcrStatus();
  const [languages, setLanguages] = useState<string[] | null>(null);
  const changed = languages !== null && !same(languages, corpus.ocr_languages);

  const save = useMutation({
    mutationFn: () => patchCorpus(client, corpus.id, { ocr_languages: languages! }),
    onSuccess: (updated) => {
      queryClient.setQueryData(["corpus", corpus.id], updated);
      void queryClient.invalidateQueries({ queryKey: ["corpora"] });
      onOpenChange(false);
    },
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    if (changed) save.mutate();
  };

  return (
    <Modal open={open} onOpenChange={onOpenChange} title={t("ocr.settingsTitle")} wide>
      <form className="stack" onSubmit={submit}>
        <OcrLanguagesField value={languages} onChange={setLanguages} current={corpus.ocr_languages} />
        {status.data?.available && <p className="field-hint">{t("ocr.appliesFromNow")}</p>}
        {save.isError && <ErrorNotice error={save.error} compact />}
        <div className="dialog-actions">
          <button type="button" className="btn" onClick={() => onOpenChange(false)}>
            {t("common.cancel")}
          </button>
          <button type="submit" className="btn btn-primary" disabled={!changed || save.isPending}>
            {save.isPending ? t("common.working") : t("ocr.save")}
          </button>
        </div>
      </form>
    </Modal>
  );
}
