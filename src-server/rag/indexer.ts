/**
 * The indexing worker: takes queued documents (the queue is the `documents` table, so it
 * survives crashes), parses, chunks, embeds in batches, and commits each document's chunks
 * wholly or not at all. After a kill, documents left `processing` go back to the queue; no
 * chunk is lost, duplicated or orphaned.
 *
 * Many small documents (an abstracts collection, a mailbox's messages) go through a
 * pipeline (`batchDocuments` above 1, indexing-pipeline.ts): documents are claimed and
 * parsed ahead while the engine embeds, the passages of several documents of one embedding
 * model are embedded in one engine call, and each group is committed in one transaction
 * while the next is embedded. Each document's status stays its own: one that fails fails
 * alone, one deleted meanwhile is skipped. `batchDocuments: 1` indexes one document at a
 * time, start to end (the path the pipeline is measured against).
 */
import type { Logger } from "pino";
import type { InferenceEngine } from "../engine/types.js";
import { newId, nowSeconds } from "../ids.js";
import type { ModelEntry, ModelRegistry } from "../models/model-registry.js";
import { embeddingInput } from "../models/embedding-prompts.js";
import type { CorpusKeyring } from "../security/corpus-keyring.js";
import type { DataCipher } from "../security/data-cipher.js";
import type { EncryptedBlobStore } from "../security/encrypted-blob-store.js";
import type { ChunkStore, SealedChunk } from "../store/chunk-store.js";
import type { CorpusStore } from "../store/corpus-store.js";
import type { DocumentRecord, DocumentStore } from "../store/document-store.js";
import { sealContent, sealTerms, sealVector } from "./chunk-codec.js";
import { CONTEXT_MAX_TOKENS, fitContext, passageContext, withContext } from "./chunking/passage-context.js";
import { analyzeChunk } from "./retrieval/keyword-analysis.js";
import { chunkDocument } from "./chunking/chunk-document.js";
import type { ChunkDraft, SemanticBreakpoints } from "./chunking/types.js";
import type { CorpusEvents, StageTimings } from "./corpus-events.js";
import { ParserPool } from "./ingest/parse-document.js";
import { parseSettingsOf, type OcrServerSettings } from "./ingest/parse-settings.js";
import { ocrSummary, sealOcrPages } from "./ocr-codec.js";
import { ParseError, type EmbeddedFile, type ParsedDocument } from "./ingest/types.js";
import { runPipeline, type PipelineLimits } from "./indexing-pipeline.js";
import type { IndexedChunk } from "./retrieval/corpus-index.js";
import type { CorpusIndexes } from "./retrieval/corpus-indexes.js";
import type { IndexJobs } from "./index-queue.js";

/** Pause before the queue is read again after the store failed to answer. */
const STORE_RETRY_MS = 2000;
/** Jobs a replica takes at once (pipelined). */
const REPLICA_JOB_BATCH = 4;

export interface IndexerOptions {
  /** How scans are read: the server's data folder (the built-in engine's language data) and the engine wanted. */
  ocr?: OcrServerSettings | undefined;
  /** Chunk size aimed for, in tokens. */
  targetTokens: number;
  /** Hard cap per chunk (further capped by the embedding model's input length). */
  maxTokens: number;
  /** Fixed-window overlap, in tokens. */
  overlapTokens: number;
  /** Semantic chunking: how topic shifts are found (default lexical). */
  semanticBreakpoints?: SemanticBreakpoints | undefined;
  /** Chunks embedded per engine call for a document indexed on its own. */
  embedBatch: number;
  /**
   * Documents indexed as one group: their passages embedded in one engine call, committed in
   * one transaction. 1 (the default): one document at a time, start to end.
   */
  batchDocuments?: number | undefined;
  /** Documents claimed and parsed ahead of the group being embedded (pipelined only). Default 16. */
  parseAhead?: number | undefined;
  /** Passages a group holds at most; a document with more is embedded on its own, beside the groups. Default 256. */
  maxGroupChunks?: number | undefined;
  /** Bytes of originals parsed ahead at most (pipelined only). Default 64 MiB. */
  parseAheadBytes?: number | undefined;
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
  /** Files a parsed document carries that become documents of their own (an e-mail's attachments, a mailbox's messages). */
  embedded?: { stage(document: DocumentRecord, files: EmbeddedFile[]): Promise<void> } | undefined;
}

