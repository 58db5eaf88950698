/**
 * OpenAI's Files and Vector Stores, built from the grounded-answer half's parts: the server
 * assembly calls this once (`server.ts`), and hands `attacher.windowsOf` to the indexer.
 */
import path from "node:path";
import type { Clock } from "../../domain/clock.js";
import { DataKeyring } from "../../security/data-keyring.js";
import type { KeyProvider } from "../../security/key-provider.js";
import type { CorpusStore } from "../../store/corpus-store.js";
import type { DocumentStore } from "../../store/document-store.js";
import { FolderFileBlobs, SqlFileBlobs } from "../../store/file-blob-store.js";
import { OpenAiFileStore } from "../../store/openai-file-store.js";
import type { SqlDatabase } from "../../store/sql-database.js";
import { VectorStoreStore } from "../../store/vector-store-store.js";
import type { QueryService } from "../answer/query-service.js";
import type { SourceService } from "../answer/source-service.js";
import type { CorpusService } from "../corpus-service.js";
import type { DocumentService } from "../document-service.js";
import { FileAttacher } from "./file-attacher.js";
import { FileService } from "./file-service.js";
import { VectorStoreFileService } from "./vector-store-file-service.js";
import { VectorStoreSearch } from "./vector-store-search.js";
import { VectorStoreService } from "./vector-store-service.js";

/** The services behind `/v1/files` and `/v1/vector_stores` (and, for `file_search`, `search`). */
export interface VectorStores {
  files: FileService;
  stores: VectorStoreService;
  storeFiles: VectorStoreFileService;
  search: VectorStoreSearch;
  attacher: FileAttacher;
}

export interface VectorStoreParts {
  store: SqlDatabase;
  dataDir: string;
  keyProvider: KeyProvider;
  clock: Clock;
  maxFileBytes: number;
  corpora: CorpusService;
  corpusStore: CorpusStore;
  documents: DocumentService;
  documentStore: DocumentStore;
  queries: QueryService;
  sources: SourceService;
}

export function composeVectorStores(p: VectorStoreParts): VectorStores {
  const fileStore = new OpenAiFileStore(p.store);
  // Replicas sharing Postgres share the files' sealed bytes too; a lone server keeps them in its data folder.
  const blobs = p.store.dialect === "postgres" ? new SqlFileBlobs(p.store) : new FolderFileBlobs(path.join(p.dataDir, "openai-files"));
  const files = new FileService({ files: fileStore, blobs, keyring: new DataKeyring(p.keyProvider, (id) => fileStore.wrappedKey(id)), clock: p.clock, maxFileBytes: p.maxFileBytes });
  const store = new VectorStoreStore(p.store);
  const attacher = new FileAttacher({ files, documents: p.documents, documentStore: p.documentStore, store });
  const stores = new VectorStoreService({ corpora: p.corpora, corpusStore: p.corpusStore, documents: p.documents, documentStore: p.documentStore, files, attacher, store, clock: p.clock });
  const storeFiles = new VectorStoreFileService({ stores, files, attacher, store, sources: p.sources });
  const search = new VectorStoreSearch({ stores, queries: p.queries, documents: p.documentStore, store });
  // A file deleted (or expired) leaves every vector store it was attached to.
  files.onDelete(async (fileId) => {
    for (const attachment of await store.attachmentsOfFile(fileId)) {
      const corpus = await p.corpusStore.getAny(attachment.corpusId);
      if (corpus) await attacher.detach({ kind: "api_key", workspaceId: corpus.workspaceId, keyId: "system", keyName: "file deletion", scopes: new Set() }, corpus.id, fileId);
    }
  });
  return { files, stores, storeFiles, search, attacher };
}
