/**
 * Versioned schema migrations, applied in order inside one transaction each.
 * A migration is never edited once released: add a new one.
 */
import { m001Core } from "./001-core.js";
import { m002Rag } from "./002-rag.js";
import { m003Sessions } from "./003-sessions.js";
import { m004Conversations } from "./004-conversations.js";
import { m005ModelFiles } from "./005-model-files.js";
import { m006RateLimits } from "./006-rate-limits.js";
import { m007Audit } from "./007-audit.js";
import { m008Tombstones } from "./008-tombstones.js";
import { m009ServiceAccounts } from "./009-service-accounts.js";
import { m010EmbeddingPrompts } from "./010-embedding-prompts.js";
import { m011CorpusReranker } from "./011-corpus-reranker.js";
import { m012Responses } from "./012-responses.js";
import { m013ChunkTerms } from "./013-chunk-terms.js";
import { m014CorpusSearchDefaults } from "./014-corpus-search-defaults.js";
import { m015RemoteModels } from "./015-remote-models.js";
import { m016SharedState } from "./016-shared-state.js";
import { m017VectorStores } from "./017-vector-stores.js";
import { m018OllamaListener } from "./018-ollama-listener.js";
import { m019LinkedDocuments } from "./019-linked-documents.js";
import { m020Ocr } from "./020-ocr.js";
import { m021DocumentPositions } from "./021-document-positions.js";

export interface Migration {
  version: number;
  name: string;
  /** The change on SQLite. */
  sql: string;
  /**
   * The same change on Postgres. Versions up to 15 have none: a Postgres database starts
   * from their sum (`postgres-baseline.ts`); every later migration must carry one.
   */
  postgres?: string;
}

export const MIGRATIONS: readonly Migration[] = [m001Core, m002Rag, m003Sessions, m004Conversations, m005ModelFiles, m006RateLimits, m007Audit, m008Tombstones, m009ServiceAccounts, m010EmbeddingPrompts, m011CorpusReranker, m012Responses, m013ChunkTerms, m014CorpusSearchDefaults, m015RemoteModels, m016SharedState, m017VectorStores, m018OllamaListener, m019LinkedDocuments, m020Ocr, m021DocumentPositions];
