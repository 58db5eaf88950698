/**
 * Service accounts and the OAuth 2.0 token service. A service account belongs to a
 * workspace, carries scopes like an API key, and proves itself with a client secret
 * (shown once) or a JWT assertion signed by its own registered key (RFC 7523). It
 * exchanges that proof at `POST /v1/oauth/token` for a short-lived EdDSA-signed access
 * token, which then goes where API keys go. Every request re-reads the account, so a
 * disabled or deleted account's tokens stop working at once, and narrowed scopes apply
 * at once too. Knows nothing of HTTP.
 */
import { ServiceError, invalidRequest, notFound } from "../errors.js";
import { newId, nowSeconds, randomBase62 } from "../ids.js";
import type { Principal, Scope } from "../domain/scopes.js";
import { SCOPES } from "../domain/scopes.js";
import { assertionAlgorithmFor, verifyClientAssertion, type OAuthKeys } from "../security/oauth-keys.js";
import { digestsEqual, hashSecret } from "../security/secrets.js";
import type { Page, PageRequest } from "../store/pagination.js";
import type { ServiceAccountRecord, ServiceAccountStore } from "../store/service-account-store.js";
import type { AdminService } from "./admin-service.js";

/** Client secrets start with this marker (API keys with `psk-`), so leaked ones are easy to scan for. */
export const CLIENT_SECRET_MARKER = "pss-";
const SECRET_PREFIX_LENGTH = CLIENT_SECRET_MARKER.length + 8;

export const GRANT_CLIENT_CREDENTIALS = "client_credentials";
export const GRANT_JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer";
export const CLIENT_ASSERTION_JWT = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";

/** RFC 6749 §5.2 error codes. */
export type OAuthErrorCode = "invalid_request" | "invalid_client" | "invalid_grant" | "unauthorized_client" | "unsupported_grant_type" | "invalid_scope";

/** A token-endpoint failure, answered in OAuth's own shape (`{error, error_description}`). */
export class OAuthError extends Error {
  override name = "OAuthError";
  constructor(
    readonly code: OAuthErrorCode,
    readonly description: string,
    /** The client the request named, when known (for the audit trail). */
    readonly clientId: string | null = null,
  ) {
    super(description);
  }

  get status(): number {
    return this.code === "invalid_client" ? 401 : 400;
  }
}

export interface OAuthSettings {
  /** The issuer (`iss`) of our tokens and the base of our endpoints; known once the server listens. */
  issuer: () => string;
  /** The `aud` of our access tokens. */
  audience: string;
  tokenTtlSeconds: number;
  /** Longest lifetime accepted for a client's assertion. */
  maxAssertionSeconds: number;
}

/** What `POST /v1/oauth/token` received, already decoded from the form and the Basic header. */
export interface TokenRequest {
  grantType: string | undefined;
  clientId: string | undefined;
  clientSecret: string | undefined;
  clientAssertionType: string | undefined;
  clientAssertion: string | undefined;
  /** The JWT-bearer grant's assertion. */
  assertion: string | undefined;
  scope: string | undefined;
  /** `aud` values an assertion may name (our issuer and the token endpoint's URLs). */
  audiences: string[];
}

export interface IssuedToken {
  accessToken: string;
  expiresIn: number;
  scope: string;
  account: ServiceAccountRecord;
  /** How the client proved itself. */
  method: "client_secret" | "private_key_jwt";
}

export interface CreateServiceAccountInput {
  name: string;
  scopes?: Scope[] | undefined;
  publicJwk?: Record<string, unknown> | undefined;
}

export interface ServiceAccountPatch {
  name?: string | undefined;
  scopes?: Scope[] | undefined;
  disabled?: boolean | undefined;
  publicJwk?: Record<string, unknown> | null | undefined;
}

const DEFAULT_SCOPES: Scope[] = ["inference", "rag.read", "rag.write"];

export class ServiceAccountService {
  constructor(
    private readonly store: ServiceAccountStore,
    private readonly admin: AdminService,
    private readonly keys: OAuthKeys,
    readonly settings: OAuthSettings,
  ) {}

  async create(principal: Principal, workspaceId: string, input: CreateServiceAccountInput): Promise<{ account: ServiceAccountRecord; secret: string | null }> {
    await this.authorize(principal, workspaceId);
    const scopes = this.grantable(principal, input.scopes ?? DEFAULT_SCOPES);
    if (input.publicJwk) await this.checkJwk(input.publicJwk);
    const secret = input.publicJwk ? null : newClientSecret();
    const account: ServiceAccountRecord = {
      id: newId("sa_"),
      workspaceId,
      name: input.name,
      scopes,
      secretPrefix: secret ? secret.slice(0, SECRET_PREFIX_LENGTH) : null,
      secretSha256: secret ? hashSecret(secret) : null,
      publicJwk: input.publicJwk ?? null,
      disabledAt: null,
      createdAt: nowSeconds(),
      lastTokenAt: null,
    };
    await this.store.insert(account);
    return { account, secret };
  }

