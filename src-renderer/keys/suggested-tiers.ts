/** Tier names to suggest when changing a rate-limit tier. */
import type { Principal } from "../api/contract.js";

/**
 * The tiers seen (on keys or accounts, and the caller's own key and workspace) plus the
 * server's built-in `default` and `unlimited`, sorted and without repeats.
 */
export function suggestedTiers(principal: Principal, seen: readonly string[]): string[] {
  return [...new Set([...seen, principal.rate_limits.key.tier, principal.rate_limits.workspace.tier, "default", "unlimited"])].sort();
}
