import type { Migration } from "./index.js";

/**
 * Rate limits: the requests and tokens admitted in the last minute, per bucket (a
 * workspace or a key), so limits are exact and survive a restart; and which named tier
 * applies to a workspace or key when it is not the default.
 */
export const m006RateLimits: Migration = {
  version: 6,
  name: "rate-limits",
  sql: `
CREATE TABLE rate_limit_events (
  id       INTEGER PRIMARY KEY AUTOINCREMENT,
  bucket   TEXT NOT NULL,
  at_ms    INTEGER NOT NULL,
  requests INTEGER NOT NULL,
  tokens   INTEGER NOT NULL
) STRICT;
CREATE INDEX rate_limit_events_by_bucket ON rate_limit_events(bucket, at_ms);

CREATE TABLE rate_limit_tiers (
  subject TEXT PRIMARY KEY,
  tier    TEXT NOT NULL
) STRICT;
`,
};
