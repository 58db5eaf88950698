/**
 * The API contract: conversations kept by the server per workspace (encrypted at rest
 * like chunks), for the workbench's chat history. Types only.
 */
import type { Citation } from "./rag.js";

export interface Conversation {
  id: string;
  object: "conversation";
  title: string;
  /** The corpus the conversation asks, or null for plain chat. */
  corpus_id: string | null;
  message_count: number;
  created_at: number;
  updated_at: number;
}

export interface ConversationMessage {
  id: string;
  object: "conversation.message";
  role: "user" | "assistant";
  content: string;
  /** Assistant answers from a corpus: their citations. */
  citations: Citation[] | null;
  /** Assistant answers from a corpus: false when the corpus held nothing relevant. */
  grounded: boolean | null;
  model: string | null;
  /** True when the user stopped the answer before it ended. */
  stopped: boolean;
  created_at: number;
}

export interface ConversationWithMessages extends Conversation {
  messages: ConversationMessage[];
}

export interface CreateConversationRequest {
  title?: string;
  corpus_id?: string | null;
}

export interface PatchConversationRequest {
  title: string;
}

/** `POST /v1/conversations/{id}/messages`: messages to append, in order. */
export interface AppendMessagesRequest {
  messages: {
    role: "user" | "assistant";
    content: string;
    citations?: Citation[] | null;
    grounded?: boolean | null;
    model?: string | null;
    stopped?: boolean;
  }[];
}

export interface ConversationDeleted {
  id: string;
  object: "conversation.deleted";
  deleted: true;
}
