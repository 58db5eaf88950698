/**
 * Signs the browser in from the link's `#signin=` fragment, then asks `GET /v1/me`.
 * Without a session (401) it shows the sign-in screen; the desktop app's bridge
 * credential needs no sign-in.
 */
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { useEffect, useRef, useState, type ReactNode } from "react";
import { ApiError } from "../api/api-error.js";
import { useApi } from "../api/api-context.js";
import { getMe, signIn, signOut } from "../api/auth-api.js";
import { SplashScreen } from "../shell/SplashScreen.js";
import { AuthContext } from "./principal-context.js";
import { dropSignInFragment, signInTokenFromHash } from "./sign-in-token.js";
import { SignInScreen } from "./SignInScreen.js";

type SignInState = { state: "none" } | { state: "pending"; token: string } | { state: "failed"; error: unknown };

export function AuthGate({ children }: { children: ReactNode }) {
  const client = useApi();
  const queryClient = useQueryClient();
  const [signInState, setSignInState] = useState<SignInState>(() => {
    const token = client.credential ? null : signInTokenFromHash(window.location.hash);
    return token ? { state: "pending", token } : { state: "none" };
  });
  const started = useRef<string | null>(null);

  // A sign-in link pasted into an open tab changes only the fragment.
  useEffect(() => {
    if (client.credential) return;
    const onHash = () => {
      const token = signInTokenFromHash(window.location.hash);
      if (token) setSignInState({ state: "pending", token });
    };
    window.addEventListener("hashchange", onHash);
    return () => window.removeEventListener("hashchange", onHash);
  }, [client]);

  useEffect(() => {
    if (signInState.state !== "pending" || started.current === signInState.token) return;
    started.current = signInState.token;
    dropSignInFragment();
    signIn(client, signInState.token).then(
      (session) => {
        queryClient.setQueryData(["me"], session.principal);
        setSignInState({ state: "none" });
        void queryClient.invalidateQueries({ queryKey: ["me"] });
      },
      (error: unknown) => setSignInState({ state: "failed", error }),
    );
  }, [client, queryClient, signInState]);

  const me = useQuery({ queryKey: ["me"], queryFn: ({ signal }) => getMe(client, signal), enabled: signInState.state !== "pending", retry: false, staleTime: 60_000 });

  if (signInState.state === "pending" || me.isPending) return <SplashScreen />;
  if (me.isError) {
    const unauthenticated = me.error instanceof ApiError && me.error.status === 401;
    return (
      <SignInScreen
        reason={unauthenticated ? "signed-out" : "unreachable"}
        desktop={client.credential !== null}
        error={signInState.state === "failed" ? signInState.error : unauthenticated ? null : me.error}
        onRetry={() => void me.refetch()}
      />
    );
  }
  const doSignOut = client.credential
    ? null
    : async () => {
        await signOut(client).catch(() => undefined);
        queryClient.clear();
        await queryClient.invalidateQueries({ queryKey: ["me"] });
      };
  return <AuthContext.Provider value={{ principal: me.data, signOut: doSignOut }}>{children}</AuthContext.Provider>;
}
