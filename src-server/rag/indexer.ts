/**
 * The indexing worker: takes queued documents one at a time (the queue is the
 * `documents` table, so it survives crashes), parses, chunks, embeds in batches, and
 * commits all of a document's chunks in one transaction. After a kill, documents left
 * `processing` go back to the queue; no chunk is lost, duplicated or orphaned.
 */
import type { Logger } from "pino";
import type { InferenceEngine } from "../engine/types.js";
import { newId, nowSeconds } from "../ids.js";
import type { ModelRegistry } from "../models/model-registry.js";
import { embeddingInput } from "../models/embedding-prompts.js";
import type { CorpusKeyring } from "../security/corpus-keyring.js";
import type { EncryptedBlobStore } from "../security/encrypted-blob-store.js";
import type { ChunkStore, SealedChunk } from "../store/chunk-store.js";
import type { CorpusStore } from "../store/corpus-store.js";
import type { DocumentRecord, DocumentStore } from "../store/document-store.js";
import { sealContent, sealTerms, sealVector } from "./chunk-codec.js";
import { CONTEXT_MAX_TOKENS, fitContext, passageContext, withContext } from "./chunking/passage-context.js";
import { analyzeChunk } from "./retrieval/keyword-analysis.js";
import { chunkDocument } from "./chunking/chunk-document.js";
import type { SemanticBreakpoints } from "./chunking/types.js";
import type { CorpusEvents } from "./corpus-events.js";
import { ParserPool } from "./ingest/parse-document.js";
import { ParseError } from "./ingest/types.js";
import type { CorpusIndexes } from "./retrieval/corpus-indexes.js";
import type { IndexJobs } from "./index-queue.js";

/** Pause before the queue is read again after the store failed to answer. */
const STORE_RETRY_MS = 2000;

export interface IndexerOptions {
  /** Chunk size aimed for, in tokens. */
  targetTokens: number;
  /** Hard cap per chunk (further capped by the embedding model's input length). */
  maxTokens: number;
  /** Fixed-window overlap, in tokens. */
  overlapTokens: number;
  /** Semantic chunking: how topic shifts are found (default lexical). */
  semanticBreakpoints?: SemanticBreakpoints | undefined;
  /** Chunks embedded per engine call. */
  embedBatch: number;
  /** Parser limits for hostile input. */
  parseTimeoutMs: number;
  /** Heap limit of a parse worker, in MiB (default: `ParserPool`'s). */
  parseMemoryMb?: number | undefined;
  /** URL of the parser module for the parse worker (bundled builds); default: beside the parser. */
  parserModule?: string | undefined;
}

export interface IndexerDeps {
  corpora: CorpusStore;
  documents: DocumentStore;
  chunks: ChunkStore;
  blobs: EncryptedBlobStore;
  keyring: CorpusKeyring;
  indexes: CorpusIndexes;
  events: CorpusEvents;
  registry: ModelRegistry;
  engine: InferenceEngine;
  logger: Logger;
  /**
   * Replicas sharing a store: the durable job queue, this replica's name (its claims), the
   * replicas alive (their heartbeats) and a lease so one replica at a time sweeps up
   * abandoned work. Without it (a lone server) documents are taken from the store directly.
   */
  replicas?: {
    jobs: IndexJobs;
    claimant: string;
    liveReplicas: () => Promise<string[]>;
    sweepLease: () => Promise<boolean>;
    sweepEveryMs?: number;
  } | undefined;
  /** Fixed windows of its own size for a document that asked for them (a vector-store file's static chunking); null: as its corpus says. */
  chunkingOf?: ((documentId: string) => Promise<{ targetTokens: number; overlapTokens: number } | null>) | undefined;
}

export class Indexer {
  private wakeUp: (() => void) | null = null;
  /** Set by `wake()`: work was queued since the loop last looked (the look is a query: a wake-up can come during it). */
  private woken = false;
  private running: Promise<void> | null = null;
  private readonly abort = new AbortController();
  /** Parse workers kept from one document to the next (starting one costs more than most parses). */
  private readonly parsers: ParserPool;

