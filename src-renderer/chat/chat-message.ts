/** A message as the chat shows it: saved, or in flight. */
import type { Citation, ConversationMessage } from "../api/contract.js";

export interface ChatMessage {
  key: string;
  role: "user" | "assistant";
  content: string;
  citations: Citation[] | null;
  grounded: boolean | null;
  model: string | null;
  stopped: boolean;
  /** True while tokens are still arriving. */
  streaming?: boolean;
  /** Why the answer failed, when it did. */
  error?: unknown;
  /** True when the server could not keep it (history unavailable or the save failed). */
  unsaved?: boolean;
}

export const fromServer = (m: ConversationMessage): ChatMessage => ({
  key: m.id,
  role: m.role,
  content: m.content,
  citations: m.citations,
  grounded: m.grounded,
  model: m.model,
  stopped: m.stopped,
});

/** The messages of a plain chat request: the history without failed answers, then the question. */
export function chatHistory(messages: readonly ChatMessage[], question: string): { role: "user" | "assistant"; content: string }[] {
  const history = messages.filter((m) => !m.error && m.content.trim() !== "").map((m) => ({ role: m.role, content: m.content }));
  return [...history, { role: "user", content: question }];
}
