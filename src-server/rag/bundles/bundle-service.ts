/**
 * Corpus bundles, export and import (issue 35). No Express here: routes hand over a principal,
 * a byte stream and options, and get back streams, previews and corpora.
 *
 * Export: a settled corpus (nothing queued or being indexed) is written as a bundle
 * (`bundle-writer.ts`), encrypted for a passphrase or for age recipients, signed with the
 * instance's Ed25519 key, audited (`corpus.export`) once it is written.
 *
 * Import, in two steps so a person can compare the signer's fingerprint before anything is
 * written:
 * 1. `stage`: the encrypted bundle is saved under `<data-dir>/imports/` (it stays encrypted)
 *    and read once to verify it: signature, every entry's hash, every original's sha256, every
 *    document's passages, the vectors' width. Nothing is written to the stores. The preview
 *    says who signed it, where it came from, what it holds, and which local model matches the
 *    one that embedded it (by the GGUF's sha256).
 * 2. `commit`: the bundle is read again and written into a new corpus, everything sealed
 *    under the new corpus's key; a failure (or a bundle that changed in between) removes the
 *    new corpus at once (a tombstone purged on the spot: nothing stays behind). A corpus left
 *    half-written by a crash is removed when the server starts again (`sweep`).
 * Both ends are audited (`corpus.import`), refusals included.
 */
