/**
 * The keys that sign OAuth access tokens (EdDSA, Ed25519), with rotation: the newest key
 * signs; older keys stay published in the JWKS (and keep verifying) until every token they
 * signed has expired, then they are dropped. Kept in one 0600 file beside the other keys.
 * Also: checking a client's JWT assertion against its registered public key (RFC 7523).
 */
import { chmodSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import path from "node:path";
import { SignJWT, calculateJwkThumbprint, decodeProtectedHeader, exportJWK, exportPKCS8, generateKeyPair, importJWK, importPKCS8, jwtVerify, type CryptoKey, type JWK, type JWTPayload } from "jose";

interface StoredKey {
  kid: string;
  /** PKCS#8 PEM. */
  privateKey: string;
  publicJwk: JWK;
  createdAt: number;
  /** Unix seconds after which the key no longer verifies (set when a newer key replaces it). */
  retiresAt: number | null;
}

interface LoadedKey extends StoredKey {
  signing: CryptoKey;
  verifying: CryptoKey;
}

export interface AccessTokenClaims {
  sub: string;
  /** The workspace. */
  ws: string;
  scope: string;
}

/** Algorithms a client's assertion may use (its registered key decides which applies). */
export const ASSERTION_ALGORITHMS = ["EdDSA", "ES256", "ES384", "RS256", "PS256"];

export class OAuthKeys {
  private constructor(
    private readonly file: string,
    private keys: LoadedKey[],
  ) {}

  /** Opens the key file, creating it with one key when absent. */
  static async open(file: string, now = Math.floor(Date.now() / 1000)): Promise<OAuthKeys> {
    let stored: StoredKey[] = [];
    try {
      stored = (JSON.parse(readFileSync(file, "utf8")) as { keys: StoredKey[] }).keys;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw new Error(`cannot read the OAuth signing keys ${file}: ${(error as Error).message}`);
    }
    const keys = await Promise.all(stored.map(load));
    const instance = new OAuthKeys(file, keys);
    if (instance.active(now) === undefined) await instance.rotate(0, now);
    return instance;
  }

  /** The signing key: the newest that has not retired. */
  private active(now: number): LoadedKey | undefined {
    return this.live(now)[0];
  }

  /** Key ids currently published (newest first). */
  kids(now = Math.floor(Date.now() / 1000)): string[] {
    return this.live(now).map((k) => k.kid);
  }

  /** Newest first; keys made in the same second are ordered by when they were added (a rotation right after the first start). */
  private live(now: number): LoadedKey[] {
    return this.keys
      .filter((k) => k.retiresAt === null || k.retiresAt > now)
      .reverse()
      .sort((a, b) => b.createdAt - a.createdAt);
  }

  /** The JSON Web Key Set of the keys that may have signed a live token. */
  jwks(now = Math.floor(Date.now() / 1000)): { keys: JWK[] } {
    return { keys: this.live(now).map((k) => ({ ...k.publicJwk, kid: k.kid, use: "sig", alg: "EdDSA" })) };
  }

  /**
   * Makes a new signing key; the previous ones keep verifying for `graceSeconds` (the
   * longest a token they signed can still live), then drop out of the JWKS.
   */
  async rotate(graceSeconds: number, now = Math.floor(Date.now() / 1000)): Promise<string> {
    const { privateKey, publicKey } = await generateKeyPair("EdDSA", { crv: "Ed25519", extractable: true });
    const publicJwk = await exportJWK(publicKey);
    const kid = await calculateJwkThumbprint(publicJwk);
    for (const k of this.keys) if (k.retiresAt === null || k.retiresAt > now + graceSeconds) k.retiresAt = now + graceSeconds;
    const fresh = await load({ kid, privateKey: await exportPKCS8(privateKey), publicJwk, createdAt: now, retiresAt: null });
    // Keys long past retirement are forgotten.
    this.keys = [...this.keys.filter((k) => k.retiresAt === null || k.retiresAt > now - 86_400), fresh];
    this.save();
    return kid;
  }

  private save(): void {
    mkdirSync(path.dirname(this.file), { recursive: true, mode: 0o700 });
    const tmp = `${this.file}.${process.pid}.tmp`;
    const stored: StoredKey[] = this.keys.map(({ kid, privateKey, publicJwk, createdAt, retiresAt }) => ({ kid, privateKey, publicJwk, createdAt, retiresAt }));
    writeFileSync(tmp, JSON.stringify({ keys: stored }), { mode: 0o600 });
    renameSync(tmp, this.file);
    chmodSync(this.file, 0o600);
  }

  async sign(claims: AccessTokenClaims, options: { issuer: string; audience: string; ttlSeconds: number; jti: string; now?: number }): Promise<string> {
    const now = options.now ?? Math.floor(Date.now() / 1000);
    const key = this.active(now);
    if (!key) throw new Error("no OAuth signing key");
    return new SignJWT({ ...claims })
      .setProtectedHeader({ alg: "EdDSA", kid: key.kid, typ: "at+jwt" })
      .setIssuer(options.issuer)
      .setAudience(options.audience)
      .setIssuedAt(now)
      .setExpirationTime(now + options.ttlSeconds)
      .setJti(options.jti)
      .sign(key.signing);
  }

  /** Verifies an access token's signature (by `kid`), issuer, audience and lifetime; throws otherwise. */
  async verify(token: string, options: { issuer: string; audience: string; now?: number }): Promise<JWTPayload & AccessTokenClaims> {
    const now = options.now ?? Math.floor(Date.now() / 1000);
    const { kid } = decodeProtectedHeader(token);
    const key = this.live(now).find((k) => k.kid === kid);
    if (!key) throw new Error("the token was signed by an unknown or retired key");
    const { payload } = await jwtVerify(token, key.verifying, { issuer: options.issuer, audience: options.audience, algorithms: ["EdDSA"], typ: "at+jwt", currentDate: new Date(now * 1000) });
    if (typeof payload.sub !== "string" || typeof payload.ws !== "string" || typeof payload.scope !== "string") throw new Error("the token lacks its claims");
    return payload as JWTPayload & AccessTokenClaims;
  }
}

async function load(stored: StoredKey): Promise<LoadedKey> {
  return { ...stored, signing: await importPKCS8(stored.privateKey, "EdDSA"), verifying: (await importJWK({ ...stored.publicJwk, alg: "EdDSA" }, "EdDSA")) as CryptoKey };
}

/** A registered client key, checked once at registration: public, of a type we accept. Returns the algorithm it signs with. */
export async function assertionAlgorithmFor(jwk: Record<string, unknown>): Promise<string> {
  if ("d" in jwk || "p" in jwk || "k" in jwk) throw new Error("the key must be a public key (it holds private or symmetric material)");
  const kty = jwk.kty;
  const alg =
    kty === "OKP" && jwk.crv === "Ed25519"
      ? "EdDSA"
      : kty === "EC" && jwk.crv === "P-256"
        ? "ES256"
        : kty === "EC" && jwk.crv === "P-384"
          ? "ES384"
          : kty === "RSA"
            ? typeof jwk.alg === "string" && jwk.alg === "PS256"
              ? "PS256"
              : "RS256"
            : null;
  if (!alg) throw new Error("the key must be an Ed25519 (OKP), P-256 or P-384 (EC) or RSA public JWK");
  const key = await importJWK(jwk as JWK, alg);
  if (kty === "RSA" && typeof jwk.n === "string" && Buffer.from(jwk.n, "base64url").length < 256) throw new Error("an RSA key must have at least 2048 bits");
  if (!(key instanceof Object)) throw new Error("the key cannot be imported");
  return alg;
}

/**
 * Verifies a client's JWT assertion (RFC 7523 §3): signed by its registered key, `iss` and
 * `sub` the client id, `aud` one of ours, not expired, at most `maxLifetimeSeconds` long,
 * with a `jti`. Returns the `jti` and expiry for replay protection.
 */
export async function verifyClientAssertion(
  assertion: string,
  jwk: Record<string, unknown>,
  options: { clientId: string; audiences: string[]; maxLifetimeSeconds: number; now?: number },
): Promise<{ jti: string; exp: number }> {
  const alg = await assertionAlgorithmFor(jwk);
  const key = await importJWK(jwk as JWK, alg);
  const now = options.now ?? Math.floor(Date.now() / 1000);
  const { payload } = await jwtVerify(assertion, key, { issuer: options.clientId, subject: options.clientId, audience: options.audiences, algorithms: [alg], currentDate: new Date(now * 1000), clockTolerance: 30 });
  if (typeof payload.exp !== "number") throw new Error("the assertion has no 'exp'");
  if (typeof payload.jti !== "string" || payload.jti.length === 0 || payload.jti.length > 256) throw new Error("the assertion needs a 'jti' (1–256 characters)");
  const issuedAt = typeof payload.iat === "number" ? payload.iat : now;
  if (payload.exp - Math.min(issuedAt, now) > options.maxLifetimeSeconds) throw new Error(`the assertion may live at most ${options.maxLifetimeSeconds} seconds`);
  return { jti: payload.jti, exp: payload.exp };
}
