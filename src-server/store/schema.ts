/**
 * The shared store's tables as Kysely sees them: one description for SQLite and Postgres.
 * Times are Unix milliseconds (BIGINT on Postgres, read back as numbers); flags and
 * counters are integers; sealed bytes are Buffers (BLOB / BYTEA).
 */
import type { Generated } from "kysely";

export interface WorkspacesTable {
  id: string;
  name: string;
  created_at: number;
}

export interface ApiKeysTable {
  id: string;
  workspace_id: string;
  name: string;
  prefix: string;
  secret_sha256: string;
  scopes: string;
  created_at: number;
  expires_at: number | null;
  revoked_at: number | null;
  last_used_at: number | null;
}

export interface CorporaTable {
  id: string;
  workspace_id: string;
  name: string;
  chunking: string;
  embedding_model: string;
  dimensions: number;
  retention_days: number;
  metadata: string;
  created_at: number;
  updated_at: number;
  query_prompt: Generated<string>;
  document_prompt: Generated<string>;
  rerank_model: string | null;
  search_defaults: string | null;
  /** OCR languages, JSON array; null: the default (migration 20). */
  ocr_languages: Generated<string | null>;
}

export interface CorpusKeysTable {
  corpus_id: string;
  provider: string;
  wrapped_key: Buffer;
  created_at: number;
  destroy_after: number | null;
}

export interface DocumentsTable {
  id: string;
  corpus_id: string;
  filename: string;
  content_type: string;
  format: string;
  bytes: number;
  sha256: string;
  status: string;
  error_code: string | null;
  error_message: string | null;
  page_count: number | null;
  chunk_count: Generated<number>;
  metadata: string;
  attempts: Generated<number>;
  created_at: number;
  updated_at: number;
  indexed_at: number | null;
  /** The replica indexing it (migration 16). */
  claimed_by: Generated<string | null>;
  /** The document it came out of, and how (an e-mail's attachment, a mailbox's message; migration 19). */
  parent_document_id: Generated<string | null>;
  relation: Generated<string | null>;
  position: Generated<number | null>;
  /** Which pages OCR read and how sure it was, JSON without text (migration 20). */
  ocr_summary: Generated<string | null>;
}

/** An OCR'd page's words and boxes, sealed (migration 20). */
export interface DocumentOcrPagesTable {
  document_id: string;
  page: number;
  width: number;
  height: number;
  words: Buffer;
}

export interface ChunksTable {
  id: string;
  corpus_id: string;
  document_id: string;
  idx: number;
  start_offset: number;
  end_offset: number;
  page_start: number | null;
  page_end: number | null;
  token_count: number;
  content: Buffer;
  vector: Buffer;
  terms: Buffer | null;
}

export interface SessionsTable {
  id: string;
  workspace_id: string;
  secret_sha256: string;
  scopes: string;
  user_agent: string;
  created_at: number;
  expires_at: number;
  last_used_at: number;
}

export interface ConversationsTable {
  id: string;
  workspace_id: string;
  corpus_id: string | null;
  key_provider: string;
  wrapped_key: Buffer;
  title: Buffer;
  message_count: Generated<number>;
  created_at: number;
  updated_at: number;
}

export interface ConversationMessagesTable {
  id: string;
  conversation_id: string;
  idx: number;
  role: string;
  body: Buffer;
  created_at: number;
}

export interface ModelFilesTable {
  id: string;
  path: string;
  created_at: number;
}

export interface RateLimitEventsTable {
  id: Generated<number>;
  bucket: string;
  at_ms: number;
  requests: number;
  tokens: number;
}

export interface RateLimitTiersTable {
  subject: string;
  tier: string;
}

export interface AuditEventsTable {
  id: string;
  chain: string;
  seq: number;
  at_ms: number;
  type: string;
  actor: string;
  outcome: "success" | "failure";
  request_id: string | null;
  body: string;
  prev_hash: string;
  hash: string;
}

export interface TombstonesTable {
  id: string;
  kind: "corpus" | "document";
  workspace_id: string;
  corpus_id: string;
  document_id: string | null;
  status: "moving" | "retained" | "purging";
  documents: Generated<number>;
  chunks: Generated<number>;
  bytes: Generated<number>;
  created_at: number;
  expires_at: number;
}

export interface ServiceAccountsTable {
  id: string;
  workspace_id: string;
  name: string;
  scopes: string;
  secret_prefix: string | null;
  secret_sha256: string | null;
  public_jwk: string | null;
  disabled_at: number | null;
  created_at: number;
  last_token_at: number | null;
}

export interface OAuthUsedAssertionsTable {
  jti: string;
  client_id: string;
  expires_at: number;
}

export interface ResponsesTable {
  id: string;
  workspace_id: string;
  key_provider: string;
  wrapped_key: Buffer;
  body: Buffer;
  created_at: number;
  expires_at: number | null;
}

export interface RemoteModelsTable {
  id: string;
  spec: string;
  key_provider: string;
  wrapped_key: Buffer;
  secrets: Buffer;
  created_at: number;
  created_by: string;
}

export interface BlobPartsTable {
  owner: string;
  name: string;
  part: number;
  data: Buffer;
}

export interface ColdManifestsTable {
  tombstone_id: string;
  sealed: Buffer;
}

export interface ColdChunksTable {
  tombstone_id: string;
  id: string;
  corpus_id: string;
  document_id: string;
  idx: number;
  start_offset: number;
  end_offset: number;
  page_start: number | null;
  page_end: number | null;
  token_count: number;
  content: Buffer;
  vector: Buffer;
}

export interface CorpusChangesTable {
  seq: Generated<number>;
  corpus_id: string;
  document_id: string | null;
  change: "indexed" | "removed" | "corpus_removed";
  origin: string;
  at_ms: number;
}

export interface SigningKeysTable {
  purpose: "oauth" | "audit";
  kid: string;
  key_provider: string;
  wrapped_key: Buffer;
  sealed: Buffer;
  public_key: string;
  created_at: number;
  retires_at: number | null;
}

export interface SignInTokensTable {
  secret_sha256: string;
  expires_at: number;
}

export interface LeasesTable {
  name: string;
  holder: string;
  expires_at: number;
}

export interface Tables {
  workspaces: WorkspacesTable;
  api_keys: ApiKeysTable;
  corpora: CorporaTable;
  corpus_keys: CorpusKeysTable;
  documents: DocumentsTable;
  document_ocr_pages: DocumentOcrPagesTable;
  chunks: ChunksTable;
  sessions: SessionsTable;
  conversations: ConversationsTable;
  conversation_messages: ConversationMessagesTable;
  model_files: ModelFilesTable;
  rate_limit_events: RateLimitEventsTable;
  rate_limit_tiers: RateLimitTiersTable;
  audit_events: AuditEventsTable;
  tombstones: TombstonesTable;
  service_accounts: ServiceAccountsTable;
  oauth_used_assertions: OAuthUsedAssertionsTable;
  responses: ResponsesTable;
  remote_models: RemoteModelsTable;
  blob_parts: BlobPartsTable;
  cold_manifests: ColdManifestsTable;
  cold_chunks: ColdChunksTable;
  corpus_changes: CorpusChangesTable;
  signing_keys: SigningKeysTable;
  sign_in_tokens: SignInTokensTable;
  leases: LeasesTable;
}