import { createHash, randomUUID } from "node:crypto";
import { createReadStream, createWriteStream } from "node:fs";
import { mkdir, readdir, readFile, rename, rm, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import { pipeline } from "node:stream/promises";
import { Readable } from "node:stream";
import type { Logger } from "pino";
import { actorOf, type AuditService } from "../../audit/audit-service.js";
import type { Principal } from "../../domain/scopes.js";
import { conflict, invalidRequest, notFound, ServiceError } from "../../errors.js";
import { newId, nowSeconds } from "../../ids.js";
import { isLocal, type ModelEntry, type ModelRegistry } from "../../models/model-registry.js";
import type { CorpusKeyring } from "../../security/corpus-keyring.js";
import type { EncryptedBlobStore } from "../../security/encrypted-blob-store.js";
import type { ChunkStore } from "../../store/chunk-store.js";
import type { CorpusRecord, CorpusStore } from "../../store/corpus-store.js";
import type { DocumentRecord, DocumentStore } from "../../store/document-store.js";
import type { OcrPageStore } from "../../store/ocr-page-store.js";
import type { CorpusService, CorpusView } from "../corpus-service.js";
import type { CorpusIndexes } from "../retrieval/corpus-indexes.js";
import type { TombstoneService } from "../tombstone-service.js";
import { BUNDLE_EXTENSION, type Manifest } from "./bundle-format.js";
import { bundleIdentity, type BundleIdentity } from "./bundle-identity.js";
import { BundleChecker, BundleCommitter, searchDefaultsOf } from "./bundle-import.js";
import { BundleError, readBundle, type BundleDecryption } from "./bundle-reader.js";
import { exportBundle, type BundleEncryption, type BundleSummary } from "./bundle-writer.js";

/** A staged import is kept this long before it is removed unimported. */
const STAGED_TTL_SECONDS = 24 * 3600;
/** The shortest passphrase a bundle is encrypted with (age's scrypt makes each guess cost; a short one still falls). */
export const MIN_PASSPHRASE_LENGTH = 12;

export interface BundleServiceDeps {
  corpora: CorpusService;
  corpusStore: CorpusStore;
  documents: DocumentStore;
  chunks: ChunkStore;
  ocrPages: OcrPageStore;
  blobs: EncryptedBlobStore;
  keyring: CorpusKeyring;
  registry: ModelRegistry;
  indexes: CorpusIndexes;
  tombstones: TombstoneService;
  audit: AuditService;
  /** Documents queued to be indexed again (an import onto another embedding model). */
  onQueued: (documentIds: string[]) => void;
  dataDir: string;
  /** The largest original a bundle may hold (the upload limit). */
  maxFileBytes: number;
  /** The largest bundle accepted for import. */
  maxBundleBytes: number;
  appVersion: string;
  logger?: Pick<Logger, "warn" | "info" | "error">;
}

/** What a person compares and decides on before an import is written. */
export interface ImportPreview {
  id: string;
  workspaceId: string;
  status: "verified";
  /** Bytes of the bundle as received (encrypted). */
  bytes: number;
  createdAt: number;
  expiresAt: number;
  signer: { keyId: string; publicKey: string };
  source: Manifest["source"] & { exportedAt: number; corpusName: string };
  counts: Manifest["counts"];
  embeddingModel: Manifest["embedding_model"] & { local: string | null };
  /** Whether the bundle was made for this instance's key (else a passphrase opens it). */
  encryptedFor: "passphrase" | "recipient";
}

interface StagedRecord {
  preview: ImportPreview;
  /** Set while a commit writes (a crash then leaves this corpus to remove). */
  committing?: { corpusId: string; startedAt: number } | undefined;
}

export interface CommitOptions {
  passphrase?: string | undefined;
  /** The signer the person checked (`ed25519:…`): a bundle signed by any other key is refused. */
  expectedSigner?: string | undefined;
  /** The new corpus's name (default: the bundle's). */
  name?: string | undefined;
  /** A local embedding model to index the documents with again, when the bundle's model is not here. */
  embeddingModel?: string | undefined;
}

export class BundleService {
  private identity: Promise<BundleIdentity> | null = null;
  /** GGUF sha256s computed so far, by path, size and modification time. */
  private readonly hashes = new Map<string, Promise<string>>();
  private readonly importsDir: string;

  constructor(private readonly deps: BundleServiceDeps) {
    this.importsDir = path.join(deps.dataDir, "imports");
  }

  private instanceIdentity(): Promise<BundleIdentity> {
    return (this.identity ??= bundleIdentity(this.deps.audit.signer));
  }

  /** This instance's age recipient (what a sender encrypts a bundle for) and its signing key id. */
  async recipient(): Promise<{ recipient: string; keyId: string; publicKey: string }> {
    const { recipient } = await this.instanceIdentity();
    return { recipient, keyId: this.deps.audit.signer.keyId, publicKey: this.deps.audit.signer.publicKey };
  }

  /**
   * The corpus as an encrypted bundle stream. `done` settles when it is written (the audit
   * entry is written then, whether it succeeded or not).
   */
  async exportCorpus(principal: Principal, corpusId: string, encryption: BundleEncryption, requestId: string | null): Promise<{ stream: Readable; filename: string; done: Promise<BundleSummary> }> {
    const corpus = await this.deps.corpora.record(principal, corpusId);
    checkEncryption(encryption);
    const counts = await this.deps.corpusStore.counts(corpus.id);
    if (counts.queued + counts.processing > 0) {
      throw conflict(`The corpus is still indexing (${counts.queued + counts.processing} documents to go): export it once indexing has finished.`, "corpus_busy");
    }
    const model = this.deps.registry.resolve(corpus.embeddingModel, "embedding_model");
    const { chunks, ocrPages, blobs } = this.deps;
    const { stream, done } = await exportBundle(
      {
        corpus,
        cipher: await this.deps.keyring.cipher(corpus.id),
        documents: () => this.documentsInOrder(corpus.id),
        chunksOf: (id) => chunks.ofDocument(id),
        original: (id) => blobs.read(corpus.id, id),
        ocrPage: (id, page) => ocrPages.page(id, page),
        model: { name: corpus.embeddingModel, sha256: await this.modelSha256(model), dimensions: corpus.dimensions },
        signer: this.deps.audit.signer,
        // The key's or session's name as people know it, and the actor id the audit trail uses.
        exportedBy: `${principal.keyName ? `${principal.keyName} · ` : ""}${actorOf(principal)}`.slice(0, 200),
        appVersion: this.deps.appVersion,
        now: nowSeconds(),
      },
      encryption,
    );
    const audited = done.then(
      (summary) => {
        this.record(principal, "corpus.export", "success", requestId, { corpus_id: corpus.id, encrypted_for: "passphrase" in encryption ? "passphrase" : "recipients", recipients: "recipients" in encryption ? encryption.recipients.length : 0, documents: summary.documents, passages: summary.passages, original_bytes: summary.originalBytes, signer: summary.manifest.key_id, entries: summary.manifest.entries.length });
        return summary;
      },
      (error: unknown) => {
        this.record(principal, "corpus.export", "failure", requestId, { corpus_id: corpus.id, reason: error instanceof Error ? error.message.slice(0, 200) : "unknown" });
        throw error;
      },
    );
    audited.catch(() => undefined);
    return { stream, filename: `${slug(corpus.name)}${BUNDLE_EXTENSION}`, done: audited };
  }

  /** Uploads (parents first, each followed by what came out of it, in its order), then again for the export's second walk. */
  private async *documentsInOrder(corpusId: string): AsyncGenerator<DocumentRecord> {
    for (let after: string | undefined; ; ) {
      const page = await this.deps.documents.list(corpusId, { limit: 200, order: "asc", ...(after ? { after } : {}) }, undefined, null);
      for (const upload of page.data) {
        yield upload;
        // Parents before their children, down every level.
        for (const child of await this.deps.documents.descendantsOf(upload.id)) yield child;
      }
      if (!page.hasMore || page.data.length === 0) return;
      after = page.data.at(-1)!.id;
    }
  }

  /**
   * Saves an uploaded bundle (encrypted) and verifies it, writing nothing else.
   * @throws ServiceError `bundle_*` (what is wrong with it), `payload_too_large`
   */
  async stage(principal: Principal, body: AsyncIterable<Buffer>, decryption: { passphrase?: string | undefined }, requestId: string | null): Promise<ImportPreview> {
    await mkdir(this.importsDir, { recursive: true, mode: 0o700 });
    const id = `imp_${randomUUID().replace(/-/g, "")}`;
    const file = this.bundleFile(id);
    let bytes = 0;
    const limit = this.deps.maxBundleBytes;
    try {
      await pipeline(
        body,
        async function* (source: AsyncIterable<Buffer>) {
          for await (const chunk of source) {
            bytes += chunk.length;
            if (bytes > limit) throw new ServiceError("payload_too_large", `The bundle is larger than the ${limit}-byte limit (rag.bundles.maxBytes).`, { code: "bundle_too_large", param: "file" });
            yield chunk;
          }
        },
        createWriteStream(file, { mode: 0o600 }),
      );
      if (bytes === 0) throw invalidRequest("The bundle is empty.", "bundle_format_unknown", "file");
      const checker = new BundleChecker();
      const verified = await readBundle(createReadStream(file), await this.decryption(decryption), { visit: checker.visit, maxEntryBytes: this.deps.maxFileBytes });
      checker.finish(verified.manifest);
      const m = verified.manifest;
      const local = await this.localModelFor(m.embedding_model);
      const now = nowSeconds();
      const preview: ImportPreview = {
        id,
        workspaceId: principal.workspaceId,
        status: "verified",
        bytes,
        createdAt: now,
        expiresAt: now + STAGED_TTL_SECONDS,
        signer: { keyId: m.key_id, publicKey: m.public_key },
        source: { ...m.source, exportedAt: m.created_at, corpusName: m.corpus.name },
        counts: m.counts,
        embeddingModel: { ...m.embedding_model, local: local?.id ?? null },
        encryptedFor: decryption.passphrase !== undefined ? "passphrase" : "recipient",
      };
      await this.save({ preview });
      this.record(principal, "corpus.import", "success", requestId, { stage: "verify", import_id: id, signer: m.key_id, source_instance: m.source.instance, source_corpus: m.corpus.id, documents: m.counts.documents, passages: m.counts.passages, bytes });
      return preview;
    } catch (error) {
      await rm(file, { force: true });
      const failure = error instanceof BundleError ? error.toServiceError() : error;
      this.record(principal, "corpus.import", "failure", requestId, { stage: "verify", bytes, reason: failure instanceof ServiceError ? failure.code : "error" });
      throw failure;
    }
  }

  async getImport(principal: Principal, id: string): Promise<ImportPreview> {
    return (await this.load(principal, id)).preview;
  }

  /** Removes a staged import that will not be imported. */
  async discard(principal: Principal, id: string): Promise<void> {
    const staged = await this.load(principal, id);
    if (staged.committing) throw conflict("The import is being written; it cannot be discarded now.", "import_in_progress");
    await this.remove(id);
  }

  /**
   * Writes a staged, verified bundle into a new corpus.
   * @throws ServiceError `bundle_signer_mismatch`, `embedding_model_missing`, `bundle_*` (the
   *   file changed since it was verified), `import_in_progress`
   */
  async commit(principal: Principal, id: string, options: CommitOptions, requestId: string | null): Promise<CorpusView> {
    const staged = await this.load(principal, id);
    const { preview } = staged;
    if (staged.committing) throw conflict("The import is already being written.", "import_in_progress");
    let model: { entry: ModelEntry; name: string };
    try {
      if (options.expectedSigner !== undefined && options.expectedSigner !== preview.signer.keyId) {
        throw invalidRequest(`The bundle was signed by ${preview.signer.keyId}, not by ${options.expectedSigner}: it was not imported.`, "bundle_signer_mismatch", "expected_signer");
      }
      model = this.modelForImport(preview, options.embeddingModel);
    } catch (error) {
      this.record(principal, "corpus.import", "failure", requestId, { stage: "commit", import_id: id, signer: preview.signer.keyId, reason: error instanceof ServiceError ? error.code : "error" });
      throw error;
    }
    const reembed = model.entry.id !== preview.embeddingModel.local;
    const decryption = await this.decryption({ passphrase: options.passphrase });
    // The corpus's settings come from the bundle: read them from it (the first entries).
    const checker = new BundleChecker();
    const corpusId = newId("corp_");
    staged.committing = { corpusId, startedAt: nowSeconds() };
    await this.save(staged);
    let record: CorpusRecord | null = null;
    try {
      let committer: BundleCommitter | null = null;
      const verified = await readBundle(createReadStream(this.bundleFile(id)), decryption, {
        maxEntryBytes: this.deps.maxFileBytes,
        expectedSigner: preview.signer.keyId,
        visit: async (name, bytes) => {
          checker.visit(name, bytes);
          if (!committer) {
            if (!checker.corpus) return;
            record = await this.createCorpus(principal, corpusId, checker.corpus, options.name, model.name);
            committer = new BundleCommitter(
              {
                corpus: record,
                cipher: await this.deps.keyring.cipher(corpusId),
                documents: this.deps.documents,
                chunks: this.deps.chunks,
                writeOriginal: (documentId, original) => this.deps.blobs.write(corpusId, documentId, Readable.from([original])),
                reembed,
              },
              checker,
            );
          }
          await committer.visit(name, bytes);
        },
      });
      checker.finish(verified.manifest);
      if (!committer) throw new BundleError("bundle_invalid", "The bundle holds no corpus settings.");
      const written = committer as BundleCommitter;
      await written.flush();
      await this.deps.indexes.drop(corpusId);
      await this.remove(id);
      if (written.queued.length > 0) this.deps.onQueued(written.queued);
      this.record(principal, "corpus.import", "success", requestId, {
        stage: "commit",
        import_id: id,
        corpus_id: corpusId,
        signer: verified.signer,
        source_instance: verified.manifest.source.instance,
        source_corpus: verified.manifest.corpus.id,
        documents: written.documentsWritten,
        passages: written.passagesWritten,
        embedding_model: model.name,
        reembedded: reembed,
      });
      return this.deps.corpora.get(principal, corpusId);
    } catch (error) {
      if (record) await this.purge(record).catch((cleanup: unknown) => this.deps.logger?.error({ err: cleanup, corpusId }, "could not remove a failed import's corpus"));
      const failure = error instanceof BundleError ? error.toServiceError() : error;
      this.record(principal, "corpus.import", "failure", requestId, { stage: "commit", import_id: id, reason: failure instanceof ServiceError ? failure.code : "error" });
      // A bundle that no longer verifies is removed; after any other failure it can be tried again.
      if (error instanceof BundleError) await this.remove(id);
      else {
        staged.committing = undefined;
        await this.save(staged).catch(() => undefined);
      }
      throw failure;
    }
  }

  /**
   * At start: removes staged imports past their time, and the corpora of imports a crash
   * interrupted (they were never announced as imported).
   */
  async sweep(): Promise<{ expired: number; rolledBack: number }> {
    let names: string[];
    try {
      names = await readdir(this.importsDir);
    } catch {
      return { expired: 0, rolledBack: 0 };
    }
    let expired = 0;
    let rolledBack = 0;
    const now = nowSeconds();
    for (const name of names.filter((n) => n.endsWith(".json"))) {
      const id = name.slice(0, -".json".length);
      let staged: StagedRecord;
      try {
        staged = JSON.parse(await readFile(path.join(this.importsDir, name), "utf8")) as StagedRecord;
      } catch {
        await this.remove(id);
        continue;
      }
      if (staged.committing) {
        const corpus = await this.deps.corpusStore.getAny(staged.committing.corpusId);
        if (corpus) await this.purge(corpus);
        staged.committing = undefined;
        await this.save(staged);
        rolledBack++;
        this.deps.logger?.warn({ importId: id, corpusId: staged.committing }, "removed the corpus of an import a restart interrupted");
      }
      if (staged.preview.expiresAt <= now) {
        await this.remove(id);
        expired++;
      }
    }
    // Bundles whose record was never written (a crash while one was received).
    for (const name of names.filter((n) => n.endsWith(".bundle"))) {
      if (!names.includes(`${name.slice(0, -".bundle".length)}.json`)) await rm(path.join(this.importsDir, name), { force: true });
    }
    return { expired, rolledBack };
  }

  private async createCorpus(principal: Principal, corpusId: string, entry: NonNullable<BundleChecker["corpus"]>, name: string | undefined, embeddingModel: string): Promise<CorpusRecord> {
    const now = nowSeconds();
    const rerank = entry.rerank_model && this.deps.registry.find(entry.rerank_model)?.type === "rerank" ? entry.rerank_model : null;
    const record: CorpusRecord = {
      id: corpusId,
      workspaceId: principal.workspaceId,
      name: name ?? entry.name,
      chunking: entry.chunking,
      embeddingModel,
      dimensions: entry.dimensions,
      embeddingPrompts: entry.embedding_prompts,
      rerankModel: rerank,
      searchDefaults: searchDefaultsOf(entry.search_defaults),
      ocrLanguages: entry.ocr_languages,
      retentionDays: entry.retention_days,
      metadata: entry.metadata,
      createdAt: now,
      updatedAt: now,
    };
    const key = await this.deps.keyring.create(corpusId);
    await this.deps.corpusStore.insert(record, key);
    return record;
  }

  /** Removes a corpus at once, leaving no tombstone to keep (a failed import was never the user's data here). */
  private async purge(corpus: CorpusRecord): Promise<void> {
    await this.deps.corpusStore.update(corpus.id, { retentionDays: 0 }, nowSeconds());
    await this.deps.tombstones.buryCorpus({ ...corpus, retentionDays: 0 });
    await this.deps.indexes.drop(corpus.id);
    this.deps.keyring.forget(corpus.id);
  }

  /** The local model a bundle's vectors can be searched with: the same GGUF (sha256), or the same name for a model served remotely. */
  private async localModelFor(model: Manifest["embedding_model"]): Promise<ModelEntry | null> {
    for (const entry of this.deps.registry.entries) {
      if (entry.type !== "embedding") continue;
      if (model.sha256 === null) {
        if (!isLocal(entry) && (entry.id === model.name || entry.aliases.includes(model.name))) return entry;
        continue;
      }
      if (!isLocal(entry) || entry.gguf.embeddingLength !== model.dimensions) continue;
      if ((await this.modelSha256(entry)) === model.sha256) return entry;
    }
    return null;
  }

  private modelForImport(preview: ImportPreview, asked: string | undefined): { entry: ModelEntry; name: string } {
    const local = preview.embeddingModel.local;
    if (asked === undefined) {
      if (local === null) {
        throw new ServiceError("invalid_request", `The bundle's passages were embedded with '${preview.embeddingModel.name}' (sha256 ${preview.embeddingModel.sha256 ?? "unknown"}), which this Pustaka does not have. Add that model, or import with embedding_model set to a local one to index the documents again.`, { code: "embedding_model_missing", param: "embedding_model" });
      }
      return { entry: this.deps.registry.resolve(local, "embedding_model"), name: local };
    }
    const entry = this.deps.registry.resolve(asked, "embedding_model");
    if (entry.type !== "embedding") throw invalidRequest(`'${asked}' is a ${entry.type} model; a corpus needs an embedding model`, "model_not_embedding", "embedding_model");
    return { entry, name: asked };
  }

  /** A local model file's sha256 (computed once per file version); null for a remote model. */
  private async modelSha256(entry: ModelEntry): Promise<string | null> {
    if (!isLocal(entry)) return null;
    const file = entry.gguf.path;
    const info = await stat(file);
    const key = `${file}:${info.size}:${info.mtimeMs}`;
    let hash = this.hashes.get(key);
    if (!hash) {
      hash = (async () => {
        const h = createHash("sha256");
        for await (const chunk of createReadStream(file)) h.update(chunk as Buffer);
        return h.digest("hex");
      })();
      this.hashes.set(key, hash);
      hash.catch(() => this.hashes.delete(key));
    }
    return hash;
  }

  private async decryption(options: { passphrase?: string | undefined }): Promise<BundleDecryption> {
    return { ...(options.passphrase !== undefined ? { passphrase: options.passphrase } : {}), identities: [(await this.instanceIdentity()).identity] };
  }

  private bundleFile(id: string): string {
    return path.join(this.importsDir, `${id}.bundle`);
  }

  private async load(principal: Principal, id: string): Promise<StagedRecord> {
    if (!/^imp_[0-9a-f]{32}$/.test(id)) throw notFound(`No import '${id}'`, "import_not_found", "import_id");
    let staged: StagedRecord;
    try {
      staged = JSON.parse(await readFile(path.join(this.importsDir, `${id}.json`), "utf8")) as StagedRecord;
    } catch {
      throw notFound(`No import '${id}'`, "import_not_found", "import_id");
    }
    if (staged.preview.workspaceId !== principal.workspaceId || staged.preview.expiresAt <= nowSeconds()) throw notFound(`No import '${id}'`, "import_not_found", "import_id");
    return staged;
  }

  private async save(staged: StagedRecord): Promise<void> {
    const file = path.join(this.importsDir, `${staged.preview.id}.json`);
    await writeFile(`${file}.tmp`, JSON.stringify(staged), { mode: 0o600 });
    await rename(`${file}.tmp`, file);
  }

  private async remove(id: string): Promise<void> {
    await rm(this.bundleFile(id), { force: true });
    await rm(path.join(this.importsDir, `${id}.json`), { force: true });
  }

  private record(principal: Principal, type: "corpus.export" | "corpus.import", outcome: "success" | "failure", requestId: string | null, data: Record<string, unknown>): void {
    this.deps.audit.record({ type, workspaceId: principal.workspaceId, actor: actorOf(principal), outcome, requestId, data });
  }
}

function checkEncryption(encryption: BundleEncryption): void {
  if ("passphrase" in encryption) {
    if (encryption.passphrase.length < MIN_PASSPHRASE_LENGTH) {
      throw invalidRequest(`A bundle's passphrase has at least ${MIN_PASSPHRASE_LENGTH} characters (four or five random words are better).`, "passphrase_too_short", "passphrase");
    }
    return;
  }
  if (encryption.recipients.length === 0) throw invalidRequest("Name a passphrase or at least one recipient (age1…).", "bundle_recipient_missing", "recipients");
  for (const [i, r] of encryption.recipients.entries()) {
    if (!/^age1[02-9ac-hj-np-z]{58}$/.test(r)) throw invalidRequest(`'${r.slice(0, 80)}' is not an age X25519 recipient (age1…, 62 characters).`, "bundle_recipient_invalid", `recipients.${i}`);
  }
}

function slug(name: string): string {
  const s = name.normalize("NFKD").replace(/[^\w\s-]/g, "").trim().replace(/\s+/g, "-").toLowerCase().slice(0, 80);
  return s || "corpus";
}
