/** The sign-in link's fragment: `#signin=psi-...` (browser mode). */

/** The token in a location hash, or null. */
export function signInTokenFromHash(hash: string): string | null {
  const params = new URLSearchParams(hash.replace(/^#/, ""));
  const token = params.get("signin");
  return token && token.length > 0 ? token : null;
}

/** Drops the fragment from the address bar (and history) so the token is not kept or shared. */
export function dropSignInFragment(): void {
  window.history.replaceState(null, "", window.location.pathname + window.location.search + "#/chat");
}
