/**
 * The pipeline's scheduling with scripted steps (the real steps are exercised end to end in
 * test/integration/ingest-pipeline*.test.ts): how many documents are taken ahead, what goes
 * into a group, the large-document lane, failures kept to their document, stopping.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import pino from "pino";
import type { DocumentRecord } from "../store/document-store.js";
import type { PreparedDocument } from "./indexer.js";
import { runPipeline, type PipelineLimits, type PipelineSteps } from "./indexing-pipeline.js";

interface Spec {
  passages?: number;
  bytes?: number;
  model?: string;
  /** Its parse fails. */
  parseFails?: boolean;
  /** Its passages cannot be embedded (in a group, or alone). */
  embedFails?: boolean;
  /** Its commit fails (in a group, and alone). */
  storeFails?: boolean;
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

/** Scripted steps over a queue of documents, recording what the pipeline does. */
class Script {
  readonly queue: DocumentRecord[] = [];
  readonly specs = new Map<string, Spec>();
  readonly groups: string[][] = [];
  readonly alone: string[] = [];
  readonly stored: string[] = [];
  readonly failed: string[] = [];
  /** Documents taken and not yet in a group or embedded alone, at most; their bytes, at most. */
  maxAhead = 0;
  maxAheadBytes = 0;
  private taken = new Set<string>();
  private wakeCount = 0;
  private nudge: (() => void) | null = null;
  /** Holds embedAlone until released (the large-document lane). */
  holdAlone: Promise<void> | null = null;

  add(count: number, spec: Spec = {}): string[] {
    const ids: string[] = [];
    for (let i = 0; i < count; i++) {
      const id = `doc_${this.specs.size}`;
      this.specs.set(id, spec);
      this.queue.push({ id, corpusId: "corp_a", bytes: spec.bytes ?? 100 } as DocumentRecord);
      ids.push(id);
    }
    return ids;
  }

  wake(): void {
    this.wakeCount++;
    this.nudge?.();
  }

  private leave(ids: string[]): void {
    for (const id of ids) this.taken.delete(id);
  }

  steps(): PipelineSteps {
    const prepared = (document: DocumentRecord): PreparedDocument => {
      const spec = this.specs.get(document.id)!;
      return { document, model: { id: spec.model ?? "m" }, texts: Array.from({ length: spec.passages ?? 2 }, (_, i) => `${document.id}:${i}`) } as unknown as PreparedDocument;
    };
    const vectors = (p: PreparedDocument) => p.texts.map(() => Float32Array.of(1));
    return {
      take: async (room, bytes) => {
        await tick();
        let count = 0;
        for (let sum = 0; count < Math.min(room, this.queue.length); count++) {
          const size = this.queue[count]!.bytes;
          if (count > 0 && sum + size > bytes) break;
          sum += size;
        }
        const out = this.queue.splice(0, count);
        for (const d of out) this.taken.add(d.id);
        this.maxAhead = Math.max(this.maxAhead, this.taken.size);
        this.maxAheadBytes = Math.max(this.maxAheadBytes, [...this.taken].reduce((sum, id) => sum + (this.specs.get(id)!.bytes ?? 100), 0));
        return out;
      },
      wakes: () => this.wakeCount,
      onNudge: (nudge) => (this.nudge = nudge),
      prepare: (document, turn) =>
        turn(async () => {
          await tick();
          if (this.specs.get(document.id)!.parseFails) throw new Error(`cannot parse ${document.id}`);
          return prepared(document);
        }),
      embedGroup: async (group) => {
        this.leave(group.map((p) => p.document.id));
        this.groups.push(group.map((p) => p.document.id));
        // Embedding is the slow step (parsing a small document takes a tick).
        for (let i = 0; i < 6; i++) await tick();
        return group.map((p) => (this.specs.get(p.document.id)!.embedFails ? new Error(`cannot embed ${p.document.id}`) : vectors(p)));
      },
      embedAlone: async (p) => {
        this.leave([p.document.id]);
        this.alone.push(p.document.id);
        await this.holdAlone;
        await tick();
        return vectors(p);
      },
      store: async (group) => {
        await tick();
        if (group.some((p) => this.specs.get(p.document.id)!.storeFails)) throw new Error("the transaction failed");
        this.stored.push(...group.map((p) => p.document.id));
      },
      fail: async (document) => {
        this.leave([document.id]);
        await tick();
        this.failed.push(document.id);
      },
      logger: pino({ level: "silent" }),
    };
  }
}

const limits = (overrides: Partial<PipelineLimits> = {}): PipelineLimits => ({ batchDocuments: 4, parseAhead: 6, maxGroupChunks: 10, parseAheadBytes: 10_000, ...overrides });

