/**
 * Sends a question and streams its answer: plain chat (the history as messages) or a
 * grounded query (the question to the corpus). The turn in flight is kept apart from the
 * saved conversation and joins it when the server has stored it.
 */
import { useQueryClient } from "@tanstack/react-query";
import { useCallback, useRef, useState } from "react";
import { isAbort } from "../api/api-error.js";
import { useApi } from "../api/api-context.js";
import { streamChat, streamQuery } from "../api/chat-api.js";
import type { ConversationWithMessages } from "../api/contract.js";
import { appendMessages, createConversation } from "../api/conversations-api.js";
import { chatHistory, type ChatMessage } from "./chat-message.js";

export interface SessionOptions {
  conversationId: string | null;
  /** The saved messages of the conversation (or the unsaved ones when history is unavailable). */
  saved: readonly ChatMessage[];
  historyAvailable: boolean;
  corpusId: string | null;
  model: string | null;
  /** Called when sending created a conversation, to show it. */
  onCreated: (id: string) => void;
}

interface Turn {
  conversationId: string | null;
  messages: ChatMessage[];
}

let counter = 0;
const localKey = () => `local-${Date.now()}-${++counter}`;

export function useChatSession(options: SessionOptions) {
  const client = useApi();
  const queryClient = useQueryClient();
  const [turn, setTurn] = useState<Turn | null>(null);
  const [unsaved, setUnsaved] = useState<ChatMessage[]>([]);
  const controller = useRef<AbortController | null>(null);
  const { conversationId, saved, historyAvailable, corpusId, model, onCreated } = options;

  const streaming = turn !== null && turn.messages.some((m) => m.streaming);
  const visibleTurn = turn && turn.conversationId === conversationId ? turn.messages : [];
  const messages = [...saved, ...(historyAvailable ? [] : unsaved), ...visibleTurn];

  /** Stores a finished turn with the server, then shows it as part of the conversation. */
  const keep = useCallback(
    async (id: string | null, turnMessages: ChatMessage[]) => {
    if (!historyAvailable || id === null) {
      setUnsaved((prev) => [...prev, ...turnMessages]);
      setTurn(null);
      return;
    }
    try {
      await appendMessages(client, id, {
        messages: turnMessages.map((m) => ({ role: m.role, content: m.content, citations: m.citations, grounded: m.grounded, model: m.model, stopped: m.stopped })),
      });
      queryClient.setQueryData<ConversationWithMessages>(["conversation", id], (old) =>
        old
          ? {
              ...old,
              message_count: old.message_count + turnMessages.length,
              messages: [...old.messages, ...turnMessages.map((m) => ({ id: m.key, object: "conversation.message" as const, role: m.role, content: m.content, citations: m.citations, grounded: m.grounded, model: m.model, stopped: m.stopped, created_at: Math.floor(Date.now() / 1000) }))],
            }
          : old,
      );
      setTurn(null);
      void queryClient.invalidateQueries({ queryKey: ["conversations"] });
    } catch {
      setTurn({ conversationId: id, messages: turnMessages.map((m) => ({ ...m, unsaved: true })) });
    }
  },
    [client, queryClient, historyAvailable],
  );

  const send = useCallback(
    async (question: string) => {
      const text = question.trim();
      if (!text || controller.current) return;
      const abort = new AbortController();
      controller.current = abort;
      const user: ChatMessage = { key: localKey(), role: "user", content: text, citations: null, grounded: null, model: null, stopped: false };
      let answer: ChatMessage = { key: localKey(), role: "assistant", content: "", citations: null, grounded: null, model, stopped: false, streaming: true };
      const prior = [...saved, ...(historyAvailable ? [] : unsaved)];
      let id = conversationId;
      const show = () => setTurn({ conversationId: id, messages: [user, answer] });
      show();
      try {
        if (historyAvailable && id === null) {
          const created = await createConversation(client, { title: text.slice(0, 80), corpus_id: corpusId });
          id = created.id;
          queryClient.setQueryData<ConversationWithMessages>(["conversation", id], { ...created, messages: [] });
          show();
          onCreated(id);
        }
        const onDelta = (delta: string) => {
          answer = { ...answer, content: answer.content + delta };
          show();
        };
        if (corpusId) {
          const end = await streamQuery(client, corpusId, { question: text, ...(model ? { model } : {}) }, onDelta, abort.signal);
          answer = { ...answer, citations: end.citations, grounded: end.grounded };
        } else {
          const result = await streamChat(client, { messages: chatHistory(prior, text), ...(model ? { model } : {}) }, onDelta, abort.signal);
          answer = { ...answer, model: result.model ?? model };
        }
        answer = { ...answer, streaming: false };
      } catch (error) {
        answer = isAbort(error) ? { ...answer, streaming: false, stopped: true } : { ...answer, streaming: false, error };
      } finally {
        controller.current = null;
      }
      show();
      if (answer.error) return;
      await keep(id, [user, answer]);
    },
    [client, queryClient, conversationId, saved, historyAvailable, unsaved, corpusId, model, onCreated, keep],
  );

  const stop = useCallback(() => controller.current?.abort(), []);
  const retry = useCallback(() => {
    const question = turn?.messages.find((m) => m.role === "user")?.content;
    if (!question) return;
    setTurn(null);
    void send(question);
  }, [turn, send]);
  const reset = useCallback(() => {
    controller.current?.abort();
    setTurn(null);
    setUnsaved([]);
  }, []);

  return { messages, streaming, send, stop, retry, reset };
}
