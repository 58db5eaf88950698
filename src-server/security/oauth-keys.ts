/**
 * The keys that sign OAuth access tokens (EdDSA, Ed25519), with rotation: the newest key
 * signs; older keys stay published in the JWKS (and keep verifying) until every token they
 * signed has expired, then they are dropped. Kept in a vault: one 0600 file beside the other
 * keys (`FileKeyVault`, the desktop), or the shared store with private keys sealed under the
 * key provider (`SqlKeyVault`, replicas on Postgres), where every replica signs and verifies
 * with the same keys and a rotation on one reaches the others (a token with a key id not yet
 * seen reloads the vault; so does signing, once `refreshMs` has passed).
 * Also: checking a client's JWT assertion against its registered public key (RFC 7523).
 */
import { chmodSync, mkdirSync, renameSync, writeFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { SignJWT, calculateJwkThumbprint, decodeProtectedHeader, exportJWK, exportPKCS8, generateKeyPair, importJWK, importPKCS8, jwtVerify, type CryptoKey, type JWK, type JWTPayload } from "jose";

export interface StoredKey {
  kid: string;
  /** PKCS#8 PEM. */
  privateKey: string;
  publicJwk: JWK;
  createdAt: number;
  /** Unix seconds after which the key no longer verifies (set when a newer key replaces it). */
  retiresAt: number | null;
}

/** Where signing keys are kept. Changes are additive, so replicas rotating at once lose nothing. */
export interface KeyVault {
  load(): Promise<StoredKey[]>;
  /** Adds `fresh`, retires the listed keys at the given times and forgets the listed kids. */
  update(change: { fresh: StoredKey; retire: { kid: string; retiresAt: number }[]; forget: string[] }): Promise<void>;
}

/** The vault of one data folder: a 0600 JSON file. */
export class FileKeyVault implements KeyVault {
  constructor(private readonly file: string) {}

  async load(): Promise<StoredKey[]> {
    try {
      return (JSON.parse(await readFile(this.file, "utf8")) as { keys: StoredKey[] }).keys;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
      throw new Error(`cannot read the OAuth signing keys ${this.file}: ${(error as Error).message}`, { cause: error });
    }
  }

  async update(change: { fresh: StoredKey; retire: { kid: string; retiresAt: number }[]; forget: string[] }): Promise<void> {
    const retire = new Map(change.retire.map((r) => [r.kid, r.retiresAt]));
    const keys = (await this.load()).filter((k) => !change.forget.includes(k.kid)).map((k) => ({ ...k, retiresAt: retire.get(k.kid) ?? k.retiresAt }));
    keys.push(change.fresh);
    mkdirSync(path.dirname(this.file), { recursive: true, mode: 0o700 });
    const tmp = `${this.file}.${process.pid}.tmp`;
    writeFileSync(tmp, JSON.stringify({ keys }), { mode: 0o600 });
    renameSync(tmp, this.file);
    chmodSync(this.file, 0o600);
  }
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
  private loadedAt = 0;
  private reloading: Promise<void> | null = null;

  private constructor(
    private readonly vault: KeyVault,
    private keys: LoadedKey[],
    private readonly refreshMs: number,
  ) {
    this.loadedAt = Date.now();
  }

  /**
   * Opens the vault (a key file's path: `FileKeyVault`), creating one key when none is
   * live. `refreshMs`: how stale the keys may get before signing reloads them (a vault
   * shared by replicas; 0 = never).
   */
  static async open(vault: KeyVault | string, now = Math.floor(Date.now() / 1000), options: { refreshMs?: number; onRotated?: () => void } = {}): Promise<OAuthKeys> {
    const kept = typeof vault === "string" ? new FileKeyVault(vault) : vault;
    const instance = new OAuthKeys(kept, await Promise.all((await kept.load()).map(load)), options.refreshMs ?? 0);
    instance.onRotated = options.onRotated;
    if (instance.active(now) === undefined) await instance.rotate(0, now);
    return instance;
  }

  private readonly misses = new Map<string, number>();
  /** Told after each rotation (replicas announce it, so the others reload at once). */
  private onRotated: (() => void) | undefined;

  private mayLookFor(kid: string): boolean {
    const now = Date.now();
    if (now - this.loadedAt < 250 || (this.misses.get(kid) ?? 0) > now - 5_000) return false;
    if (this.misses.size > 1000) this.misses.clear();
    this.misses.set(kid, now);
    return true;
  }

  /**
   * With a shared vault (`refreshMs` > 0): reads it again when the keys in memory are older
   * than `maxAgeMs`, so what is published and reported follows another replica's rotation.
   */
  async fresh(maxAgeMs: number): Promise<void> {
    if (this.refreshMs > 0 && Date.now() - this.loadedAt >= maxAgeMs) await this.reload();
  }

  /** Reads the vault again (another replica may have rotated); concurrent callers share one read. */
  async reload(): Promise<void> {
    this.reloading ??= (async () => {
      try {
        this.keys = await Promise.all((await this.vault.load()).map(load));
        this.loadedAt = Date.now();
      } finally {
        this.reloading = null;
      }
    })();
    return this.reloading;
  }

  /** The signing key: the newest that has not retired. */
  private active(now: number): LoadedKey | undefined {
    return this.live(now)[0];
  }

  /** Key ids currently published (newest first). */
  kids(now = Math.floor(Date.now() / 1000)): string[] {
    return this.live(now).map((k) => k.kid);
  }

  /**
   * Newest first. Keys made in the same second (a rotation right after the first start) are
   * ordered by retirement: the one a rotation did not retire is the newer (vaults need not
   * keep insertion order).
   */
  private live(now: number): LoadedKey[] {
    const retirement = (k: LoadedKey) => k.retiresAt ?? Number.POSITIVE_INFINITY;
    return this.keys.filter((k) => k.retiresAt === null || k.retiresAt > now).sort((a, b) => b.createdAt - a.createdAt || retirement(b) - retirement(a));
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
    const stored: StoredKey = { kid, privateKey: await exportPKCS8(privateKey), publicJwk, createdAt: now, retiresAt: null };
    // Keys long past retirement are forgotten.
    const forget = this.keys.filter((k) => k.retiresAt !== null && k.retiresAt <= now - 86_400).map((k) => k.kid);
    await this.vault.update({ fresh: stored, retire: this.keys.filter((k) => k.retiresAt === now + graceSeconds).map((k) => ({ kid: k.kid, retiresAt: now + graceSeconds })), forget });
    this.keys = [...this.keys.filter((k) => !forget.includes(k.kid)), await load(stored)];
    this.onRotated?.();
    return kid;
  }

  async sign(claims: AccessTokenClaims, options: { issuer: string; audience: string; ttlSeconds: number; jti: string; now?: number }): Promise<string> {
    const now = options.now ?? Math.floor(Date.now() / 1000);
    if (this.refreshMs > 0 && Date.now() - this.loadedAt > this.refreshMs) await this.reload();
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
    let key = this.live(now).find((k) => k.kid === kid);
    // A key id never seen may be another replica's rotation: look once more (each unknown id
    // at most every 5 s, and the vault at most every 250 ms: forged ids cannot flood it).
    if (!key && typeof kid === "string" && !this.keys.some((k) => k.kid === kid) && this.mayLookFor(kid)) {
      await this.reload();
      key = this.live(now).find((k) => k.kid === kid);
    }
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
