/**
 * The audit trail: every inference call, upload, query, deletion, purge, key, workspace
 * and service-account change, failed authentication and rate-limit rejection, as an
 * entry in its workspace's hash chain (entries that belong to no workspace go to the
 * `instance` chain). Prompts and files are recorded by their SHA-256, never their text.
 *
 * Writes are batched off the request's path: `record` queues, and the queue is written
 * in one transaction (of at most `maxBatch` entries) a few milliseconds later (or at once
 * when it is large, when an administrative change awaits `recordNow`, and on close); one
 * write at a time, in the order queued. Events a stranger can repeat at will (failed
 * authentication) go through `recordCoalesced`: repeats within a window become one entry
 * with a `count` (see `AuditCoalescer`), written by `close` at the latest. After each write
 * the chains' heads are signed into a file in the data folder, so rows cut from a chain's
 * end are detected by `verify` too. Reads are limited to the caller's workspace unless it
 * holds `workspaces.manage`.
 */
import { renameSync, readFileSync, writeFileSync } from "node:fs";
import type { Principal } from "../domain/scopes.js";
import { ServiceError, invalidRequest, notFound } from "../errors.js";
import { newId } from "../ids.js";
import { ChainVerifier, GENESIS_HASH, canonicalJson, keyIdOf, storedEntryHash, signManifest, signatureValid, type AuditEntry, type ChainProblem, type ExportManifest } from "../security/audit-chain.js";
import type { AuditSigner } from "../security/audit-chain.js";
import { AuditCoalescer } from "./audit-coalescer.js";
import { csvHeader, csvManifestRow, csvRow, jsonlLine, type ExportFormat } from "../security/audit-export.js";
import type { AuditDraft, AuditRow, AuditStore, ChainHead } from "../store/audit-store.js";

/** The chain of events that belong to no workspace (unknown keys, instance-wide jobs). */
export const INSTANCE_CHAIN = "instance";

export type AuditEventType =
  | "chat.completion"
  | "text.completion"
  | "response.create"
  | "response.delete"
  | "embeddings.create"
  | "rerank.create"
  | "document.upload"
  | "file.upload"
  | "file.delete"
  | "rag.query"
  | "rag.search"
  | "rag.search.tune"
  | "mcp.request"
  | "corpus.create"
  | "corpus.delete"
  | "corpus.export"
  | "corpus.import"
  | "document.delete"
  | "tombstone.purge"
  | "workspace.create"
  | "workspace.update"
  | "api_key.create"
  | "api_key.update"
  | "api_key.revoke"
  | "service_account.create"
  | "service_account.update"
  | "service_account.delete"
  | "service_account.token"
  | "session.create"
  | "auth.failed"
  | "rate_limit.rejected"
  | "kek.rotate"
  | "backup.create"
  | "backup.restore"
  | "oauth.rotate_key"
  | "remote_model.create"
  | "remote_model.delete"
  | "remote_model.test"
  | "ollama_listener.open"
  | "ollama_listener.close"
  | "audit.export";

export interface AuditEvent {
  type: AuditEventType;
  /** The workspace the event belongs to; null = the instance chain. */
  workspaceId: string | null;
  /** See `actorOf`; `system` for background jobs, `cli` for offline commands. */
  actor: string;
  outcome: "success" | "failure";
  requestId?: string | null | undefined;
  /** Type-specific facts; JSON values only (no text of prompts or documents). */
  data: Record<string, unknown>;
}

/** `api_key:key_…`, `session:ses_…` or `service_account:sa_…`. */
export function actorOf(principal: Principal): string {
  return `${principal.kind ?? "api_key"}:${principal.keyId}`;
}

export interface AuditListQuery {
  chain?: string | undefined;
  type?: string | undefined;
  actor?: string | undefined;
  outcome?: "success" | "failure" | undefined;
  requestId?: string | undefined;
  sinceMs?: number | undefined;
  untilMs?: number | undefined;
  limit: number;
  order: "asc" | "desc";
  /** An entry id: continue after it. */
  after?: string | undefined;
}

