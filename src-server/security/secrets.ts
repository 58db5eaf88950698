/**
 * API-key secrets: generation, hashing and constant-time verification.
 * Only the SHA-256 of a secret is ever stored; the secret is shown once.
 */
import { createHash, timingSafeEqual } from "node:crypto";
import { randomBase62 } from "../ids.js";

/** Every secret starts with this marker, so leaked keys are easy to scan for. */
export const SECRET_MARKER = "psk-";
/** Characters of a secret kept in clear (marker + 8) to let users tell keys apart. */
export const PREFIX_LENGTH = SECRET_MARKER.length + 8;

/** New secret: marker + 43 base62 characters (~256 bits). */
export function generateSecret(): string {
  return SECRET_MARKER + randomBase62(43);
}

/** The visible part of a secret, stored and listed in clear. */
export function secretPrefix(secret: string): string {
  return secret.slice(0, PREFIX_LENGTH);
}

/** Hex SHA-256 of a secret. A fast hash is right here: secrets are random, not passwords. */
export function hashSecret(secret: string): string {
  return createHash("sha256").update(secret, "utf8").digest("hex");
}

/** Constant-time comparison of two hex digests of equal length. */
export function digestsEqual(a: string, b: string): boolean {
  const x = Buffer.from(a, "hex");
  const y = Buffer.from(b, "hex");
  return x.length === y.length && x.length > 0 && timingSafeEqual(x, y);
}