  async list(principal: Principal, workspaceId: string, page: PageRequest): Promise<Page<ServiceAccountRecord>> {
    await this.authorize(principal, workspaceId);
    return await this.store.list(workspaceId, page);
  }

  async get(principal: Principal, workspaceId: string, id: string): Promise<ServiceAccountRecord> {
    await this.authorize(principal, workspaceId);
    const account = await this.store.get(id);
    if (!account || account.workspaceId !== workspaceId) throw notFound(`no service account '${id}' in this workspace`, "service_account_not_found");
    return account;
  }

  async update(principal: Principal, workspaceId: string, id: string, patch: ServiceAccountPatch): Promise<ServiceAccountRecord> {
    const account = await this.get(principal, workspaceId, id);
    const scopes = patch.scopes === undefined ? undefined : this.grantable(principal, patch.scopes);
    if (patch.publicJwk) await this.checkJwk(patch.publicJwk);
    if (patch.publicJwk === null && account.secretSha256 === null) {
      throw invalidRequest("removing the public key would leave the account no way to authenticate: rotate a secret first", "no_credential_left", "public_key");
    }
    const disabledAt = patch.disabled === undefined ? undefined : patch.disabled ? (account.disabledAt ?? nowSeconds()) : null;
    await this.store.update(id, { name: patch.name, scopes, disabledAt, publicJwk: patch.publicJwk });
    return (await this.store.get(id)) ?? account;
  }

  /** A new client secret (the old one stops working now), shown once. */
  async rotateSecret(principal: Principal, workspaceId: string, id: string): Promise<{ account: ServiceAccountRecord; secret: string }> {
    await this.get(principal, workspaceId, id);
    const secret = newClientSecret();
    await this.store.update(id, { secretPrefix: secret.slice(0, SECRET_PREFIX_LENGTH), secretSha256: hashSecret(secret) });
    return { account: (await this.store.get(id))!, secret };
  }

  async delete(principal: Principal, workspaceId: string, id: string): Promise<ServiceAccountRecord> {
    const account = await this.get(principal, workspaceId, id);
    await this.store.delete(id);
    return account;
  }

  /** The token endpoint: checks the grant and the client's proof, and signs a token. Throws `OAuthError`. */
  async issueToken(request: TokenRequest): Promise<IssuedToken> {
    const now = nowSeconds();
    let account: ServiceAccountRecord;
    let method: IssuedToken["method"];
    if (request.grantType === GRANT_CLIENT_CREDENTIALS) {
      if (request.clientAssertionType !== undefined || request.clientAssertion !== undefined) {
        if (request.clientAssertionType !== CLIENT_ASSERTION_JWT) throw new OAuthError("invalid_request", `client_assertion_type must be ${CLIENT_ASSERTION_JWT}`);
        if (!request.clientAssertion) throw new OAuthError("invalid_request", "client_assertion is missing");
        account = await this.byAssertion(request.clientAssertion, request.clientId, request.audiences, now);
        method = "private_key_jwt";
      } else {
        account = await this.bySecret(request.clientId, request.clientSecret);
        method = "client_secret";
      }
    } else if (request.grantType === GRANT_JWT_BEARER) {
      if (!request.assertion) throw new OAuthError("invalid_request", "the jwt-bearer grant needs an 'assertion'");
      account = await this.byAssertion(request.assertion, request.clientId, request.audiences, now, "invalid_grant");
      method = "private_key_jwt";
    } else if (request.grantType === undefined) {
      throw new OAuthError("invalid_request", "grant_type is missing");
    } else {
      throw new OAuthError("unsupported_grant_type", `grant_type must be '${GRANT_CLIENT_CREDENTIALS}' or '${GRANT_JWT_BEARER}'`);
    }
    if (account.disabledAt !== null) throw new OAuthError("invalid_client", "this service account is disabled", account.id);
    const scopes = this.requestedScopes(account, request.scope);
    const scope = scopes.join(" ");
    const accessToken = await this.keys.sign({ sub: account.id, ws: account.workspaceId, scope }, { issuer: this.settings.issuer(), audience: this.settings.audience, ttlSeconds: this.settings.tokenTtlSeconds, jti: randomBase62(24), now });
    await this.store.update(account.id, { lastTokenAt: now });
    return { accessToken, expiresIn: this.settings.tokenTtlSeconds, scope, account, method };
  }

