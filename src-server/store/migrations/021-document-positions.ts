import type { Migration } from "./index.js";

/**
 * Where a linked document sits in the document it came out of (issue 34): a mailbox's
 * messages in mailbox order, an e-mail's attachments in the order the message holds them.
 * Staged documents are created within the same second and ids are random, so creation order
 * cannot say it. Existing linked documents keep the order they were listed in (creation, then
 * id); an uploaded document has none.
 */
const change = (bigint: string) => `
ALTER TABLE documents ADD COLUMN position ${bigint} CHECK (position >= 0);
UPDATE documents SET position = (
  SELECT COUNT(*) FROM documents AS earlier
  WHERE earlier.parent_document_id = documents.parent_document_id
    AND (earlier.created_at < documents.created_at OR (earlier.created_at = documents.created_at AND earlier.id < documents.id))
) WHERE parent_document_id IS NOT NULL;
DROP INDEX documents_by_parent;
CREATE INDEX documents_by_parent ON documents(parent_document_id, position, id);
`;

export const m021DocumentPositions: Migration = {
  version: 21,
  name: "document-positions",
  sql: change("INTEGER"),
  postgres: change("BIGINT"),
};
