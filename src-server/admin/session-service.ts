/**
 * Browser sessions for the workbench served at `/` (browser mode). Whoever started the
 * server gets a sign-in link whose token travels in the URL fragment (never sent to the
 * server, so never in its logs); the page trades it once per browser for a session kept
 * in an HttpOnly cookie. A session acts in the default workspace with the scopes of its
 * owner, the local operator. Knows nothing of HTTP or cookies.
 */
import { ServiceError } from "../errors.js";
import { newId, nowSeconds, randomBase62 } from "../ids.js";
import { ADMIN_SCOPES, type Principal } from "../domain/scopes.js";
import { hashSecret } from "../security/secrets.js";
import type { SessionStore } from "../store/session-store.js";
import { DEFAULT_WORKSPACE_ID } from "./admin-service.js";

/** Session secrets carry this marker (cookies), sign-in tokens the other. */
const SESSION_MARKER = "pss-";
const SIGN_IN_MARKER = "psi-";
const TOUCH_INTERVAL_SECONDS = 60;

export interface SessionOptions {
  /** Seconds a session lives without use (sliding). Default 30 days. */
  idleSeconds?: number;
  /** Seconds a sign-in token stays valid. Default 24 hours. */
  signInTokenSeconds?: number;
}

export interface StartedSession {
  /** The cookie value: shown to the browser once, stored only as a hash. */
  secret: string;
  principal: Principal;
  expiresAt: number;
}

const unauthorized = () => new ServiceError("authentication", "your session has ended; open the sign-in link the server printed", { code: "invalid_session" });

export class SessionService {
  private readonly signInTokens = new Map<string, number>();
  private readonly idleSeconds: number;
  private readonly signInTokenSeconds: number;

  constructor(
    private readonly sessions: SessionStore,
    options: SessionOptions = {},
  ) {
    this.idleSeconds = options.idleSeconds ?? 30 * 86400;
    this.signInTokenSeconds = options.signInTokenSeconds ?? 86400;
  }

  /** A new sign-in token (kept in memory only: a restart invalidates it). */
  issueSignInToken(now = nowSeconds()): string {
    const token = SIGN_IN_MARKER + randomBase62(43);
    this.signInTokens.set(hashSecret(token), now + this.signInTokenSeconds);
    return token;
  }

  /** Trades a valid sign-in token for a new session. The token stays valid for other browsers until it expires. */
  signIn(token: string, userAgent: string, now = nowSeconds()): StartedSession {
    const expires = token.startsWith(SIGN_IN_MARKER) ? this.signInTokens.get(hashSecret(token)) : undefined;
    if (expires === undefined || expires <= now) {
      throw new ServiceError("authentication", "this sign-in link is not valid (it expires when the server restarts); use the link the server printed last", { code: "invalid_sign_in_token" });
    }
    const secret = SESSION_MARKER + randomBase62(43);
    const record = {
      id: newId("ses_"),
      workspaceId: DEFAULT_WORKSPACE_ID,
      secretSha256: hashSecret(secret),
      scopes: [...ADMIN_SCOPES],
      userAgent: userAgent.slice(0, 256),
      createdAt: now,
      expiresAt: now + this.idleSeconds,
      lastUsedAt: now,
    };
    this.sessions.insert(record);
    return { secret, principal: this.principalOf(record), expiresAt: record.expiresAt };
  }

  /** The principal of a live session, or 401 `invalid_session`. */
  authenticate(secret: string, now = nowSeconds()): Principal {
    if (!secret.startsWith(SESSION_MARKER) || secret.length > 128) throw unauthorized();
    const record = this.sessions.findByDigest(hashSecret(secret));
    if (!record || record.expiresAt <= now) throw unauthorized();
    if (now - record.lastUsedAt >= TOUCH_INTERVAL_SECONDS) this.sessions.touch(record.id, now, now + this.idleSeconds);
    return this.principalOf(record);
  }

  /** Ends the session holding `secret` (nothing happens for an unknown one). */
  signOut(secret: string): void {
    const record = this.sessions.findByDigest(hashSecret(secret));
    if (record) this.sessions.delete(record.id);
  }

  /** Removes expired sessions and sign-in tokens. */
  purgeExpired(now = nowSeconds()): void {
    this.sessions.deleteExpired(now);
    for (const [digest, expires] of this.signInTokens) if (expires <= now) this.signInTokens.delete(digest);
  }

  private principalOf(record: { id: string; workspaceId: string; scopes: Principal["scopes"] extends ReadonlySet<infer S> ? S[] : never }): Principal {
    return { kind: "session", workspaceId: record.workspaceId, keyId: record.id, keyName: "workbench session", scopes: new Set(record.scopes) };
  }
}