describe("the indexing pipeline", () => {
  it("takes documents ahead within bounds, embeds them in groups and stores each once", async () => {
    const script = new Script();
    const ids = script.add(25);
    await runPipeline(script.steps(), limits(), new AbortController().signal);
    assert.deepEqual([...script.stored].sort(), [...ids].sort(), "every document stored once");
    assert.equal(new Set(script.stored).size, ids.length);
    assert.ok(script.groups.every((g) => g.length <= 4 && g.length * 2 <= 10), "groups within their bounds");
    assert.ok(script.groups.some((g) => g.length > 1), "several documents in a group");
    assert.ok(script.maxAhead <= 6, `at most parseAhead documents taken ahead (${script.maxAhead})`);
    assert.deepEqual(script.failed, []);
  });

  it("takes no more originals ahead than the byte budget allows, one larger one alone", async () => {
    const script = new Script();
    script.add(6, { bytes: 4_000 });
    script.add(1, { bytes: 50_000 });
    script.add(6, { bytes: 4_000 });
    await runPipeline(script.steps(), limits({ parseAheadBytes: 10_000 }), new AbortController().signal);
    assert.equal(script.stored.length, 13);
    // At most the budget, and one document taken while the budget had room left.
    assert.ok(script.maxAheadBytes <= 10_000 + 50_000, String(script.maxAheadBytes));
    assert.ok(script.maxAhead <= 3, `fewer documents ahead than parseAhead when they are large (${script.maxAhead})`);
  });

  it("embeds a document with more passages than a group holds on its own, while small ones go on around it", async () => {
    const script = new Script();
    let release!: () => void;
    script.holdAlone = new Promise<void>((resolve) => (release = resolve));
    const [large] = script.add(1, { passages: 50 });
    const small = script.add(8);
    const running = runPipeline(script.steps(), limits(), new AbortController().signal);
    for (let i = 0; i < 200 && script.stored.length < small.length; i++) await tick();
    assert.deepEqual([...script.stored].sort(), [...small].sort(), "the small documents are stored while the large one is still embedding");
    assert.deepEqual(script.alone, [large]);
    release();
    await running;
    assert.equal(script.stored.at(-1), large);
    assert.ok(script.groups.every((g) => !g.includes(large!)));
  });

  it("keeps failures to their document: a parse, an embedding, a commit", async () => {
    const script = new Script();
    const good = script.add(3);
    const [badParse] = script.add(1, { parseFails: true });
    good.push(...script.add(2));
    const [badEmbed] = script.add(1, { embedFails: true });
    good.push(...script.add(2));
    const [badStore] = script.add(1, { storeFails: true });
    good.push(...script.add(3));
    await runPipeline(script.steps(), limits(), new AbortController().signal);
    assert.deepEqual([...script.failed].sort(), [badParse, badEmbed, badStore].sort());
    assert.deepEqual([...script.stored].sort(), [...good].sort(), "the others of their groups are stored");
  });

  it("never groups documents of different embedding models", async () => {
    const script = new Script();
    script.add(5, { model: "a" });
    script.add(5, { model: "b" });
    script.add(5, { model: "a" });
    await runPipeline(script.steps(), limits({ parseAhead: 16, batchDocuments: 8, maxGroupChunks: 100 }), new AbortController().signal);
    assert.equal(script.stored.length, 15);
    for (const group of script.groups) assert.equal(new Set(group.map((id) => script.specs.get(id)!.model)).size, 1, `one model in ${group.join(", ")}`);
  });

  it("takes documents queued while it runs, and ends once nothing is left", async () => {
    const script = new Script();
    script.add(3);
    const running = runPipeline(script.steps(), limits(), new AbortController().signal);
    await tick();
    await tick();
    script.add(5);
    script.wake();
    await running;
    assert.equal(script.stored.length, 8);
  });

  it("stops when aborted, failing nothing and storing nothing more", async () => {
    const script = new Script();
    let release!: () => void;
    script.holdAlone = new Promise<void>((resolve) => (release = resolve));
    script.add(1, { passages: 50 });
    script.add(20);
    const controller = new AbortController();
    const steps = script.steps();
    let storesAfterAbort = 0;
    const watched: PipelineSteps = {
      ...steps,
      store: (group, vectors) => {
        if (controller.signal.aborted) storesAfterAbort++;
        return steps.store(group, vectors);
      },
    };
    const running = runPipeline(watched, limits(), controller.signal);
    for (let i = 0; i < 200 && script.stored.length === 0; i++) await tick();
    controller.abort();
    const storedAtAbort = script.stored.length;
    release();
    await running;
    assert.equal(storesAfterAbort, 0, "no commit begun after the abort");
    assert.deepEqual(script.failed, [], "nothing failed for the stop");
    assert.ok(storedAtAbort > 0 && script.stored.length < 21, "stopped part-way");
  });
});