  constructor(
    private readonly deps: IndexerDeps,
    private readonly options: IndexerOptions,
  ) {
    this.parsers = new ParserPool({ ...(options.parseMemoryMb ? { maxMemoryMb: options.parseMemoryMb } : {}), ...(options.parserModule ? { parserModule: options.parserModule } : {}) });
  }

  /** Requeues interrupted work and starts the loop (or, for replicas, starts taking jobs). */
  start(): void {
    const replicas = this.deps.replicas;
    if (replicas) {
      this.running ??= this.startJobs(replicas);
      return;
    }
    this.running ??= (async () => {
      const requeued = await this.whileStoreAnswers(() => this.deps.documents.requeueInterrupted(nowSeconds()));
      if (requeued) this.deps.logger.info({ requeued }, "resuming interrupted indexing");
      await this.loop();
    })();
  }

  /** New work was queued (these documents, `queued` in the store). */
  wake(documentIds: string[] = []): void {
    this.woken = true;
    this.wakeUp?.();
    if (this.deps.replicas && documentIds.length > 0) {
      // A lost hand-out is not lost work: the sweep sends jobs for documents queued without one.
      this.deps.replicas.jobs.send(documentIds).catch((error: unknown) => this.deps.logger.warn({ err: error, documents: documentIds.length }, "indexing queue: jobs not sent; the sweep will send them"));
    }
  }

  /** Stops after the current document's current step; unfinished work stays queued. */
  async close(): Promise<void> {
    this.abort.abort();
    this.wake();
    if (this.sweeper) clearInterval(this.sweeper);
    // A replica's job still running is given up with it: its document is handed back by the sweep.
    await this.deps.replicas?.jobs.stop(2_000).catch((error: unknown) => this.deps.logger.warn({ err: error }, "indexing queue did not stop cleanly"));
    await this.running;
    await this.parsers.close();
  }

  private sweeper: NodeJS.Timeout | null = null;

  /** Replicas: takes jobs from the shared queue, and sweeps up abandoned work now and then. */
  private async startJobs(replicas: NonNullable<IndexerDeps["replicas"]>): Promise<void> {
    // The queue starts when Postgres answers (it may be restarting as this replica starts).
    while (!(await this.whileStoreAnswers(() => replicas.jobs.start((documentId) => this.indexJob(documentId, replicas.claimant)).then(() => true)))) {
      if (this.abort.signal.aborted) return;
    }
    const sweep = () => void this.sweep(replicas).catch((error: unknown) => this.deps.logger.warn({ err: error }, "indexing queue: sweeping abandoned work failed"));
    sweep();
    this.sweeper = setInterval(sweep, replicas.sweepEveryMs ?? 10_000);
    this.sweeper.unref();
  }

  /** One job: claims the document (unless another replica has it, or it is gone or done) and indexes it. */
  private async indexJob(documentId: string, claimant: string): Promise<void> {
    if (this.abort.signal.aborted) throw new Error("indexer stopping"); // the job is retried elsewhere
    const document = await this.deps.documents.claim(documentId, claimant, nowSeconds());
    if (!document) return;
    try {
      await this.index(document, claimant);
    } catch (error) {
      if (this.abort.signal.aborted) return; // left `processing`: the sweep hands it back
      await this.fail(document, error, claimant);
    }
  }

  /** Hands back the documents of replicas that died, and sends jobs for queued documents that have none. */
  async sweep(replicas: NonNullable<IndexerDeps["replicas"]>): Promise<{ requeued: number; resent: number }> {
    if (!(await replicas.sweepLease())) return { requeued: 0, resent: 0 };
    const live = [...new Set([...(await replicas.liveReplicas()), replicas.claimant])];
    const requeued = await this.deps.documents.requeueAbandoned(live, nowSeconds());
    if (requeued.length > 0) this.deps.logger.warn({ documents: requeued.length }, "handing back documents whose replica stopped mid-way");
    const pending = await replicas.jobs.pending();
    const orphaned = (await this.deps.documents.queuedBefore(nowSeconds() - 5)).filter((id) => !pending.has(id));
    const resend = [...new Set([...requeued, ...orphaned])];
    await replicas.jobs.send(resend);
    return { requeued: requeued.length, resent: resend.length };
  }