  /** Resolves an access token to its principal, or throws 401. */
  async authenticateToken(token: string): Promise<Principal> {
    let claims: Awaited<ReturnType<OAuthKeys["verify"]>>;
    try {
      claims = await this.keys.verify(token, { issuer: this.settings.issuer(), audience: this.settings.audience });
    } catch (error) {
      const expired = (error as { code?: string }).code === "ERR_JWT_EXPIRED";
      throw new ServiceError("authentication", expired ? "the access token has expired: get a new one from /v1/oauth/token" : "invalid access token", { code: expired ? "expired_access_token" : "invalid_access_token" });
    }
    const account = await this.store.get(claims.sub);
    if (!account || account.workspaceId !== claims.ws) throw new ServiceError("authentication", "the service account of this token no longer exists", { code: "invalid_access_token" });
    if (account.disabledAt !== null) throw new ServiceError("authentication", "this service account is disabled", { code: "service_account_disabled" });
    // The account's scopes today bound what an older token may still do.
    const scopes = claims.scope.split(" ").filter((s): s is Scope => account.scopes.includes(s as Scope));
    return { kind: "service_account", workspaceId: account.workspaceId, keyId: account.id, keyName: account.name, scopes: new Set(scopes) };
  }

  private async bySecret(clientId: string | undefined, secret: string | undefined): Promise<ServiceAccountRecord> {
    if (!clientId || !secret) throw new OAuthError("invalid_client", "client authentication is missing: send client_id and client_secret (HTTP Basic or the form), or a client_assertion", clientId ?? null);
    const account = /^sa_[A-Za-z0-9]{1,64}$/.test(clientId) ? await this.store.get(clientId) : undefined;
    if (!account || account.secretSha256 === null || !secret.startsWith(CLIENT_SECRET_MARKER) || secret.length > 256 || !digestsEqual(hashSecret(secret), account.secretSha256)) {
      throw new OAuthError("invalid_client", "client authentication failed", clientId);
    }
    return account;
  }

  private async byAssertion(assertion: string, clientIdHint: string | undefined, audiences: string[], now: number, failure: OAuthErrorCode = "invalid_client"): Promise<ServiceAccountRecord> {
    // The client is the assertion's issuer; its registered key decides whether the claim holds.
    let issuer: string | undefined;
    try {
      const payload = JSON.parse(Buffer.from(assertion.split(".")[1] ?? "", "base64url").toString("utf8")) as { iss?: unknown };
      issuer = typeof payload.iss === "string" ? payload.iss : undefined;
    } catch {
      throw new OAuthError(failure, "the assertion is not a JWT");
    }
    if (!issuer || (clientIdHint !== undefined && clientIdHint !== issuer)) throw new OAuthError(failure, "the assertion's 'iss' must be the client_id", clientIdHint ?? null);
    const account = /^sa_[A-Za-z0-9]{1,64}$/.test(issuer) ? await this.store.get(issuer) : undefined;
    if (!account?.publicJwk) throw new OAuthError(failure, "no service account with a registered key has this client_id", issuer);
    let checked: { jti: string; exp: number };
    try {
      checked = await verifyClientAssertion(assertion, account.publicJwk, { clientId: account.id, audiences, maxLifetimeSeconds: this.settings.maxAssertionSeconds, now });
    } catch (error) {
      throw new OAuthError(failure, `the assertion was refused: ${(error as Error).message}`, account.id);
    }
    if (!(await this.store.useAssertion(account.id, checked.jti, checked.exp + 60, now))) throw new OAuthError(failure, "this assertion was already used (its jti was seen before)", account.id);
    return account;
  }

  private requestedScopes(account: ServiceAccountRecord, scope: string | undefined): Scope[] {
    if (scope === undefined || scope.trim() === "") return [...account.scopes];
    const asked = [...new Set(scope.trim().split(/\s+/))];
    const beyond = asked.filter((s) => !account.scopes.includes(s as Scope));
    if (beyond.length > 0) throw new OAuthError("invalid_scope", `this service account cannot have: ${beyond.join(", ")}`, account.id);
    return asked as Scope[];
  }

  private async authorize(principal: Principal, workspaceId: string): Promise<void> {
    await this.admin.getWorkspace(principal, workspaceId);
    this.admin.require(principal, "keys.manage");
  }

  /** A creator hands out only what it holds itself. */
  private grantable(principal: Principal, scopes: Scope[]): Scope[] {
    const unique = [...new Set(scopes)];
    const unknown = unique.filter((s) => !(SCOPES as readonly string[]).includes(s));
    if (unknown.length > 0) throw invalidRequest(`unknown scopes: ${unknown.join(", ")}`, "invalid_scope", "scopes");
    const excess = unique.filter((s) => !principal.scopes.has(s));
    if (excess.length > 0) throw invalidRequest(`cannot grant scopes this key does not hold: ${excess.join(", ")}`, "scope_not_grantable", "scopes");
    return unique;
  }

  private async checkJwk(jwk: Record<string, unknown>): Promise<void> {
    try {
      await assertionAlgorithmFor(jwk);
    } catch (error) {
      throw invalidRequest(`public_key: ${(error as Error).message}`, "invalid_public_key", "public_key");
    }
  }
}

function newClientSecret(): string {
  return CLIENT_SECRET_MARKER + randomBase62(43);
}
