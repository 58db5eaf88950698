/**
 * Recipient keys pasted into the export dialog: age X25519 public keys (`age1…`), one or
 * more, separated by spaces, commas or lines. The things people paste by mistake (a secret
 * key, a signing key id) get their own explanation.
 */

const RECIPIENT = /^age1[02-9ac-hj-np-z]{58}$/;
/** The server takes at most this many recipients per bundle. */
export const MAX_RECIPIENTS = 20;

export type RecipientProblem = "empty" | "secret" | "signer" | "invalid" | "tooMany";

export function parseRecipients(text: string): { keys: string[]; problem: RecipientProblem | null; offending: string | null } {
  const parts = text
    .split(/[\s,;]+/)
    .map((p) => p.trim())
    .filter(Boolean);
  if (parts.length === 0) return { keys: [], problem: "empty", offending: null };
  for (const part of parts) {
    // Never echo a secret key back onto the screen.
    if (/^AGE-SECRET-KEY-/i.test(part)) return { keys: [], problem: "secret", offending: null };
    if (/^ed25519:/i.test(part)) return { keys: [], problem: "signer", offending: part };
    if (!RECIPIENT.test(part)) return { keys: [], problem: "invalid", offending: part.length > 24 ? `${part.slice(0, 24)}…` : part };
  }
  const keys = [...new Set(parts)];
  if (keys.length > MAX_RECIPIENTS) return { keys: [], problem: "tooMany", offending: null };
  return { keys, problem: null, offending: null };
}