export interface AuditVerification {
  valid: boolean;
  /** Chains checked and their heads. */
  chains: { chain: string; count: number; head_seq: number; head_hash: string; signed_head_seq: number | null }[];
  /** The first broken link (null when valid). */
  first_problem: ChainProblem | null;
  /** Every problem found (at most 100 per chain). */
  problems: ChainProblem[];
  checked_entries: number;
  ms: number;
}

interface SignedHeads {
  object: "audit.heads";
  heads: ChainHead[];
  signed_at: string;
  key_id: string;
  public_key: string;
  signature: string;
}

export interface AuditServiceOptions {
  /** Where the signed chain heads are kept (in the data folder). */
  headsFile: string;
  /** Milliseconds a queued entry may wait for its batch. */
  flushMs?: number;
  /** A queue this long is written at once; also the most entries one transaction holds. Default 512. */
  maxBatch?: number;
  now?: () => number;
  /** A batch that could not be written in the background (it stays queued and is retried). */
  onError?: (error: unknown) => void;
  /** Milliseconds during which repeats of a coalesced event are counted into one entry. Default 60 000. */
  coalesceMs?: number;
  /** Benchmarks only (the reference run without a trail): record nothing. No configuration reaches this. */
  disabled?: boolean;
}

export function entryFromRow(row: AuditRow): AuditEntry {
  return {
    object: "audit.event",
    id: row.id,
    chain: row.chain,
    seq: row.seq,
    time: new Date(row.at_ms).toISOString(),
    type: row.type,
    actor: row.actor,
    outcome: row.outcome,
    request_id: row.request_id,
    data: JSON.parse(row.body) as Record<string, unknown>,
    prev_hash: row.prev_hash,
    hash: row.hash,
  };
}

/** The hash a stored row should carry, from its columns as they are. */
const rowHash = (row: AuditRow): string =>
  storedEntryHash({ actor: row.actor, chain: row.chain, id: row.id, outcome: row.outcome, prev_hash: row.prev_hash, request_id: row.request_id, seq: row.seq, time: new Date(row.at_ms).toISOString(), type: row.type }, row.body);

export class AuditService {
  private queue: AuditDraft[] = [];
  private timer: NodeJS.Timeout | undefined;
  private readonly heads = new Map<string, ChainHead>();
  private readonly now: () => number;
  private closed = false;
  private readonly coalescer: AuditCoalescer;
  /** The last write started or waiting (writes go one at a time, in order). */
  private writing: Promise<void> = Promise.resolve();
  /** A write waiting for its turn: it takes everything queued when it starts, so one is enough. */
  private pending: Promise<void> | null = null;
  /** Entries written since start (diagnostics and benchmarks). */
  written = 0;

  /** The service with the chains' heads as the database holds them now. */
  static async open(store: AuditStore, signer: AuditSigner, options: AuditServiceOptions): Promise<AuditService> {
    return new AuditService(store, signer, options, await store.heads());
  }

  private constructor(
    private readonly store: AuditStore,
    readonly signer: AuditSigner,
    private readonly options: AuditServiceOptions,
    heads: readonly ChainHead[],
  ) {
    this.now = options.now ?? Date.now;
    for (const head of heads) this.heads.set(head.chain, head);
    this.coalescer = new AuditCoalescer((event) => this.record(event), { windowMs: options.coalesceMs, now: this.now, onError: options.onError });
  }

  /** Queues an entry; it is written within `flushMs`. Never throws into the caller's request. */
  record(event: AuditEvent): void {
    if (this.options.disabled) return;
    this.queue.push(this.draft(event));
    if (this.closed) {
      // No timer outlives close: written now, and a failure is reported (the entry stays queued for a later write).
      this.flush().catch((error: unknown) => this.options.onError?.(error));
      return;
    }
    if (this.queue.length >= (this.options.maxBatch ?? 512)) this.flushQuietly();
    else this.timer ??= setTimeout(() => this.flushQuietly(), this.options.flushMs ?? 20);
  }

