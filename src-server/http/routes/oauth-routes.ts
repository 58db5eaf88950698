/**
 * OAuth 2.0 for service accounts, before authentication (the token endpoint is how a
 * client gets a credential): `POST /v1/oauth/token` (RFC 6749, form-encoded; client
 * secret by HTTP Basic or the form, or a JWT assertion per RFC 7523), the JWKS of our
 * signing keys, and the authorization-server metadata (RFC 8414). Errors here use OAuth's
 * shape (`{error, error_description}`), which OAuth client libraries expect.
 *
 * Failed client authentication (`invalid_client` with a credential presented) counts
 * against the source in the same `AuthThrottle` as bad API keys: a source that keeps
 * failing is answered 429 `slow_down` with `Retry-After`, without its credentials being
 * checked, and failures are audited coalesced (repeats within a window as one entry with
 * a `count`), so a stranger can neither guess secrets at full speed nor grow the log.
 */
import { doc } from "../openapi/route-doc.js";
import express, { Router, type Request, type Response } from "express";
import { actorOf, type AuditService } from "../../audit/audit-service.js";
import { CLIENT_ASSERTION_JWT, GRANT_CLIENT_CREDENTIALS, GRANT_JWT_BEARER, OAuthError, type ServiceAccountService } from "../../admin/service-account-service.js";
import { SCOPES } from "../../domain/scopes.js";
import { recordCoalescedSafely, recordSafely } from "../audit-trail.js";
import { AuthThrottle, credentialDigest, sourceOf } from "../auth-throttle.js";
import type { OAuthKeys } from "../../security/oauth-keys.js";

const TOKEN_PATH = "/v1/oauth/token";
const JWKS_PATH = "/.well-known/jwks.json";

/** `Authorization: Basic base64(client_id:client_secret)` with RFC 6749's form-encoding of each part. */
function basicCredentials(req: Request): { id: string; secret: string } | undefined {
  const match = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(req.get("authorization") ?? "");
  if (!match?.[1]) return undefined;
  const decoded = Buffer.from(match[1], "base64").toString("utf8");
  const colon = decoded.indexOf(":");
  if (colon < 0) return undefined;
  try {
    return { id: decodeURIComponent(decoded.slice(0, colon).replace(/\+/g, " ")), secret: decodeURIComponent(decoded.slice(colon + 1).replace(/\+/g, " ")) };
  } catch {
    return undefined;
  }
}

function oauthError(res: Response, error: OAuthError, basic: boolean): void {
  if (error.status === 401 && basic) res.setHeader("WWW-Authenticate", 'Basic realm="pustaka"');
  res.status(error.status).json({ error: error.code, error_description: error.description });
}

/**
 * The refusal of a client whose secret was right but whose account is disabled: a stale
 * client, not a guess, so it adds no backoff (as `service_account_disabled` for tokens).
 * Recognised by the description `ServiceAccountService.issueToken` gives it.
 */
const isStaleClient = (error: OAuthError) => error.code === "invalid_client" && error.clientId !== null && error.description === "this service account is disabled";

/** Client ids that can name an account; others are never looked up, so they do not key audit entries. */
const ACCOUNT_ID = /^sa_[A-Za-z0-9]{1,64}$/;

/**
 * The digest of the client secret presented (HTTP Basic or the form, with its client id),
 * by which one that already succeeded from a source passes that source's block. None for
 * assertions: each is single-use.
 */
function secretDigest(basic: { id: string; secret: string } | undefined, body: Record<string, unknown>): string | undefined {
  const id = basic?.id ?? body.client_id;
  const secret = basic?.secret ?? body.client_secret;
  return typeof id === "string" && typeof secret === "string" ? credentialDigest("oauth_client_secret", `${id}\0${secret}`) : undefined;
}

/**
 * OAuth's routes. `throttle` is the backoff for failed authentication; pass the instance
 * `authenticate` uses, so that a source gets one budget of guesses for API keys and client
 * secrets together. Default: one of its own.
 */
