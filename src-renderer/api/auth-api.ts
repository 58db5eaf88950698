/** Who is signed in: `GET /v1/me`, browser sessions (`/v1/session`). */
import type { ApiClient } from "./client.js";
import type { Principal, Session } from "./contract.js";

export const getMe = (c: ApiClient, signal?: AbortSignal): Promise<Principal> => c.json<Principal>("GET", "/v1/me", { signal });

/** Trades the sign-in token from the link's `#signin=` fragment for a session cookie. */
export const signIn = (c: ApiClient, token: string): Promise<Session> => c.json<Session>("POST", "/v1/session", { json: { token } });

export const signOut = async (c: ApiClient): Promise<void> => {
  await c.request("DELETE", "/v1/session");
};
