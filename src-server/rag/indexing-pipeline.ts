/**
 * The indexing pipeline for many documents (the indexer with `batchDocuments` above 1).
 * Embedding is the costly step and the engine works on its own threads, so everything else
 * is done beside it:
 *
 * - documents are claimed ahead (at most `parseAhead`, and `parseAheadBytes` of originals)
 *   and parsed one after another in the parse worker, then chunked, while the engine embeds;
 * - the passages of the documents ready (up to `batchDocuments` documents and
 *   `maxGroupChunks` passages, one embedding model) are embedded in one engine call, so its
 *   batches hold several documents' passages;
 * - a group is committed in one transaction (each document's status its own) while the
 *   next group is embedded; at most two groups wait for their commit.
 *
 * A document with more passages than a group holds (a large PDF) is embedded on its own
 * beside the groups (one at a time), so it neither waits for nor holds up the small ones:
 * the engine takes turns between the two. A document that fails (its parse, its passages'
 * embedding, its commit) fails alone; the others of its group go on. Stopping leaves the
 * documents taken `processing`: they are requeued at the next start (or, replicas, by the
 * sweep).
 */
import type { Logger } from "pino";
import type { DocumentRecord } from "../store/document-store.js";
import type { PreparedDocument } from "./indexer.js";

export interface PipelineLimits {
  /** Documents a group holds at most. */
  batchDocuments: number;
  /** Documents taken ahead of the groups being embedded (parsed or waiting for their parse). */
  parseAhead: number;
  /** Passages a group holds at most; a document with more is embedded on its own. */
  maxGroupChunks: number;
  /**
   * Bytes of originals taken ahead at most, besides one larger document (taken while the
   * budget has room left): what is held ahead is at most the budget and one document.
   */
  parseAheadBytes: number;
}

/** What the pipeline does with documents (the indexer's steps). */
export interface PipelineSteps {
  /**
   * Takes up to `room` more documents (claimed: `processing`), oldest first, whose originals
   * add up to at most `bytes` (the oldest alone when it is larger); none only when no more
   * are queued, null when the store did not answer (asked again later).
   */
  take(room: number, bytes: number): Promise<DocumentRecord[] | null>;
  /** Wake-ups so far: once `take` found the queue empty, it is asked again when this changes. */
  wakes(): number;
  /** Registers the function that wakes the waiting pipeline when work is queued (null: none). */
  onNudge(nudge: (() => void) | null): void;
  /** Parses (in `turn`) and chunks a document; null when its corpus is gone. */
  prepare(document: DocumentRecord, turn: <T>(work: () => Promise<T>) => Promise<T>): Promise<PreparedDocument | null>;
  /** Each document's vectors, or the error that failed it. */
  embedGroup(group: PreparedDocument[]): Promise<(Float32Array[] | Error)[]>;
  embedAlone(prepared: PreparedDocument): Promise<Float32Array[]>;
  /** Commits a group (one transaction); throws when the store fails. */
  store(group: PreparedDocument[], vectors: Float32Array[][]): Promise<void>;
  fail(document: DocumentRecord, error: unknown): Promise<void>;
  logger: Logger;
}

type Outcome = { prepared: PreparedDocument } | { gone: true } | { error: unknown };

interface Slot {
  document: DocumentRecord;
  /** Bytes of its original, counted against `parseAheadBytes` until it joins a group. */
  weight: number;
  outcome: Outcome | null;
}

/** Groups waiting for their commit before the next group is formed. */
const MAX_PENDING_COMMITS = 2;

