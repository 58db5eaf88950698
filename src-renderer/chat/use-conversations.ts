/** Conversations kept by the server; `available` is false on a server without them (404). */
import { useQuery } from "@tanstack/react-query";
import { isMissingEndpoint } from "../api/api-error.js";
import { useApi } from "../api/api-context.js";
import { getConversation, listConversations } from "../api/conversations-api.js";

export function useConversationList() {
  const client = useApi();
  const query = useQuery({ queryKey: ["conversations"], queryFn: () => listConversations(client).then((page) => page.data), retry: false });
  const available = !(query.isError && isMissingEndpoint(query.error));
  return { ...query, available };
}

export function useConversation(id: string | null) {
  const client = useApi();
  return useQuery({ queryKey: ["conversation", id], queryFn: () => getConversation(client, id!), enabled: id !== null, retry: false });
}
