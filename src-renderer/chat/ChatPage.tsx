/** Chat: conversations, the thread with streamed answers, and the source panel for citations. */
import { useCallback, useState } from "react";
import type { Citation } from "../api/contract.js";
import { ASK_CORPUS_KEY } from "../corpora/CorpusDetail.js";
import { routeHref } from "../lib/route.js";
import { defaultModel, useModels } from "../models/use-models.js";
import { ChatThread } from "./ChatThread.js";
import { ConversationList } from "./ConversationList.js";
import { SourcePanel } from "./SourcePanel.js";
import { useConversation, useConversationList } from "./use-conversations.js";
import "./chat.css";

const MODEL_KEY = "pustaka.chat.model";

function takeAskCorpus(): string | null {
  const id = localStorage.getItem(ASK_CORPUS_KEY);
  localStorage.removeItem(ASK_CORPUS_KEY);
  return id;
}

export interface OpenSource {
  corpusId: string;
  citation: Citation;
}

export function ChatPage({ conversationId }: { conversationId: string | null }) {
  const list = useConversationList();
  const conversation = useConversation(list.available ? conversationId : null);
  const models = useModels();
  const [draftCorpus, setDraftCorpus] = useState<string | null>(takeAskCorpus);
  const [pickedModel, setPickedModel] = useState<string | null>(() => localStorage.getItem(MODEL_KEY));
  const [source, setSource] = useState<OpenSource | null>(null);

  const chatModels = (models.data ?? []).filter((m) => m.type === "chat");
  const model = pickedModel && chatModels.some((m) => m.id === pickedModel) ? pickedModel : (defaultModel(models.data, "chat")?.id ?? null);
  const corpusId = conversationId && conversation.data ? conversation.data.corpus_id : draftCorpus;

  const chooseModel = useCallback((id: string) => {
    setPickedModel(id);
    localStorage.setItem(MODEL_KEY, id);
  }, []);
  const chooseCorpus = useCallback(
    (id: string | null) => {
      setDraftCorpus(id);
      setSource(null);
      if (conversationId) window.location.hash = routeHref({ page: "chat", conversationId: null });
    },
    [conversationId],
  );
  const openConversation = useCallback((id: string | null) => {
    setSource(null);
    window.location.hash = routeHref({ page: "chat", conversationId: id });
  }, []);

  return (
    <div className={source ? "chat-layout with-source" : "chat-layout"}>
      <ConversationList list={list} activeId={conversationId} onOpen={openConversation} />
      <ChatThread
        key={list.available ? "server" : "local"}
        conversationId={conversationId}
        conversation={conversation}
        historyAvailable={list.available}
        corpusId={corpusId}
        onCorpusChange={chooseCorpus}
        model={model}
        onModelChange={chooseModel}
        models={models}
        onCreated={openConversation}
        onCitation={(citation) => corpusId && setSource({ corpusId, citation })}
        activeCitation={source?.citation ?? null}
      />
      {source && <SourcePanel key={`${source.corpusId}:${source.citation.chunk_id}`} source={source} onClose={() => setSource(null)} />}
    </div>
  );
}