/** Runs the pipeline until `take` has nothing more and every document taken is done (or `signal` aborts). */
export async function runPipeline(steps: PipelineSteps, limits: PipelineLimits, signal: AbortSignal): Promise<void> {
  const ahead: Slot[] = [];
  // Parses run one at a time in the order documents were taken: the parse worker is one
  // thread, and an original is read only when its parse starts.
  let parsing: Promise<unknown> = Promise.resolve();
  const turn = <T>(work: () => Promise<T>): Promise<T> => {
    const run = parsing.then(work);
    parsing = run.catch(() => undefined);
    return run;
  };
  // Commits and failures, one after another (a group's events never interleave with another's).
  let commits: Promise<void> = Promise.resolve();
  let pendingCommits = 0;
  const afterCommits = (work: () => Promise<void>) => {
    pendingCommits++;
    commits = commits
      .then(work)
      .catch((error: unknown) => steps.logger.error({ err: error }, "indexing: committing a group failed"))
      .finally(() => {
        pendingCommits--;
        poke();
      });
  };
  /** A large document being embedded on its own. */
  let lane = null as Promise<void> | null;
  let drained = false;
  let wakesSeen = steps.wakes();
  let changed: (() => void) | null = null;
  const poke = () => {
    const resume = changed;
    changed = null;
    resume?.();
  };
  steps.onNudge(poke);
  signal.addEventListener("abort", poke, { once: true });

  /** Takes more documents while there is room, and starts preparing them. */
  const admit = async () => {
    if (signal.aborted || (drained && steps.wakes() === wakesSeen)) return;
    const room = limits.parseAhead - ahead.length;
    const weight = ahead.reduce((sum, slot) => sum + slot.weight, 0);
    if (room <= 0 || weight >= limits.parseAheadBytes) return;
    wakesSeen = steps.wakes();
    const taken = await steps.take(room, limits.parseAheadBytes - weight);
    if (taken === null) return;
    drained = taken.length === 0;
    for (const document of taken) {
      const slot: Slot = { document, weight: document.bytes, outcome: null };
      ahead.push(slot);
      steps
        .prepare(document, turn)
        .then(
          (prepared) => (slot.outcome = prepared ? { prepared } : { gone: true }),
          (error: unknown) => (slot.outcome = { error }),
        )
        .finally(poke);
    }
  };

  /** Stores a group's documents that have vectors; fails those that have an error. */
  const storeGroup = async (group: PreparedDocument[], results: (Float32Array[] | Error)[]) => {
    const ready: PreparedDocument[] = [];
    const vectors: Float32Array[][] = [];
    for (const [i, p] of group.entries()) {
      const result = results[i]!;
      if (result instanceof Error) await steps.fail(p.document, result);
      else {
        ready.push(p);
        vectors.push(result);
      }
    }
    if (ready.length === 0 || signal.aborted) return;
    try {
      await steps.store(ready, vectors);
    } catch (error) {
      if (signal.aborted) return;
      if (ready.length === 1) return steps.fail(ready[0]!.document, error);
      // One document may be what failed the transaction: each is committed on its own, so it fails alone.
      steps.logger.warn({ err: error, documents: ready.length }, "a group could not be committed together; committing each document on its own");
      for (const [i, p] of ready.entries()) {
        if (signal.aborted) return;
        await steps.store([p], [vectors[i]!]).catch((single: unknown) => steps.fail(p.document, single));
      }
    }
  };

  const embedLarge = (prepared: PreparedDocument): Promise<void> =>
    steps
      .embedAlone(prepared)
      .then(
        (vectors) => afterCommits(() => storeGroup([prepared], [vectors])),
        (error: unknown) => afterCommits(() => steps.fail(prepared.document, error)),
      )
      .finally(() => {
        lane = null;
        poke();
      });

  /** The next group from the documents ready (in the order taken, any that fit); failed and gone ones leave. */
  const nextGroup = (): PreparedDocument[] => {
    const group: PreparedDocument[] = [];
    let passages = 0;
    for (let i = 0; i < ahead.length; ) {
      const slot = ahead[i]!;
      const outcome = slot.outcome;
      if (!outcome) {
        i++;
        continue;
      }
      if ("gone" in outcome) {
        ahead.splice(i, 1);
        continue;
      }
      if ("error" in outcome) {
        ahead.splice(i, 1);
        afterCommits(() => steps.fail(slot.document, outcome.error));
        continue;
      }
      const prepared = outcome.prepared;
      if (prepared.texts.length > limits.maxGroupChunks) {
        if (lane) i++;
        else {
          ahead.splice(i, 1);
          lane = embedLarge(prepared);
        }
        continue;
      }
      const fits = group.length < limits.batchDocuments && passages + prepared.texts.length <= limits.maxGroupChunks && (group.length === 0 || group[0]!.model.id === prepared.model.id);
      if (!fits) {
        i++;
        continue;
      }
      ahead.splice(i, 1);
      group.push(prepared);
      passages += prepared.texts.length;
    }
    return group;
  };

  try {
    while (!signal.aborted) {
      await admit();
      const before = ahead.length;
      const group = pendingCommits < MAX_PENDING_COMMITS ? nextGroup() : [];
      if (group.length > 0) {
        const embedding = steps.embedGroup(group);
        afterCommits(async () => storeGroup(group, await embedding));
        // Room was made: more documents are parsed while this group is embedded.
        await admit();
        // The next group is formed when this one's vectors are in (from what was parsed meanwhile).
        await embedding.catch(() => undefined);
        continue;
      }
      if (ahead.length < before) continue; // documents left (failed, gone, embedded on their own): room to take more
      if (ahead.length === 0 && lane === null && pendingCommits === 0) {
        if (drained && steps.wakes() === wakesSeen) break;
        continue; // work was queued since the queue was last found empty, or the store did not answer
      }
      // Something is under way (a parse, the large document's embedding, a commit): wait for it to move.
      await new Promise<void>((resolve) => {
        changed = resolve;
        // Work was queued since the queue was last found empty, and there is room for it: take it now.
        const room = ahead.length < limits.parseAhead && ahead.reduce((sum, slot) => sum + slot.weight, 0) < limits.parseAheadBytes;
        if (drained && steps.wakes() !== wakesSeen && room) poke();
      });
    }
  } finally {
    steps.onNudge(null);
    signal.removeEventListener("abort", poke);
    await lane;
    await commits;
  }
}
