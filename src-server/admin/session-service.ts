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

/** Where sign-in tokens (their SHA-256) are kept until they expire. */
export interface SignInTokens {
  add(digest: string, expiresAt: number): Promise<void>;
  /** The token's expiry, or undefined when unknown. */
  expiry(digest: string): Promise<number | undefined>;
  deleteExpired(now: number): Promise<void>;
}

/** In this process only: a restart invalidates every link (the desktop and a lone server). */
export class MemorySignInTokens implements SignInTokens {
  private readonly tokens = new Map<string, number>();
  add(digest: string, expiresAt: number): Promise<void> {
    this.tokens.set(digest, expiresAt);
    return Promise.resolve();
  }
  expiry(digest: string): Promise<number | undefined> {
    return Promise.resolve(this.tokens.get(digest));
  }
  deleteExpired(now: number): Promise<void> {
    for (const [digest, expires] of this.tokens) if (expires <= now) this.tokens.delete(digest);
    return Promise.resolve();
  }
}

const unauthorized = () => new ServiceError("authentication", "your session has ended; open the sign-in link the server printed", { code: "invalid_session" });

export class SessionService {
  private readonly idleSeconds: number;
  private readonly signInTokenSeconds: number;

  /** `signInTokens`: in memory by default; replicas sharing a store pass the store's (`SqlSignInTokens`), so a link works at any of them. */
  constructor(
    private readonly sessions: SessionStore,
    options: SessionOptions = {},
    private readonly signInTokens: SignInTokens = new MemorySignInTokens(),
  ) {
    this.idleSeconds = options.idleSeconds ?? 30 * 86400;
    this.signInTokenSeconds = options.signInTokenSeconds ?? 86400;
  }

  /** A new sign-in token (in memory by default: a restart invalidates it). */
  async issueSignInToken(now = nowSeconds()): Promise<string> {
    const token = SIGN_IN_MARKER + randomBase62(43);
    await this.signInTokens.add(hashSecret(token), now + this.signInTokenSeconds);
    return token;
  }

  /** Trades a valid sign-in token for a new session. The token stays valid for other browsers until it expires. */
  async signIn(token: string, userAgent: string, now = nowSeconds()): Promise<StartedSession> {
    const expires = token.startsWith(SIGN_IN_MARKER) && token.length <= 128 ? await this.signInTokens.expiry(hashSecret(token)) : undefined;
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
    await this.sessions.insert(record);
    return { secret, principal: this.principalOf(record), expiresAt: record.expiresAt };
  }

  /** The principal of a live session, or 401 `invalid_session`. */
  async authenticate(secret: string, now = nowSeconds()): Promise<Principal> {
    if (!secret.startsWith(SESSION_MARKER) || secret.length > 128) throw unauthorized();
    const record = await this.sessions.findByDigest(hashSecret(secret));
    if (!record || record.expiresAt <= now) throw unauthorized();
    if (now - record.lastUsedAt >= TOUCH_INTERVAL_SECONDS) await this.sessions.touch(record.id, now, now + this.idleSeconds);
    return this.principalOf(record);
  }

  /** Ends the session holding `secret` (nothing happens for an unknown one). */
  async signOut(secret: string): Promise<void> {
    await this.sessions.deleteByDigest(hashSecret(secret));
  }

  /** Removes expired sessions and sign-in tokens. */
  async purgeExpired(now = nowSeconds()): Promise<void> {
    await this.signInTokens.deleteExpired(now);
    await this.sessions.deleteExpired(now);
  }

  private principalOf(record: { id: string; workspaceId: string; scopes: Principal["scopes"] extends ReadonlySet<infer S> ? S[] : never }): Principal {
    return { kind: "session", workspaceId: record.workspaceId, keyId: record.id, keyName: "workbench session", scopes: new Set(record.scopes) };
  }
}
