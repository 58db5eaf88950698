/** The conversation in view: settings, messages, composer. */
import type { UseQueryResult } from "@tanstack/react-query";
import { Bot, MessagesSquare } from "lucide-react";
import { useEffect, useMemo, useRef } from "react";
import type { Citation, ConversationWithMessages, Model } from "../api/contract.js";
import { useI18n } from "../i18n/i18n.js";
import { routeHref } from "../lib/route.js";
import { EmptyState } from "../ui/EmptyState.js";
import { ErrorNotice } from "../ui/ErrorNotice.js";
import { Skeleton } from "../ui/Skeleton.js";
import { fromServer } from "./chat-message.js";
import { ChatToolbar } from "./ChatToolbar.js";
import { Composer } from "./Composer.js";
import { MessageItem } from "./MessageItem.js";
import { useChatSession } from "./use-chat-session.js";

export interface ChatThreadProps {
  conversationId: string | null;
  conversation: UseQueryResult<ConversationWithMessages>;
  historyAvailable: boolean;
  corpusId: string | null;
  onCorpusChange: (id: string | null) => void;
  model: string | null;
  onModelChange: (id: string) => void;
  models: UseQueryResult<Model[]>;
  onCreated: (id: string) => void;
  onCitation: (citation: Citation) => void;
  activeCitation: Citation | null;
}

export function ChatThread(props: ChatThreadProps) {
  const { t } = useI18n();
  const { conversationId, conversation, historyAvailable, corpusId, model, models } = props;
  const saved = useMemo(() => (conversationId && conversation.data ? conversation.data.messages.map(fromServer) : []), [conversationId, conversation.data]);
  const session = useChatSession({ conversationId, saved, historyAvailable, corpusId, model, onCreated: props.onCreated });
  const end = useRef<HTMLDivElement>(null);
  const chatModels = (models.data ?? []).filter((m) => m.type === "chat");
  const last = session.messages.at(-1);

  useEffect(() => {
    end.current?.scrollIntoView?.({ block: "end" });
  }, [session.messages.length, last?.content]);

  const noModels = models.isSuccess && chatModels.length === 0;
  const loading = conversationId !== null && historyAvailable && conversation.isPending;

  return (
    <section className="chat-thread" aria-label={conversation.data?.title ?? t("chat.newConversation")}>
      <ChatToolbar corpusId={corpusId} onCorpusChange={props.onCorpusChange} model={model} onModelChange={props.onModelChange} chatModels={chatModels} disabled={session.streaming} />
      <div className="chat-scroll">
        <div className="chat-messages">
          {!historyAvailable && (
            <p className="notice notice-info compact" role="note">
              {t("chat.historyUnavailable")}
            </p>
          )}
          {loading && <Skeleton rows={5} height={22} />}
          {conversation.isError && historyAvailable && conversationId && <ErrorNotice error={conversation.error} onRetry={() => void conversation.refetch()} />}
          {models.isError && <ErrorNotice error={models.error} onRetry={() => void models.refetch()} />}
          {noModels && (
            <EmptyState
              icon={Bot}
              title={t("chat.noModelsTitle")}
              actions={
                <a className="btn btn-primary" href={routeHref({ page: "models" })}>
                  {t("chat.goModels")}
                </a>
              }
            >
              <p>{t("chat.noModelsBody")}</p>
            </EmptyState>
          )}
          {!loading && !noModels && session.messages.length === 0 && (
            <EmptyState icon={MessagesSquare} title={corpusId ? t("chat.emptyGroundedTitle") : t("chat.emptyTitle")}>
              <p>{corpusId ? t("chat.emptyGroundedBody") : t("chat.emptyBody")}</p>
            </EmptyState>
          )}
          {session.messages.map((m) => (
            <MessageItem key={m.key} message={m} onCitation={props.onCitation} activeCitation={props.activeCitation} onRetry={session.retry} />
          ))}
          <div ref={end} />
        </div>
      </div>
      <Composer streaming={session.streaming} disabled={noModels || loading} onSend={(q) => void session.send(q)} onStop={session.stop} grounded={corpusId !== null} />
    </section>
  );
}
