/** `/v1/audit`: the append-only, hash-chained audit trail (scope `audit.read`). */

/** One entry, exactly as hashed: `hash` = SHA-256 of the RFC 8785 canonical JSON of every other field. */
export interface AuditEvent {
  object: "audit.event";
  id: string;
  /** The workspace id, or `instance` for events that belong to no workspace (unknown keys). */
  chain: string;
  seq: number;
  /** ISO 8601, milliseconds, UTC. */
  time: string;
  type: string;
  /** `api_key:key_…`, `session:ses_…`, `service_account:sa_…`, `system`, `cli`, `anonymous`. */
  actor: string;
  outcome: "success" | "failure";
  request_id: string | null;
  /** Type-specific facts; inputs appear only as `*_sha256` digests. */
  data: Record<string, unknown>;
  prev_hash: string;
  hash: string;
}

/** `GET /v1/audit/events` query: every filter optional. */
export interface AuditEventsQuery {
  /** A workspace id or `instance`; default: the caller's workspace (others need `workspaces.manage`). */
  chain?: string;
  /** An exact type, or a prefix ending in `.` (`document.`). */
  type?: string;
  actor?: string;
  outcome?: "success" | "failure";
  request_id?: string;
  /** ISO 8601 or Unix seconds; `since` inclusive, `until` exclusive. */
  since?: string;
  until?: string;
  limit?: number;
  after?: string;
  order?: "asc" | "desc";
}

export type AuditProblemReason =
  | "hash_mismatch"
  | "broken_link"
  | "sequence_gap"
  | "truncated"
  | "malformed"
  | "manifest_missing"
  | "manifest_mismatch"
  | "bad_signature"
  | "untrusted_key"
  | "append_only_disabled";

export interface AuditProblem {
  chain: string;
  seq: number | null;
  id: string | null;
  reason: AuditProblemReason;
  message: string;
}

/** `GET /v1/audit/verify`. */
export interface AuditVerification {
  object: "audit.verification";
  valid: boolean;
  chains: { chain: string; count: number; head_seq: number; head_hash: string; signed_head_seq: number | null }[];
  /** The first broken link, null when the trail is intact. */
  first_problem: AuditProblem | null;
  problems: AuditProblem[];
  checked_entries: number;
  ms: number;
}

/** `GET /v1/audit/signing-key`: the Ed25519 key that signs export manifests; pin it for `pustaka audit verify --public-key`. */
export interface AuditSigningKey {
  object: "audit.signing_key";
  key_id: string;
  /** base64 SPKI DER. */
  public_key: string;
  public_key_pem: string;
}

/** The last line of a JSONL export (the `#manifest` row of a CSV one). */
export interface AuditExportManifest {
  object: "audit.manifest";
  format: "pustaka-audit-export/1";
  chain: string;
  count: number;
  first_seq: number | null;
  last_seq: number | null;
  anchor_hash: string;
  head_hash: string;
  since: string | null;
  until: string | null;
  exported_at: string;
  key_id: string;
  public_key: string;
  signature: string;
}