export function oauthRoutes(accounts: ServiceAccountService, keys: OAuthKeys, audit: AuditService, throttle: AuthThrottle = new AuthThrottle()): Router {
  const router = Router();
  const form = express.urlencoded({ extended: false, limit: "64kb", parameterLimit: 20 });
  const noStore = (res: Response) => {
    res.setHeader("Cache-Control", "no-store");
    res.setHeader("Pragma", "no-cache");
  };

  router.post(TOKEN_PATH, (req, res, next) => {
    noStore(res);
    if (!req.is("application/x-www-form-urlencoded")) {
      oauthError(res, new OAuthError("invalid_request", "the token request must be application/x-www-form-urlencoded (RFC 6749)"), false);
      return;
    }
    form(req, res, (error?: unknown) => {
      if (error) {
        oauthError(res, new OAuthError("invalid_request", "the form body could not be read"), false);
        return;
      }
      next();
    });
  });
  router.post(TOKEN_PATH, doc({ summary: "OAuth 2.0 token endpoint for service accounts (client credentials, JWT bearer)", tag: "OAuth", public: true, form: { grant_type: "client_credentials or urn:ietf:params:oauth:grant-type:jwt-bearer", client_id: "the service account id", client_secret: "its secret (client_secret_post)", client_assertion_type: "for private_key_jwt", client_assertion: "a signed JWT", scope: "space-separated scopes (optional)" } }), async (req, res) => {
    const body = (req.body ?? {}) as Record<string, unknown>;
    const field = (name: string): string | undefined => {
      const value = body[name];
      if (value === undefined) return undefined;
      if (typeof value !== "string") throw new OAuthError("invalid_request", `'${name}' was given more than once`);
      return value;
    };
    const basic = basicCredentials(req);
    const source = sourceOf(req.socket.remoteAddress);
    const remote = req.socket.remoteAddress ?? null;
    const digest = secretDigest(basic, body);
    const auditFailure = (key: string, error: string, clientId: string | null) =>
      recordCoalescedSafely(audit, res, `service_account.token\0${source}\0${error}\0${key}`, { type: "service_account.token", workspaceId: null, actor: "anonymous", outcome: "failure", requestId: res.locals.requestId, data: { error, client_id: clientId?.slice(0, 100) ?? null, remote } });
    const waitMs = throttle.retryAfterMs(source, digest);
    if (waitMs > 0) {
      // No credential is looked at while the source is blocked, so the client ids it sends cannot multiply entries.
      const seconds = Math.ceil(waitMs / 1000);
      auditFailure("", "slow_down", null);
      // RFC 6749 has no token-endpoint code for this; `slow_down` is the registered one (RFC 8628 §3.5) that means "retry later".
      res.setHeader("Retry-After", String(seconds));
      res.status(429).json({ error: "slow_down", error_description: `too many failed client authentications from this address; retry after ${seconds} s` });
      return;
    }
    try {
      if (req.get("authorization") && !basic) throw new OAuthError("invalid_client", "the Authorization header must be HTTP Basic with client_id:client_secret");
      if (basic && field("client_secret") !== undefined) throw new OAuthError("invalid_request", "send the client secret once: HTTP Basic or the form, not both");
      const origin = `${req.protocol}://${req.get("host") ?? ""}`;
      const issued = await accounts.issueToken({
        grantType: field("grant_type"),
        clientId: basic?.id ?? field("client_id"),
        clientSecret: basic?.secret ?? field("client_secret"),
        clientAssertionType: field("client_assertion_type"),
        clientAssertion: field("client_assertion"),
        assertion: field("assertion"),
        scope: field("scope"),
        audiences: [...new Set([accounts.settings.issuer(), `${accounts.settings.issuer()}${TOKEN_PATH}`, origin, `${origin}${TOKEN_PATH}`])],
      });
      if (issued.method === "client_secret" && digest !== undefined) throttle.succeeded(source, digest);
      const principal = { kind: "service_account" as const, workspaceId: issued.account.workspaceId, keyId: issued.account.id, keyName: issued.account.name, scopes: new Set(issued.account.scopes) };
      recordSafely(audit, res, { type: "service_account.token", workspaceId: issued.account.workspaceId, actor: actorOf(principal), outcome: "success", requestId: res.locals.requestId, data: { method: issued.method, scope: issued.scope, expires_in: issued.expiresIn } });
      res.json({ access_token: issued.accessToken, token_type: "Bearer", expires_in: issued.expiresIn, scope: issued.scope });
    } catch (error) {
      if (!(error instanceof OAuthError)) throw error;
      // Only client authentication that was attempted and failed is a guess (RFC 6749 §5.2 `invalid_client`, by secret or
      // client assertion); a missing credential, a disabled client, a malformed request and a refused jwt-bearer grant
      // (`invalid_grant`: a signature, not guessable, and how expired or replayed assertions are answered) are not.
      const presented = req.get("authorization") !== undefined || body.client_secret !== undefined || body.client_assertion !== undefined;
      const guess = error.code === "invalid_client" && presented && !isStaleClient(error);
      if (guess) throttle.failed(source);
      // Guesses are bounded by the throttle, so each account guessed at gets its own entry; other failures are not, so
      // the client ids they name (an assertion's unverified `iss`, say) must not key entries.
      auditFailure(guess && error.clientId !== null && ACCOUNT_ID.test(error.clientId) ? error.clientId : "", error.code, error.clientId);
      oauthError(res, error, basic !== undefined);
    }
  });

  router.get([JWKS_PATH, "/v1/oauth/jwks"], doc({ summary: "The keys access tokens are signed with (JWKS)", tag: "OAuth", public: true }), async (_req, res) => {
    // Public keys only; a client or gateway caches them for a few minutes (rotation keeps old keys published while their tokens live).
    res.setHeader("Cache-Control", "public, max-age=300");
    // Replicas: at most one read of the shared keys a second, whoever asks.
    await keys.fresh(1000);
    res.json(keys.jwks());
  });

  router.get("/.well-known/oauth-authorization-server", doc({ summary: "OAuth 2.0 authorization server metadata (RFC 8414)", tag: "OAuth", public: true }), (_req, res) => {
    const issuer = accounts.settings.issuer();
    res.json({
      issuer,
      token_endpoint: `${issuer}${TOKEN_PATH}`,
      jwks_uri: `${issuer}${JWKS_PATH}`,
      grant_types_supported: [GRANT_CLIENT_CREDENTIALS, GRANT_JWT_BEARER],
      token_endpoint_auth_methods_supported: ["client_secret_basic", "client_secret_post", "private_key_jwt"],
      token_endpoint_auth_signing_alg_values_supported: ["EdDSA", "ES256", "ES384", "RS256", "PS256"],
      client_assertion_types_supported: [CLIENT_ASSERTION_JWT],
      scopes_supported: SCOPES,
      response_types_supported: ["token"],
    });
  });
  return router;
}
