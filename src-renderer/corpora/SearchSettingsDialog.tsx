/**
 * A corpus's own search settings (`search_defaults`): the mode, and for hybrid search the
 * vector weight and keyword-trust rule, used by every search and question on the corpus
 * that does not choose its own. "Server default" clears them.
 */
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useId, useState, type FormEvent } from "react";
import { useApi } from "../api/api-context.js";
import type { Corpus, FusionOption, SearchDefaults, SearchMode } from "../api/contract.js";
import { patchCorpus } from "../api/corpora-api.js";
import { useI18n, type Translate } from "../i18n/i18n.js";
import { ErrorNotice } from "../ui/ErrorNotice.js";
import { Modal } from "../ui/Modal.js";

type Choice = "default" | SearchMode;
type Trust = NonNullable<FusionOption["keyword_trust"]>;
const CHOICES: Choice[] = ["default", "hybrid", "vector", "keyword"];
const TRUSTS: Trust[] = ["auto", "squared", "linear", "language", "fixed"];
/** The server's own hybrid weight, shown until the corpus sets one. */
const SERVER_WEIGHT = 0.5;

/** A corpus's search settings in a few words (the corpus page's facts line). */
export function searchSummary(t: Translate, d: SearchDefaults | null): string {
  if (!d) return t("search.summary.default");
  if (d.search !== "hybrid") return t(`search.mode.${d.search}`);
  const parts = [t("search.mode.hybrid")];
  if (d.fusion?.vector_weight !== undefined) parts.push(t("search.summary.weight", { w: d.fusion.vector_weight }));
  if (d.fusion?.keyword_trust) parts.push(t(`search.trust.${d.fusion.keyword_trust}`));
  return parts.join(" · ");
}

export function SearchSettingsDialog({ corpus, open, onOpenChange }: { corpus: Corpus; open: boolean; onOpenChange: (open: boolean) => void }) {
  const { t } = useI18n();
  const client = useApi();
  const queryClient = useQueryClient();
  const id = useId();
  const current = corpus.search_defaults;
  const [choice, setChoice] = useState<Choice>(current?.search ?? "default");
  const [weight, setWeight] = useState(current?.fusion?.vector_weight ?? SERVER_WEIGHT);
  const [trust, setTrust] = useState<Trust>(current?.fusion?.keyword_trust ?? "auto");

  const save = useMutation({
    mutationFn: () => {
      const settings: SearchDefaults | null = choice === "default" ? null : choice === "hybrid" ? { search: "hybrid", fusion: { vector_weight: weight, keyword_trust: trust } } : { search: choice };
      return patchCorpus(client, corpus.id, { search_defaults: settings });
    },
    onSuccess: (updated) => {
      queryClient.setQueryData(["corpus", corpus.id], updated);
      void queryClient.invalidateQueries({ queryKey: ["corpora"] });
      onOpenChange(false);
    },
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    save.mutate();
  };

  return (
    <Modal open={open} onOpenChange={onOpenChange} title={t("search.title")} wide>
      <form className="stack" onSubmit={submit}>
        <p className="field-hint">{t("search.intro")}</p>
        <fieldset className="field fieldset">
          <legend className="field-label">{t("search.mode")}</legend>
          {CHOICES.map((c) => (
            <label key={c} className="choice">
              <input type="radio" name={`${id}-mode`} value={c} checked={choice === c} onChange={() => setChoice(c)} />
              <span>
                <span className="choice-title">{t(`search.mode.${c}`)}</span>
                <span className="choice-hint"> — {t(`search.mode.${c}.hint`)}</span>
              </span>
            </label>
          ))}
        </fieldset>
        {choice === "hybrid" && (
          <>
            <div className="field">
              <label className="field-label" htmlFor={`${id}-weight`}>
                {t("search.weight")}
              </label>
              <div className="row">
                <input id={`${id}-weight`} type="range" style={{ width: 280 }} min={0} max={1} step={0.01} value={weight} onChange={(e) => setWeight(Number(e.target.value))} aria-describedby={`${id}-weight-hint`} />
                <output htmlFor={`${id}-weight`} className="mono">
                  {weight.toFixed(2)}
                </output>
              </div>
              <p className="field-hint" id={`${id}-weight-hint`}>
                {t("search.weight.hint", { w: SERVER_WEIGHT })}
              </p>
            </div>
            <div className="field">
              <label className="field-label" htmlFor={`${id}-trust`}>
                {t("search.trust")}
              </label>
              <select id={`${id}-trust`} className="select" value={trust} onChange={(e) => setTrust(e.target.value as Trust)} aria-describedby={`${id}-trust-hint`}>
                {TRUSTS.map((k) => (
                  <option key={k} value={k}>
                    {t(`search.trust.${k}`)}
                  </option>
                ))}
              </select>
              <p className="field-hint" id={`${id}-trust-hint`}>
                {t(`search.trust.${trust}.hint`)}
              </p>
            </div>
          </>
        )}
        <p className="field-hint">{t("search.tuneHint", { id: corpus.id })}</p>
        {save.isError && <ErrorNotice error={save.error} compact />}
        <div className="dialog-actions">
          <button type="button" className="btn" onClick={() => onOpenChange(false)}>
            {t("common.cancel")}
          </button>
          <button type="submit" className="btn btn-primary" disabled={save.isPending}>
            {save.isPending ? t("common.working") : t("search.save")}
          </button>
        </div>
      </form>
    </Modal>
  );
}
