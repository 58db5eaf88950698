/** Which corpus to ask (or none: plain chat) and which model answers. */
import { useQuery } from "@tanstack/react-query";
import { useId } from "react";
import { useApi } from "../api/api-context.js";
import type { Model } from "../api/contract.js";
import { listCorpora } from "../api/corpora-api.js";
import { useI18n } from "../i18n/i18n.js";

export interface ChatToolbarProps {
  corpusId: string | null;
  onCorpusChange: (id: string | null) => void;
  model: string | null;
  onModelChange: (id: string) => void;
  chatModels: Model[];
  disabled: boolean;
}

export function ChatToolbar({ corpusId, onCorpusChange, model, onModelChange, chatModels, disabled }: ChatToolbarProps) {
  const { t } = useI18n();
  const client = useApi();
  const id = useId();
  const corpora = useQuery({ queryKey: ["corpora"], queryFn: () => listCorpora(client).then((page) => page.data) });
  const selected = corpora.data?.find((c) => c.id === corpusId);
  return (
    <div className="chat-toolbar" role="group" aria-label={t("chat.settings")}>
      <label className="toolbar-field" htmlFor={`${id}-corpus`}>
        <span className="toolbar-label">{t("chat.corpus")}</span>
        <select id={`${id}-corpus`} className="select" value={corpusId ?? ""} disabled={disabled} onChange={(e) => onCorpusChange(e.target.value || null)}>
          <option value="">{t("chat.noCorpus")}</option>
          {corpusId && !selected && <option value={corpusId}>{corpora.isPending ? t("common.loading") : corpusId}</option>}
          {corpora.data?.map((c) => (
            <option key={c.id} value={c.id}>
              {c.name}
              {c.status !== "ready" ? ` (${t(`corpus.status.${c.status}`)})` : ""}
            </option>
          ))}
        </select>
      </label>
      <label className="toolbar-field" htmlFor={`${id}-model`}>
        <span className="toolbar-label">{t("chat.model")}</span>
        <select id={`${id}-model`} className="select" value={model ?? ""} disabled={disabled || chatModels.length === 0} onChange={(e) => onModelChange(e.target.value)}>
          {chatModels.length === 0 && <option value="">{t("chat.noModels")}</option>}
          {chatModels.map((m) => (
            <option key={m.id} value={m.id}>
              {m.id === m.root ? m.id : `${m.id} → ${m.root}`}
            </option>
          ))}
        </select>
      </label>
      <p className="toolbar-mode" aria-live="polite">
        {corpusId ? t("chat.modeGrounded", { name: selected?.name ?? corpusId }) : t("chat.modePlain")}
      </p>
    </div>
  );
}
