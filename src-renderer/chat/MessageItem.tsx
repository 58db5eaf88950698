/** One message: the question, or the answer with its sources; ungrounded answers look different. */
import { CircleStop, FileText, SearchX, TriangleAlert } from "lucide-react";
import { useCallback, useMemo } from "react";
import type { Citation } from "../api/contract.js";
import { useI18n } from "../i18n/i18n.js";
import { ErrorNotice } from "../ui/ErrorNotice.js";
import type { ChatMessage } from "./chat-message.js";
import { Markdown } from "./Markdown.js";

export interface MessageItemProps {
  message: ChatMessage;
  onCitation: (citation: Citation) => void;
  activeCitation: Citation | null;
  onRetry: () => void;
}

export function MessageItem({ message, onCitation, activeCitation, onRetry }: MessageItemProps) {
  const { t } = useI18n();
  const citations = useMemo(() => message.citations ?? [], [message.citations]);
  const byIndex = useCallback((index: number) => citations.find((c) => c.index === index), [citations]);
  const open = useCallback(
    (index: number) => {
      const c = byIndex(index);
      if (c) onCitation(c);
    },
    [byIndex, onCitation],
  );
  const label = useCallback((index: number) => t("chat.openSource", { n: index, name: byIndex(index)?.filename ?? "" }), [t, byIndex]);

  if (message.role === "user") {
    return (
      <article className="msg msg-user" aria-label={t("chat.you")}>
        <p className="msg-user-text">{message.content}</p>
      </article>
    );
  }
  const ungrounded = message.grounded === false;
  const cited = citations.filter((c) => c.cited);
  const shown = cited.length > 0 ? cited : citations;
  return (
    <article className={ungrounded ? "msg msg-assistant ungrounded" : "msg msg-assistant"} aria-label={t("chat.assistant")} aria-live="polite" aria-busy={message.streaming === true}>
      {ungrounded && (
        <div className="ungrounded-head">
          <SearchX aria-hidden="true" size={16} />
          <span>{t("chat.notInCorpus")}</span>
        </div>
      )}
      {message.content ? (
        <Markdown text={message.content} citationIndexes={message.streaming ? [] : citations.map((c) => c.index)} onCitation={open} citationLabel={label} />
      ) : (
        message.streaming && (
          <p className="thinking" role="status">
            <span className="dots" aria-hidden="true" /> {t("chat.thinking")}
          </p>
        )
      )}
      {message.streaming && message.content && <span className="caret" aria-hidden="true" />}
      {ungrounded && <p className="ungrounded-note">{t("chat.notInCorpusNote")}</p>}
      {!ungrounded && shown.length > 0 && !message.streaming && (
        <div className="sources">
          <h3 className="sources-title">{t("chat.sources")}</h3>
          <ul className="sources-list">
            {shown.map((c) => (
              <li key={c.chunk_id}>
                <button type="button" className={activeCitation?.chunk_id === c.chunk_id ? "source-chip active" : "source-chip"} onClick={() => onCitation(c)} aria-label={label(c.index)}>
                  <span className="source-n">{c.index}</span>
                  <FileText aria-hidden="true" size={13} />
                  <span className="source-name">{c.filename}</span>
                  {c.page_start !== null && <span className="source-page">{c.page_end !== null && c.page_end !== c.page_start ? t("chat.pages", { from: c.page_start, to: c.page_end }) : t("chat.page", { n: c.page_start })}</span>}
                </button>
              </li>
            ))}
          </ul>
        </div>
      )}
      {message.stopped && (
        <p className="msg-flag">
          <CircleStop aria-hidden="true" size={13} /> {t("chat.stopped")}
        </p>
      )}
      {message.unsaved && (
        <p className="msg-flag warn">
          <TriangleAlert aria-hidden="true" size={13} /> {t("chat.unsaved")}
        </p>
      )}
      {message.error !== undefined && <ErrorNotice error={message.error} onRetry={onRetry} compact />}
      {message.model && !message.streaming && <p className="msg-meta">{message.model}</p>}
    </article>
  );
}
