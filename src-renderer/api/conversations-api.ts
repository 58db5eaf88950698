/** Conversations kept by the server (chat history). */
import type { ApiClient } from "./client.js";
import type { AppendMessagesRequest, Conversation, ConversationWithMessages, CreateConversationRequest, ListPage } from "./contract.js";

const base = (id: string) => `/v1/conversations/${encodeURIComponent(id)}`;

export const listConversations = (c: ApiClient) => c.json<ListPage<Conversation>>("GET", "/v1/conversations?limit=100");
export const getConversation = (c: ApiClient, id: string) => c.json<ConversationWithMessages>("GET", base(id));
export const createConversation = (c: ApiClient, body: CreateConversationRequest) => c.json<Conversation>("POST", "/v1/conversations", { json: body });
export const renameConversation = (c: ApiClient, id: string, title: string) => c.json<Conversation>("PATCH", base(id), { json: { title } });
export const deleteConversation = (c: ApiClient, id: string) => c.json<unknown>("DELETE", base(id));
export const appendMessages = (c: ApiClient, id: string, body: AppendMessagesRequest) => c.json<unknown>("POST", `${base(id)}/messages`, { json: body });

/** The conversation as Markdown with its citations. */
export async function exportConversation(c: ApiClient, id: string): Promise<string> {
  const res = await c.request("GET", `${base(id)}/export?format=markdown`, { headers: { accept: "text/markdown" } });
  return res.text();
}
