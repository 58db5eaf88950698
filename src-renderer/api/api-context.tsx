/** The one API client of the workbench, provided to every component. */
import { createContext, useContext, type ReactNode } from "react";
import { getBridge, originOf } from "./bridge.js";
import { ApiClient } from "./client.js";

const ApiContext = createContext<ApiClient | null>(null);

/** Desktop: the bridge's origin and credential; browser: this page's origin and its session cookie. */
export function clientFromEnvironment(): ApiClient {
  const bridge = getBridge();
  if (bridge) return new ApiClient({ origin: originOf(bridge.baseUrl), credential: bridge.credential });
  return new ApiClient({ origin: "", credential: null });
}

export function ApiProvider({ client, children }: { client: ApiClient; children: ReactNode }) {
  return <ApiContext.Provider value={client}>{children}</ApiContext.Provider>;
}

export function useApi(): ApiClient {
  const client = useContext(ApiContext);
  if (!client) throw new Error("useApi outside ApiProvider");
  return client;
}