/** A document parsed and chunked, waiting for its passages' vectors. */
export interface PreparedDocument {
  document: DocumentRecord;
  model: ModelEntry;
  /** The prompt the corpus's passages are embedded with (e.g. "passage: "). */
  prompt: string;
  cipher: DataCipher;
  pageCount: number | null;
  /** Pages read by OCR, if any (stored with the document's commit). */
  ocr: ParsedDocument["ocr"];
  drafts: ChunkDraft[];
  /** Each passage's context line ("" for none). */
  contexts: string[];
  /** What is embedded and keyword-analysed of each passage: its context line and text. */
  texts: string[];
  timings: StageTimings;
}

type Stage = "parsing" | "chunking" | "embedding" | "storing";

export class Indexer {
  private wakeUp: (() => void) | null = null;
  /** Set by `wake()`: work was queued since the loop last looked (the look is a query: a wake-up can come during it). */
  private woken = false;
  /** Wake-ups so far (a running pipeline looks for queued work again when it changes). */
  private wakes = 0;
  /** Tells a running pipeline that work was queued. */
  private nudge: (() => void) | null = null;
  private running: Promise<void> | null = null;
  private readonly abort = new AbortController();
  /** Parse workers kept from one document to the next (starting one costs more than most parses). */
  private readonly parsers: ParserPool;
  private readonly limits: PipelineLimits;

  constructor(
    private readonly deps: IndexerDeps,
    private readonly options: IndexerOptions,
  ) {
    this.parsers = new ParserPool({ ...(options.parseMemoryMb ? { maxMemoryMb: options.parseMemoryMb } : {}), ...(options.parserModule ? { parserModule: options.parserModule } : {}) });
    this.limits = {
      batchDocuments: Math.max(1, options.batchDocuments ?? 1),
      parseAhead: Math.max(1, options.parseAhead ?? 16),
      maxGroupChunks: Math.max(1, options.maxGroupChunks ?? 256),
      parseAheadBytes: Math.max(1, options.parseAheadBytes ?? 64 * 1024 * 1024),
    };
  }

  private get pipelined(): boolean {
    return this.limits.batchDocuments > 1;
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
    this.wakes++;
    this.wakeUp?.();
    this.nudge?.();
    if (this.deps.replicas && documentIds.length > 0) {
      // A lost hand-out is not lost work: the sweep sends jobs for documents queued without one.
      this.deps.replicas.jobs.send(documentIds).catch((error: unknown) => this.deps.logger.warn({ err: error, documents: documentIds.length }, "indexing queue: jobs not sent; the sweep will send them"));
    }
  }

