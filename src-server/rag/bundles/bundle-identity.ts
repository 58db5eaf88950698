/**
 * The instance's age identity, for bundles made for it (`pustaka corpora recipient` tells
 * the sender its recipient, `age1…`). It is derived from the instance's Ed25519 signing key
 * (`AuditSigner.derive`), so nothing more is stored or backed up, and replicas that share the
 * signing key (docs/team-server.md) open the same bundles.
 */
import { bech32 } from "@scure/base";
import type { AuditSigner } from "../../security/audit-chain.js";

export interface BundleIdentity {
  /** `AGE-SECRET-KEY-1…`: stays in memory. */
  identity: string;
  /** `age1…`: what a sender encrypts for. */
  recipient: string;
}

export async function bundleIdentity(signer: AuditSigner): Promise<BundleIdentity> {
  const secret = signer.derive("bundle-identity:x25519");
  try {
    const identity = bech32.encode("AGE-SECRET-KEY-", bech32.toWords(secret), false).toUpperCase();
    // age (and its post-quantum code) loads when bundles are first used, not with the server.
    const { identityToRecipient } = await import("age-encryption");
    return { identity, recipient: await identityToRecipient(identity) };
  } finally {
    secret.fill(0);
  }
}
