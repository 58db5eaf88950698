/** The signed-in caller, and how to sign out (browser mode only). */
import { createContext, useContext } from "react";
import type { Principal } from "../api/contract.js";

export interface Auth {
  principal: Principal;
  /** Null in the desktop app, where the main process holds the credential. */
  signOut: (() => Promise<void>) | null;
}

export const AuthContext = createContext<Auth | null>(null);

export function useAuth(): Auth {
  const auth = useContext(AuthContext);
  if (!auth) throw new Error("useAuth outside AuthGate");
  return auth;
}
