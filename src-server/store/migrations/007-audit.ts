import type { Migration } from "./index.js";

/**
 * The audit log: one hash chain per workspace (and one for the instance), append-only.
 * The database itself refuses UPDATE and DELETE, and refuses an INSERT that does not
 * extend its chain (next sequence number, previous entry's hash); the hashes themselves
 * are computed and checked by the application (`security/audit-chain.ts`).
 */
export const m007Audit: Migration = {
  version: 7,
  name: "audit",
  sql: `
CREATE TABLE audit_events (
  id         TEXT PRIMARY KEY,
  chain      TEXT NOT NULL,
  seq        INTEGER NOT NULL CHECK (seq >= 1),
  at_ms      INTEGER NOT NULL,
  type       TEXT NOT NULL,
  actor      TEXT NOT NULL,
  outcome    TEXT NOT NULL,
  request_id TEXT,
  body       TEXT NOT NULL,
  prev_hash  TEXT NOT NULL,
  hash       TEXT NOT NULL,
  UNIQUE (chain, seq)
) STRICT;
CREATE INDEX audit_events_by_time ON audit_events(chain, at_ms);
CREATE INDEX audit_events_by_type ON audit_events(chain, type, at_ms);

CREATE TRIGGER audit_events_no_update BEFORE UPDATE ON audit_events
BEGIN SELECT RAISE(ABORT, 'audit_events is append-only: UPDATE refused'); END;
CREATE TRIGGER audit_events_no_delete BEFORE DELETE ON audit_events
BEGIN SELECT RAISE(ABORT, 'audit_events is append-only: DELETE refused'); END;
CREATE TRIGGER audit_events_chained BEFORE INSERT ON audit_events
WHEN NEW.seq != COALESCE((SELECT MAX(seq) FROM audit_events WHERE chain = NEW.chain), 0) + 1
  OR NEW.prev_hash != COALESCE((SELECT hash FROM audit_events WHERE chain = NEW.chain ORDER BY seq DESC LIMIT 1), '${"0".repeat(64)}')
BEGIN SELECT RAISE(ABORT, 'audit_events: an entry must extend its chain'); END;
`,
};
