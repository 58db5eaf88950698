/**
 * Hash routes (`#/chat/conv_1`, `#/corpora/corp_1`, `#/models`, `#/keys`, `#/audit`,
 * `#/security`): they work the same whether the page comes from the server or from a
 * file in the desktop app.
 */
import { useCallback, useSyncExternalStore } from "react";

export type Route =
  | { page: "chat"; conversationId: string | null }
  | { page: "corpora"; corpusId: string | null }
  | { page: "models" }
  | { page: "keys" }
  | { page: "audit" }
  | { page: "security" };

export type Page = Route["page"];

export function parseRoute(hash: string): Route {
  const [page, id] = hash.replace(/^#\/?/, "").split("/").map((part) => decodeURIComponent(part));
  if (page === "corpora") return { page: "corpora", corpusId: id || null };
  if (page === "models") return { page: "models" };
  if (page === "keys") return { page: "keys" };
  if (page === "audit") return { page: "audit" };
  if (page === "security") return { page: "security" };
  return { page: "chat", conversationId: page === "chat" && id ? id : null };
}

export function routeHref(route: Route): string {
  if (route.page === "chat") return route.conversationId ? `#/chat/${encodeURIComponent(route.conversationId)}` : "#/chat";
  if (route.page === "corpora") return route.corpusId ? `#/corpora/${encodeURIComponent(route.corpusId)}` : "#/corpora";
  return `#/${route.page}`;
}

const subscribe = (cb: () => void) => {
  window.addEventListener("hashchange", cb);
  return () => window.removeEventListener("hashchange", cb);
};

/** The current route and a way to go elsewhere. */
export function useRoute(): [Route, (route: Route) => void] {
  const hash = useSyncExternalStore(subscribe, () => window.location.hash);
  const navigate = useCallback((route: Route) => {
    window.location.hash = routeHref(route);
  }, []);
  return [parseRoute(hash), navigate];
}