  /** Stops after the current documents' current step; unfinished work stays queued (or `processing`, requeued at the next start). */
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
    // A few jobs at a time: enough for a group, few enough that an upload spreads over the
    // replicas (another replica's engine adds more than a larger group does).
    const batch = Math.min(this.limits.batchDocuments, REPLICA_JOB_BATCH);
    while (!(await this.whileStoreAnswers(() => replicas.jobs.start((documentIds) => this.indexJobs(documentIds, replicas.claimant), batch).then(() => true)))) {
      if (this.abort.signal.aborted) return;
    }
    const sweep = () => void this.sweep(replicas).catch((error: unknown) => this.deps.logger.warn({ err: error }, "indexing queue: sweeping abandoned work failed"));
    sweep();
    this.sweeper = setInterval(sweep, replicas.sweepEveryMs ?? 10_000);
    this.sweeper.unref();
  }

  /** A batch of jobs: claims the documents (those another replica has, or gone or done, are skipped) and indexes them. */
  private async indexJobs(documentIds: string[], claimant: string): Promise<void> {
    if (this.abort.signal.aborted) throw new Error("indexer stopping"); // the jobs are retried elsewhere
    if (!this.pipelined) {
      for (const documentId of documentIds) {
        if (this.abort.signal.aborted) throw new Error("indexer stopping");
        await this.indexJob(documentId, claimant);
      }
      return;
    }
    const claimed = await this.deps.documents.claimMany(documentIds, claimant, nowSeconds());
    await this.pipeline((room, bytes) => Promise.resolve(claimed.splice(0, within(claimed.slice(0, room), bytes))), claimant);
  }

  /** One job: claims the document (unless another replica has it, or it is gone or done) and indexes it. */
  private async indexJob(documentId: string, claimant: string): Promise<void> {
    const document = await this.deps.documents.claim(documentId, claimant, nowSeconds());
    if (!document) return;
    await this.indexAlone(document, claimant);
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

  /** Marks a document failed (unless the indexer is stopping: it is then left `processing`, requeued later). */
  private async fail(document: DocumentRecord, error: unknown, claimant?: string): Promise<void> {
    if (this.abort.signal.aborted) return;
    const code = error instanceof ParseError ? error.code : "indexing_failed";
    const message = error instanceof Error ? error.message : String(error);
    // A file that cannot be parsed is the file's problem (a warning with its reason); anything else is ours.
    const where = { documentId: document.id, corpusId: document.corpusId, filename: document.filename, code };
    if (error instanceof ParseError) this.deps.logger.warn({ ...where, reason: message }, "document failed to index");
    else this.deps.logger.error({ ...where, err: error }, "document failed to index");
    // Left `processing` if the store does not answer: requeued at next start (or by the sweep).
    const marked = await this.whileStoreAnswers(() => this.deps.documents.markFailed(document.id, { code, message }, nowSeconds(), claimant));
    if (marked !== false && marked !== null) this.deps.events.publish(document.corpusId, { type: "document.status", documentId: document.id, status: "failed", error: { code, message }, chunkCount: 0 });
  }

  private async loop(): Promise<void> {
    while (!this.abort.signal.aborted) {
      this.woken = false;
      if (this.pipelined) {
        // Runs until nothing is queued and every document taken is done.
        await this.pipeline((room, bytes) => this.whileStoreAnswers(() => this.deps.documents.claimQueued(room, nowSeconds(), bytes)));
        if (this.woken || this.abort.signal.aborted) continue;
      } else {
        const document = await this.whileStoreAnswers(() => this.deps.documents.claimNext(nowSeconds()));
        if (document === null) continue; // stopping, or the store did not answer: tried again
        if (document) {
          await this.indexAlone(document);
          continue;
        }
        if (this.woken) continue;
      }
      await new Promise<void>((resolve) => (this.wakeUp = resolve));
      this.wakeUp = null;
    }
  }

  /** Pipelines the documents `take` hands out (claimed, `processing`) until it has none left and they are done. */
  private async pipeline(take: (room: number, bytes: number) => Promise<DocumentRecord[] | null>, claimant?: string): Promise<void> {
    await runPipeline(
      {
        take,
        wakes: () => this.wakes,
        onNudge: (nudge) => (this.nudge = nudge),
        prepare: (document, turn) => this.prepare(document, turn),
        embedGroup: (group) => this.embedGroup(group),
        embedAlone: (prepared) => this.embedAlone(prepared),
        store: (group, vectors) => this.store(group, vectors, claimant),
        fail: (document, error) => this.fail(document, error, claimant),
        logger: this.deps.logger,
      },
      this.limits,
      this.abort.signal,
    );
    this.nudge = null;
  }

  /** One document start to end: parsed, chunked, embedded in batches, committed. */
  private async indexAlone(document: DocumentRecord, claimant?: string): Promise<void> {
    try {
      const prepared = await this.prepare(document);
      if (!prepared) return; // its corpus was deleted meanwhile
      await this.store([prepared], [await this.embedAlone(prepared)], claimant);
    } catch (error) {
      await this.fail(document, error, claimant); // not while stopping: left `processing`, requeued at the next start
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

  private progress(document: DocumentRecord, stage: Stage, done: number, total: number, ocr = false): void {
    this.deps.events.publish(document.corpusId, { type: "document.progress", documentId: document.id, stage, done, total, ...(ocr ? { ocr } : {}) });
  }

  /**
   * Parses and chunks a document; null when its corpus was deleted meanwhile. `turn` (the
   * pipeline) runs the parse when the documents claimed before it have been parsed, so
   * originals are read one at a time and the parse time is the document's own.
   */
  private async prepare(document: DocumentRecord, turn?: <T>(work: () => Promise<T>) => Promise<T>): Promise<PreparedDocument | null> {
    const { corpusId } = document;
    const corpus = await this.deps.corpora.getAny(corpusId);
    if (!corpus) return null;
    this.deps.events.publish(corpusId, { type: "document.status", documentId: document.id, status: "processing", error: null, chunkCount: 0 });
    this.progress(document, "parsing", 0, 1);
    const timings: StageTimings = { parseMs: 0, chunkMs: 0, embedMs: 0, embedTokens: 0, storeMs: 0, pages: null };
    const parse = async (): Promise<ParsedDocument> => {
      if (this.abort.signal.aborted) throw new Error("indexer stopping");
      const started = performance.now();
      const bytes = await this.deps.blobs.read(corpusId, document.id);
      // The plaintext goes to the parse worker without a copy when it can (it is not needed here after).
      const parsed = await this.parsers.parse(new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength), document.format, {
        timeoutMs: this.options.parseTimeoutMs,
        transfer: true,
        signal: this.abort.signal,
        settings: parseSettingsOf(corpus, this.options.ocr),
        // The parsers report progress only for pages they read by OCR.
        onProgress: (done, total) => this.progress(document, "parsing", done, total, true),
      });
      if (bytes.byteLength > 0) bytes.fill(0); // a copy was parsed (the buffer could not be handed over)
      timings.parseMs = performance.now() - started;
      return parsed;
    };
    const parsed = turn ? await turn(parse) : await parse();
    timings.pages = parsed.pageCount;
    if (parsed.embedded?.length) await this.deps.embedded?.stage(document, parsed.embedded);

    const chunkStarted = performance.now();
    const cipher = await this.deps.keyring.cipher(corpusId);
    const model = this.deps.registry.resolve(corpus.embeddingModel, "embedding_model");
    // Passages go in with the prompt the corpus was created with (e.g. "passage: ").
    const prompt = corpus.embeddingPrompts.document;
    const tokenizer = await this.deps.engine.acquireTokenizer(model);
    try {
      this.progress(document, "chunking", 0, 1);
      /** Sentence embeddings while chunking (topic shifts from embeddings): their time counts as embedding. */
      const embed = async (texts: string[]) => {
        const started = performance.now();
        const { vectors, tokens } = await this.embedTexts(model, prompt, texts);
        timings.embedMs += performance.now() - started;
        timings.embedTokens += tokens;
        return vectors;
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
        { countTokens: (text) => tokenizer.countTokens(text), embed },
      );
      const contexts = drafts.map((d) => fitContext(passageContext(parsed.title, d.headingPath, d.text), contextTokens, (text) => tokenizer.countTokens(text)));
      const texts = drafts.map((d, i) => withContext(contexts[i], d.text));
      timings.chunkMs = performance.now() - chunkStarted - timings.embedMs;
      return { document, model, prompt, cipher, pageCount: parsed.pageCount, ocr: parsed.ocr, drafts, contexts, texts, timings };
    } finally {
      tokenizer.release();
    }
  }

  /** Embeds texts with a corpus's prompt, `embedBatch` per engine call; `onBatch` hears each call start. */
  private async embedTexts(model: ModelEntry, prompt: string, texts: string[], onBatch?: (done: number) => void): Promise<{ vectors: Float32Array[]; tokens: number }> {
    const vectors: Float32Array[] = [];
    let tokens = 0;
    for (let i = 0; i < texts.length; i += this.options.embedBatch) {
      onBatch?.(i);
      const batch = texts.slice(i, i + this.options.embedBatch).map((text) => embeddingInput(prompt, text));
      const result = await this.deps.engine.embed(model, batch, this.abort.signal);
      vectors.push(...result.vectors);
      tokens += result.promptTokens;
    }
    return { vectors, tokens };
  }

  /** A document's passages embedded on their own, `embedBatch` per engine call, with progress. */
  private async embedAlone(prepared: PreparedDocument): Promise<Float32Array[]> {
    const started = performance.now();
    const { document, texts } = prepared;
    const { vectors, tokens } = await this.embedTexts(prepared.model, prepared.prompt, texts, (done) => this.progress(document, "embedding", done, texts.length));
    prepared.timings.embedMs += performance.now() - started;
    prepared.timings.embedTokens += tokens;
    return vectors;
  }

  /**
   * The passages of a group of documents (one embedding model) in one engine call, so the
   * engine evaluates several documents' passages together. Returns each document's vectors,
   * or the error that failed it: when the call fails, each document is embedded on its own,
   * so a document whose passages cannot be embedded fails alone. The call's time and tokens
   * are shared among the documents by their passages.
   */
  private async embedGroup(group: PreparedDocument[]): Promise<(Float32Array[] | Error)[]> {
    const total = group.reduce((sum, p) => sum + p.texts.length, 0);
    for (const p of group) this.progress(p.document, "embedding", 0, p.texts.length);
    const started = performance.now();
    let vectors: Float32Array[];
    let tokens: number;
    try {
      const inputs = group.flatMap((p) => p.texts.map((text) => embeddingInput(p.prompt, text)));
      ({ vectors, promptTokens: tokens } = await this.deps.engine.embed(group[0]!.model, inputs, this.abort.signal));
    } catch (error) {
      if (this.abort.signal.aborted || group.length === 1) return group.map(() => asError(error));
      this.deps.logger.warn({ err: error, documents: group.length }, "a group's passages could not be embedded together; embedding each document on its own");
      const each: (Float32Array[] | Error)[] = [];
      for (const p of group) each.push(await this.embedAlone(p).catch(asError));
      return each;
    }
    const elapsed = performance.now() - started;
    let at = 0;
    return group.map((p) => {
      p.timings.embedMs += (elapsed * p.texts.length) / Math.max(1, total);
      p.timings.embedTokens += (tokens * p.texts.length) / Math.max(1, total);
      const mine = vectors.slice(at, at + p.texts.length);
      at += p.texts.length;
      return mine;
    });
  }

  /**
   * Seals and commits documents with their vectors (one transaction for the group; each
   * document's status its own), adds their chunks to the corpora's in-memory indexes and
   * tells each document's watchers. A document deleted meanwhile, or (replicas) no longer
   * held by `claimant`, commits nothing and says nothing. The time is shared among the
   * documents by their passages.
   * @throws when the store fails (the caller fails the documents, or retries them alone)
   */
  private async store(group: PreparedDocument[], vectors: Float32Array[][], claimant?: string): Promise<void> {
    const started = performance.now();
    const sealed = group.map((p, g) => {
      this.progress(p.document, "storing", p.drafts.length, p.drafts.length);
      const analysed = p.texts.map((text) => analyzeChunk(text));
      const chunks: SealedChunk[] = p.drafts.map((draft, i) => {
        const id = newId("chk_");
        return {
          id,
          corpusId: p.document.corpusId,
          documentId: p.document.id,
          index: draft.index,
          start: draft.start,
          end: draft.end,
          pageStart: draft.pageStart,
          pageEnd: draft.pageEnd,
          tokenCount: draft.tokenCount,
          content: sealContent(p.cipher, id, { text: draft.text, headingPath: draft.headingPath, ...(draft.pageBreaks.length > 0 ? { pageBreaks: draft.pageBreaks } : {}), ...(p.contexts[i] ? { context: p.contexts[i] } : {}) }),
          vector: sealVector(p.cipher, id, vectors[g]![i]!),
          terms: sealTerms(p.cipher, id, analysed[i]!),
        };
      });
      return { chunks, analysed };
    });
    if (this.abort.signal.aborted) throw new Error("indexer stopping");
    const committed = new Set(
      await this.deps.chunks.commitDocuments(
        group.map((p, g) => ({
          documentId: p.document.id,
          corpusId: p.document.corpusId,
          chunks: sealed[g]!.chunks,
          pageCount: p.pageCount,
          ocr: p.ocr ? { summary: ocrSummary(p.ocr), pages: sealOcrPages(p.cipher, p.document.id, p.ocr) } : null,
        })),
        nowSeconds(),
        claimant,
      ),
    );
    // Into the in-memory indexes, one addition per corpus.
    const byCorpus = new Map<string, IndexedChunk[]>();
    group.forEach((p, g) => {
      if (!committed.has(p.document.id)) return;
      const rows = byCorpus.get(p.document.corpusId) ?? [];
      sealed[g]!.chunks.forEach((c, i) => rows.push({ id: c.id, documentId: c.documentId, vector: vectors[g]![i]!, ...sealed[g]!.analysed[i]! }));
      byCorpus.set(p.document.corpusId, rows);
    });
    for (const [corpusId, rows] of byCorpus) await this.deps.indexes.addChunks(corpusId, rows);
    const elapsed = performance.now() - started;
    const total = group.reduce((sum, p) => sum + p.drafts.length, 0);
    for (const p of group) {
      if (!committed.has(p.document.id)) continue;
      p.timings.storeMs += (elapsed * p.drafts.length) / Math.max(1, total);
      this.deps.events.publish(p.document.corpusId, { type: "document.status", documentId: p.document.id, status: "indexed", error: null, chunkCount: p.drafts.length, timings: p.timings });
    }
  }
}

/** How many of `documents`, from the first, have originals adding up to at most `maxBytes` (the first always). */
function within(documents: readonly DocumentRecord[], maxBytes: number): number {
  let bytes = 0;
  let count = 0;
  for (const d of documents) {
    if (count > 0 && bytes + d.bytes > maxBytes) break;
    bytes += d.bytes;
    count++;
  }
  return count;
}

function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}
