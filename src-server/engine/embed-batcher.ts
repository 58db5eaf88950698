/**
 * Puts the inputs of every embeddings request into shared llama.cpp evaluations, several
 * inputs (one sequence each) per evaluation, as llama-server does. An encoder evaluates a
 * batch of 16 short inputs in about the time of 1.6 alone on these CPUs.
 *
 * Scheduling:
 * - Requests take turns: each evaluation takes one input from each waiting request in
 *   turn, so a search query's single input rides in the next evaluation even while an
 *   ingestion request has hundreds queued.
 * - An evaluation holds at most `sequences` inputs and `batchTokens` tokens (an encoder
 *   attends across the whole batch, so cost grows faster than the token count beyond
 *   llama.cpp's usual 512-token ubatch); an input longer than that goes alone.
 * - Each worker (an embedding context with its share of the threads) takes the next
 *   evaluation as soon as it is free.
 * - An aborted request's inputs leave the queue at once; an evaluation already running
 *   finishes and its results for that request are dropped.
 */
import { asError, unavailable } from "../errors.js";

/** One llama.cpp embedding context, evaluating a group of inputs together. */
export interface EmbedWorker {
  /** Most inputs one evaluation takes. */
  readonly sequences: number;
  /** Tokens a group of inputs may add up to (a longer input is evaluated alone). */
  readonly batchTokens: number;
  /** The longest single input, in tokens. */
  readonly maxInputTokens: number;
  /** Evaluates `inputs` (token ids, special tokens included) together; one vector each, in order. */
  evaluate(inputs: Uint32Array[]): Promise<Float32Array[]>;
}

interface Job {
  inputs: Uint32Array[];
  vectors: Float32Array[];
  /** Next input not yet handed to a worker. */
  next: number;
  done: number;
  signal: AbortSignal;
  resolve: (vectors: Float32Array[]) => void;
  reject: (error: unknown) => void;
  onAbort: () => void;
  settled: boolean;
}

export class EmbedBatcher {
  /** Requests with inputs still to evaluate, in turn order. */
  private readonly queue: Job[] = [];
  private readonly idle: EmbedWorker[];
  private closed = false;
  /** Evaluations run so far and inputs they held (for tests and metrics). */
  readonly stats = { evaluations: 0, inputs: 0 };

  /**
   * @param workers the contexts evaluations run on
   * @param maxQueued requests allowed to wait beyond one per free sequence; more get 503 `server_busy`
   */
  constructor(
    private readonly workers: EmbedWorker[],
    private readonly maxQueued: number,
  ) {
    if (workers.length === 0) throw new Error("an embed batcher needs at least one worker");
    this.idle = [...workers];
  }

  /** Inputs one evaluation may hold, over all workers. */
  get size(): number {
    return this.workers.reduce((sum, worker) => sum + worker.sequences, 0);
  }

  /** Sequences evaluating right now. */
  busySequences = 0;

  get available(): number {
    return this.size - this.busySequences;
  }

  /** Requests waiting with inputs not yet started. */
  get queued(): number {
    return this.queue.length;
  }

  /** Embeds `inputs`, resolving with one vector per input in order. */
  embed(inputs: Uint32Array[], signal: AbortSignal): Promise<Float32Array[]> {
    if (this.closed) return Promise.reject(unavailable("the embedding model is shutting down", "server_shutting_down"));
    if (signal.aborted) return Promise.reject(asError(signal.reason));
    if (inputs.length === 0) return Promise.resolve([]);
    const limit = Math.min(...this.workers.map((worker) => worker.maxInputTokens));
    const tooLong = inputs.findIndex((input) => input.length > limit);
    if (tooLong >= 0) return Promise.reject(new Error(`input ${tooLong} is ${inputs[tooLong]!.length} tokens; an evaluation holds at most ${limit}`));
    if (this.queue.length >= this.workers.length + this.maxQueued) {
      return Promise.reject(unavailable(`the embedding model is busy and ${this.queue.length} requests are waiting; retry shortly`, "server_busy", 1));
    }
    return new Promise<Float32Array[]>((resolve, reject) => {
      const job: Job = {
        inputs,
        vectors: new Array<Float32Array>(inputs.length),
        next: 0,
        done: 0,
        signal,
        resolve,
        reject,
        settled: false,
        onAbort: () => this.fail(job, asError(signal.reason)),
      };
      signal.addEventListener("abort", job.onAbort, { once: true });
      this.queue.push(job);
      this.pump();
    });
  }

  /** Rejects every waiting request; later calls fail. Running evaluations finish. */
  close(): void {
    this.closed = true;
    for (const job of [...this.queue]) this.fail(job, unavailable("the embedding model is shutting down", "server_shutting_down"));
  }

  /** Starts an evaluation on every idle worker while inputs wait. */
  private pump(): void {
    while (this.idle.length > 0 && this.queue.length > 0) {
      const worker = this.idle.pop()!;
      const group = this.take(worker);
      void this.run(worker, group);
    }
  }

  /** The next group for `worker`: one input per request in turn, within its limits. */
  private take(worker: EmbedWorker): { job: Job; index: number }[] {
    const group: { job: Job; index: number }[] = [];
    let tokens = 0;
    // A request whose next input did not fit sits out the rest of this group.
    const full = new Set<Job>();
    for (let added = true; added && group.length < worker.sequences; ) {
      added = false;
      for (const job of this.queue) {
        if (group.length >= worker.sequences) break;
        if (full.has(job) || job.next >= job.inputs.length) continue;
        const input = job.inputs[job.next]!;
        if (group.length > 0 && tokens + input.length > worker.batchTokens) {
          full.add(job);
          continue;
        }
        group.push({ job, index: job.next });
        tokens += input.length;
        job.next++;
        added = true;
      }
    }
    // Requests with every input handed out leave the turn order; the ones served go to the
    // back, so the next group starts with those that were not.
    const served = new Set(group.map((item) => item.job));
    const waiting = this.queue.filter((job) => job.next < job.inputs.length);
    this.queue.splice(0, this.queue.length, ...waiting.filter((job) => !served.has(job)), ...waiting.filter((job) => served.has(job)));
    return group;
  }

  private async run(worker: EmbedWorker, group: { job: Job; index: number }[]): Promise<void> {
    this.busySequences += group.length;
    this.stats.evaluations++;
    this.stats.inputs += group.length;
    try {
      const vectors = await worker.evaluate(group.map(({ job, index }) => job.inputs[index]!));
      if (vectors.length !== group.length) throw new Error(`the embedding context returned ${vectors.length} vectors for ${group.length} inputs`);
      group.forEach(({ job, index }, i) => {
        job.vectors[index] = vectors[i]!;
        job.done++;
        if (!job.settled && job.done === job.inputs.length) this.settle(job);
      });
    } catch (error) {
      for (const { job } of group) this.fail(job, error);
    } finally {
      this.busySequences -= group.length;
      this.idle.push(worker);
      this.pump();
    }
  }

  private settle(job: Job): void {
    job.settled = true;
    job.signal.removeEventListener("abort", job.onAbort);
    job.resolve(job.vectors);
  }

  private fail(job: Job, error: unknown): void {
    if (job.settled) return;
    job.settled = true;
    job.signal.removeEventListener("abort", job.onAbort);
    const at = this.queue.indexOf(job);
    if (at >= 0) this.queue.splice(at, 1);
    job.reject(error);
  }
}
