import type { Migration } from "./index.js";

/**
 * Documents that came out of another document (issue 34): an e-mail's attachments and a
 * mailbox's messages are indexed as documents of their own, linked to the one that held
 * them. `parent_document_id` names that document (always in the same corpus; the service
 * that creates children sees to it), `relation` says how they relate. Both are null for a
 * document uploaded on its own. Children are deleted with their parent (the tombstone of a
 * deletion takes them along); the cascade only backs that up.
 */
const change = `
ALTER TABLE documents ADD COLUMN parent_document_id TEXT REFERENCES documents(id) ON DELETE CASCADE;
ALTER TABLE documents ADD COLUMN relation TEXT CHECK (relation IN ('attachment', 'message'));
CREATE INDEX documents_by_parent ON documents(parent_document_id, created_at);
`;

export const m019LinkedDocuments: Migration = {
  version: 19,
  name: "linked-documents",
  sql: change,
  postgres: change,
};