  private async fail(document: DocumentRecord, error: unknown, claimant?: string): Promise<void> {
    const code = error instanceof ParseError ? error.code : "indexing_failed";
    const message = error instanceof Error ? error.message : String(error);
    // A file that cannot be parsed is the file's problem (a warning with its reason); anything else is ours.
    const where = { documentId: document.id, corpusId: document.corpusId, filename: document.filename, code };
    if (error instanceof ParseError) this.deps.logger.warn({ ...where, reason: message }, "document failed to index");
    else this.deps.logger.error({ ...where, err: error }, "document failed to index");
    // Left `processing` if the store does not answer: requeued at next start (or by the sweep).
    const marked = await this.whileStoreAnswers(() => this.deps.documents.markFailed(document.id, { code, message }, nowSeconds(), claimant));
    if (marked !== false) this.deps.events.publish(document.corpusId, { type: "document.status", documentId: document.id, status: "failed", error: { code, message }, chunkCount: 0 });
  }

  private async loop(): Promise<void> {
    while (!this.abort.signal.aborted) {
      this.woken = false;
      const document = await this.whileStoreAnswers(() => this.deps.documents.claimNext(nowSeconds()));
      if (document === null) continue; // stopping, or the store did not answer: tried again
      if (!document) {
        if (this.woken) continue;
        await new Promise<void>((resolve) => (this.wakeUp = resolve));
        this.wakeUp = null;
        continue;
      }
      try {
        await this.index(document);
      } catch (error) {
        if (this.abort.signal.aborted) return; // left `processing`: requeued at next start
        await this.fail(document, error);
      }
    }
  }