  /**
   * Like `record` for an event anyone can repeat at will: the first with this `key` in a
   * while is queued as it is; repeats within the window after it are counted and written
   * as one entry carrying `count` (and `first_seen`, `last_seen`) when the window closes
   * or the service closes. `key` should name what makes two events the same (type,
   * source, reason).
   */
  recordCoalesced(key: string, event: AuditEvent): void {
    if (this.options.disabled) return;
    if (this.closed) {
      this.record(event);
      return;
    }
    this.coalescer.record(key, event);
  }

  /** Writes the entry (and anything queued before it) before resolving; rejects when it cannot (the entries stay queued). */
  async recordNow(event: AuditEvent): Promise<void> {
    if (this.options.disabled) return;
    this.queue.push(this.draft(event));
    await this.flush();
  }

  /**
   * Writes every queued entry (in transactions of at most `maxBatch`) and signs the new heads,
   * after the writes already under way. Rejects when a write fails; its entries stay queued, first.
   */
  flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    if (this.pending) return this.pending;
    const write = this.writing.then(() => {
      this.pending = null;
      return this.writeQueued();
    });
    this.pending = write;
    this.writing = write.catch(() => undefined);
    return write;
  }

  /** Writes what is queued now, `maxBatch` entries per transaction (so a chain's lock is never held long). */
  private async writeQueued(): Promise<void> {
    let remaining = this.queue.length;
    let wrote = false;
    try {
      while (remaining > 0) {
        const batch = this.queue.splice(0, Math.min(remaining, this.options.maxBatch ?? 512));
        remaining -= batch.length;
        let heads: ChainHead[];
        try {
          heads = await this.store.append(batch, (d, seq, prevHash) => storedEntryHash({ actor: d.actor, chain: d.chain, id: d.id, outcome: d.outcome, prev_hash: prevHash, request_id: d.requestId, seq, time: new Date(d.atMs).toISOString(), type: d.type }, d.body), GENESIS_HASH);
        } catch (error) {
          this.queue.unshift(...batch);
          throw error;
        }
        for (const head of heads) this.heads.set(head.chain, head);
        this.written += batch.length;
        wrote = true;
      }
    } finally {
      if (wrote) this.signHeads();
    }
  }

  private flushQuietly(): void {
    this.flush().catch((error: unknown) => {
      this.options.onError?.(error);
      if (!this.closed) this.timer ??= setTimeout(() => this.flushQuietly(), 1000);
    });
  }

  /** Writes the pending coalesced counts and everything queued; later entries are written at once. Idempotent. */
  async close(): Promise<void> {
    this.coalescer.close();
    this.closed = true;
    await this.flush();
  }

  /** How many chains and entries the trail holds (from the heads this process last read or wrote: no scan; a chain another writer extended shows its new length once this process next writes to it). */
  stats(): { chains: number; entries: number } {
    const heads = [...this.heads.values()];
    return { chains: heads.length, entries: heads.reduce((sum, h) => sum + h.seq, 0) };
  }

  /** The instance's signing key, to pin before checking exports offline. */
  signingKey(): { key_id: string; public_key: string; public_key_pem: string } {
    return { key_id: this.signer.keyId, public_key: this.signer.publicKey, public_key_pem: this.signer.publicKeyPem() };
  }

  /** One page of a chain's entries with filters, newest first by default. */
  async list(principal: Principal, query: AuditListQuery): Promise<{ data: AuditEntry[]; hasMore: boolean }> {
    const chain = this.readableChain(principal, query.chain);
    await this.flush();
    const afterSeq = query.after === undefined ? undefined : await this.store.seqOf(chain, query.after);
    if (query.after !== undefined && afterSeq === undefined) return { data: [], hasMore: false };
    const page = await this.store.page({ ...query, chain }, query.limit, afterSeq, query.order);
    return { data: page.data.map(entryFromRow), hasMore: page.hasMore };
  }

  /**
   * The entries of one chain made in [since, until), as JSON Lines or CSV, ending with a
   * signed manifest. The range is fixed when the export starts; it is read in batches so a
   * long export never blocks the database.
   */
  async *export(principal: Principal, query: { chain?: string | undefined; format: ExportFormat; sinceMs?: number | undefined; untilMs?: number | undefined }): AsyncGenerator<string> {
    const chain = this.readableChain(principal, query.chain);
    await this.flush();
    const bounds = await this.store.seqBounds(chain, query.sinceMs, query.untilMs);
    const csv = query.format === "csv";
    if (csv) yield csvHeader();
    let count = 0;
    let anchor: string | null = null;
    let head: string | null = null;
    if (bounds) {
      for (let from = bounds.first; from <= bounds.last; ) {
        const rows = await this.store.range(chain, from, bounds.last, 2000);
        if (rows.length === 0) break;
        let out = "";
        for (const row of rows) {
          const entry = entryFromRow(row);
          anchor ??= entry.prev_hash;
          head = entry.hash;
          count += 1;
          out += csv ? csvRow(entry) : jsonlLine(entry);
        }
        yield out;
        from = rows.at(-1)!.seq + 1;
        // Let other requests use the database between batches.
        await new Promise((resolve) => setImmediate(resolve));
      }
    }
    if (anchor === null) {
      const before = await this.store.headBefore(chain, query.sinceMs ?? Number.MAX_SAFE_INTEGER);
      anchor = before?.hash ?? GENESIS_HASH;
    }
    const manifest: ExportManifest = signManifest(this.signer, {
      object: "audit.manifest",
      format: "pustaka-audit-export/1",
      chain,
      count,
      first_seq: count > 0 ? bounds!.first : null,
      last_seq: count > 0 ? bounds!.first + count - 1 : null,
      anchor_hash: anchor,
      head_hash: head ?? anchor,
      since: query.sinceMs === undefined ? null : new Date(query.sinceMs).toISOString(),
      until: query.untilMs === undefined ? null : new Date(query.untilMs).toISOString(),
      exported_at: new Date(this.now()).toISOString(),
    });
    yield csv ? csvManifestRow(manifest) : jsonlLine(manifest);
  }

  /**
   * Re-walks the readable chains: every entry's hash, every link, the sequence, the
   * signed heads (rows cut from the end), and the database's append-only triggers.
   */
  async verify(principal: Principal, chainParam?: string): Promise<AuditVerification> {
    const started = performance.now();
    await this.flush();
    const chains = chainParam !== undefined || !principal.scopes.has("workspaces.manage") ? [this.readableChain(principal, chainParam)] : await this.allChains();
    const problems: ChainProblem[] = [];
    const signed = this.readSignedHeads(problems);
    const missing = await this.store.missingTriggers();
    if (missing.length > 0) {
      problems.push({ chain: chains[0] ?? INSTANCE_CHAIN, seq: null, id: null, reason: "append_only_disabled", message: `the database's append-only protection was removed (missing triggers: ${missing.join(", ")})` });
    }
    const report: AuditVerification["chains"] = [];
    let checked = 0;
    for (const chain of chains) {
      const verifier = new ChainVerifier(chain);
      for (let from = 1; ; ) {
        const rows = await this.store.range(chain, from, Number.MAX_SAFE_INTEGER, 5000);
        if (rows.length === 0) break;
        for (const row of rows) verifier.add(row, rowHash(row));
        from = rows.at(-1)!.seq + 1;
        await new Promise((resolve) => setImmediate(resolve));
      }
      checked += verifier.count;
      problems.push(...verifier.problems);
      const signedHead = signed?.get(chain);
      if (signedHead && signedHead.seq > (verifier.lastSeq ?? 0)) {
        problems.push({
          chain,
          seq: (verifier.lastSeq ?? 0) + 1,
          id: null,
          reason: "truncated",
          message: `entries ${(verifier.lastSeq ?? 0) + 1}–${signedHead.seq} were removed from the end of the chain (the signed head records ${signedHead.seq})`,
        });
      } else if (signedHead && (await this.store.hashAt(chain, signedHead.seq)) !== signedHead.hash) {
        problems.push({ chain, seq: signedHead.seq, id: null, reason: "hash_mismatch", message: `entry ${signedHead.seq} is not the one the signed head records` });
      }
      report.push({ chain, count: verifier.count, head_seq: verifier.lastSeq ?? 0, head_hash: verifier.head, signed_head_seq: signedHead?.seq ?? null });
    }
    const ordered = [...problems].sort((a, b) => (a.seq ?? Number.MAX_SAFE_INTEGER) - (b.seq ?? Number.MAX_SAFE_INTEGER));
    return { valid: problems.length === 0, chains: report, first_problem: ordered[0] ?? null, problems, checked_entries: checked, ms: Math.round(performance.now() - started) };
  }

  /** The chain a caller asked for, when it may read it: its own workspace's, or any with `workspaces.manage`. */
  private readableChain(principal: Principal, chain: string | undefined): string {
    if (!principal.scopes.has("audit.read")) throw new ServiceError("permission", "this API key lacks the 'audit.read' scope", { code: "insufficient_scope" });
    const wanted = chain ?? principal.workspaceId;
    if (wanted !== principal.workspaceId && !principal.scopes.has("workspaces.manage")) {
      throw notFound(`no audit chain '${wanted}' visible to this key`, "audit_chain_not_found");
    }
    if (!/^[A-Za-z0-9_-]{1,64}$/.test(wanted)) throw invalidRequest("chain must be a workspace id or 'instance'", "invalid_parameter", "chain");
    return wanted;
  }

  private async allChains(): Promise<string[]> {
    return [...new Set([...(await this.store.chains()), ...this.heads.keys()])].sort();
  }

  private draft(event: AuditEvent): AuditDraft {
    return {
      id: newId("aud_"),
      chain: event.workspaceId ?? INSTANCE_CHAIN,
      atMs: this.now(),
      type: event.type,
      actor: event.actor,
      outcome: event.outcome,
      requestId: event.requestId ?? null,
      body: canonicalJson(event.data),
    };
  }

  /** Signs the heads (merged with those already in the file: another process may have written longer chains). */
  private signHeads(): void {
    const merged = new Map(this.heads);
    for (const head of this.readSignedHeads([])?.values() ?? []) {
      const mine = merged.get(head.chain);
      if (!mine || mine.seq < head.seq) merged.set(head.chain, head);
    }
    const unsigned = { object: "audit.heads" as const, heads: [...merged.values()].sort((a, b) => a.chain.localeCompare(b.chain)), signed_at: new Date(this.now()).toISOString(), key_id: this.signer.keyId, public_key: this.signer.publicKey };
    const file: SignedHeads = { ...unsigned, signature: this.signer.sign(unsigned) };
    const tmp = `${this.options.headsFile}.${process.pid}.tmp`;
    writeFileSync(tmp, JSON.stringify(file), { mode: 0o600 });
    renameSync(tmp, this.options.headsFile);
  }

  /** The signed heads by chain; null when there is no file yet. A bad signature is a problem. */
  private readSignedHeads(problems: ChainProblem[]): Map<string, ChainHead> | null {
    let parsed: SignedHeads;
    try {
      parsed = JSON.parse(readFileSync(this.options.headsFile, "utf8")) as SignedHeads;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return null;
      problems.push({ chain: INSTANCE_CHAIN, seq: null, id: null, reason: "malformed", message: "the signed heads file is unreadable" });
      return null;
    }
    const { signature, ...unsigned } = parsed;
    if (parsed.public_key !== this.signer.publicKey || keyIdOf(parsed.public_key) !== parsed.key_id || !signatureValid(parsed.public_key, unsigned, signature)) {
      problems.push({ chain: INSTANCE_CHAIN, seq: null, id: null, reason: "bad_signature", message: "the signed heads file was altered or signed by another key" });
      return null;
    }
    return new Map(parsed.heads.map((h) => [h.chain, h]));
  }
}
