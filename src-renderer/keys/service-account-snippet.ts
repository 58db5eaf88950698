/** How a service account gets a token: the client-credentials request, ready to paste. */

/** `curl -u CLIENT_ID:SECRET -d grant_type=client_credentials {apiBase}/oauth/token`, one argument a line. */
export function tokenCurl(apiBase: string, clientId: string, secret: string): string {
  return [`curl -u ${clientId}:${secret} \\`, "  -d grant_type=client_credentials \\", `  ${apiBase.replace(/\/+$/, "")}/oauth/token`].join("\n");
}

/** The public JWK pasted in the create dialog: "" → none; otherwise a JSON object or an error. */
export function parsePublicJwk(text: string): { ok: true; value: Record<string, unknown> | undefined } | { ok: false } {
  const trimmed = text.trim();
  if (!trimmed) return { ok: true, value: undefined };
  try {
    const value: unknown = JSON.parse(trimmed);
    if (typeof value === "object" && value !== null && !Array.isArray(value)) return { ok: true, value: value as Record<string, unknown> };
  } catch {
    // not JSON: reported below
  }
  return { ok: false };
}