  /**
   * Runs a queue operation; when the store's database does not answer (Postgres restarting,
   * unreachable), logs it and returns null after a pause instead of ending the loop.
   */
  private async whileStoreAnswers<T>(operation: () => Promise<T>): Promise<T | null> {
    try {
      return await operation();
    } catch (error) {
      if (this.abort.signal.aborted) return null;
      this.deps.logger.error({ err: error }, "indexing queue: the store did not answer; retrying");
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, STORE_RETRY_MS);
        this.abort.signal.addEventListener("abort", () => (clearTimeout(timer), resolve()), { once: true });
      });
      return null;
    }
  }

  private async index(document: DocumentRecord, claimant?: string): Promise<void> {
    const { corpusId } = document;
    const corpus = await this.deps.corpora.getAny(corpusId);
    if (!corpus) return; // deleted meanwhile
    const progress = (stage: "parsing" | "chunking" | "embedding" | "storing", done: number, total: number) =>
      this.deps.events.publish(corpusId, { type: "document.progress", documentId: document.id, stage, done, total });
    this.deps.events.publish(corpusId, { type: "document.status", documentId: document.id, status: "processing", error: null, chunkCount: 0 });

    const timings = { parseMs: 0, chunkMs: 0, embedMs: 0, storeMs: 0, pages: null as number | null };
    let mark = performance.now();
    const lap = (stage: "parseMs" | "chunkMs" | "embedMs" | "storeMs") => {
      const now = performance.now();
      timings[stage] += now - mark;
      mark = now;
    };
    progress("parsing", 0, 1);
    const cipher = await this.deps.keyring.cipher(corpusId);
    const bytes = await this.deps.blobs.read(corpusId, document.id);
    // The plaintext goes to the parse worker without a copy when it can (it is not needed here after).
    const parsed = await this.parsers.parse(new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength), document.format, {
      timeoutMs: this.options.parseTimeoutMs,
      transfer: true,
      signal: this.abort.signal,
    });
    if (bytes.byteLength > 0) bytes.fill(0); // a copy was parsed (the buffer could not be handed over)
    timings.pages = parsed.pageCount;
    lap("parseMs");

    const model = this.deps.registry.resolve(corpus.embeddingModel, "embedding_model");
    const tokenizer = await this.deps.engine.acquireTokenizer(model);
    try {
      progress("chunking", 0, 1);
      const signal = this.abort.signal;
      // Passages go in with the prompt the corpus was created with (e.g. "passage: ").
      const prompt = corpus.embeddingPrompts.document;
      /** Embeds in batches; the time before it counts as chunking, its own as embedding. */
      const embed = async (texts: string[], onBatch?: (done: number) => void) => {
        lap("chunkMs");
        const out: Float32Array[] = [];
        for (let i = 0; i < texts.length; i += this.options.embedBatch) {
          onBatch?.(i);
          const batch = texts.slice(i, i + this.options.embedBatch).map((text) => embeddingInput(prompt, text));
          out.push(...(await this.deps.engine.embed(model, batch, signal)).vectors);
        }
        lap("embedMs");
        return out;
      };
      const promptTokens = prompt ? tokenizer.countTokens(prompt) : 0;
      // A document with a title or headings gives its passages a context line (passage-context.ts): room is kept for it.
      const contextTokens = parsed.title || parsed.blocks.some((b) => b.kind === "heading") ? CONTEXT_MAX_TOKENS : 0;
      const windows = (await this.deps.chunkingOf?.(document.id)) ?? null;
      // Fixed windows asked for may exceed what the embedding model reads: they are cut to it.
      const maxTokens = Math.min(windows ? Number.POSITIVE_INFINITY : this.options.maxTokens, tokenizer.maxEmbeddingTokens - promptTokens - contextTokens);
      const targetTokens = Math.min(windows?.targetTokens ?? this.options.targetTokens, maxTokens);
      const drafts = await chunkDocument(
        parsed,
        { strategy: windows ? "fixed" : corpus.chunking, maxTokens, targetTokens, overlapTokens: windows ? Math.min(windows.overlapTokens, Math.floor(targetTokens / 2)) : this.options.overlapTokens, breakpoints: this.options.semanticBreakpoints },
        { countTokens: (text) => tokenizer.countTokens(text), embed: (texts) => embed(texts) },
      );
      const contexts = drafts.map((d) => fitContext(passageContext(parsed.title, d.headingPath, d.text), contextTokens, (text) => tokenizer.countTokens(text)));
      const vectors = await embed(
        drafts.map((d, i) => withContext(contexts[i], d.text)),
        (done) => progress("embedding", done, drafts.length),
      );
      progress("storing", drafts.length, drafts.length);
      const analysed = drafts.map((d, i) => analyzeChunk(withContext(contexts[i], d.text)));
      const sealed: SealedChunk[] = drafts.map((draft, i) => {
        const id = newId("chk_");
        return {
          id,
          corpusId,
          documentId: document.id,
          index: draft.index,
          start: draft.start,
          end: draft.end,
          pageStart: draft.pageStart,
          pageEnd: draft.pageEnd,
          tokenCount: draft.tokenCount,
          content: sealContent(cipher, id, { text: draft.text, headingPath: draft.headingPath, ...(draft.pageBreaks.length > 0 ? { pageBreaks: draft.pageBreaks } : {}), ...(contexts[i] ? { context: contexts[i] } : {}) }),
          vector: sealVector(cipher, id, vectors[i]!),
          terms: sealTerms(cipher, id, analysed[i]!),
        };
      });
      if (this.abort.signal.aborted) throw new Error("indexer stopping");
      if (!(await this.deps.documents.getById(document.id))) return; // deleted meanwhile
      // A replica presumed dead whose document went to another commits nothing (and says nothing).
      if (!(await this.deps.chunks.commitDocument(document.id, sealed, parsed.pageCount, nowSeconds(), claimant))) return;
      await this.deps.indexes.addChunks(corpusId, sealed.map((c, i) => ({ id: c.id, documentId: document.id, vector: vectors[i]!, ...analysed[i]! })));
      lap("storeMs");
      this.deps.events.publish(corpusId, { type: "document.status", documentId: document.id, status: "indexed", error: null, chunkCount: sealed.length, timings });
    } finally {
      tokenizer.release();
    }
  }
}
