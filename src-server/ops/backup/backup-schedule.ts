/**
 * Backups the server takes itself (`backup: { dir, everyHours, keep }` in the
 * configuration), with the same `createBackup` as `pustaka backup`: one every `everyHours`
 * after the newest complete backup in `dir` (the first a minute after start when there is
 * none, or it is overdue), the newest `keep` kept. Each is logged and audited in the
 * instance chain (actor `system`), failures too. Closing the server aborts a backup under
 * way; its unfinished folder is removed (or by the next run).
 */
import type { AuditEvent } from "../../audit/audit-service.js";
import { BackupFolder } from "./backup-folder.js";
import { createBackup, type BackupResult, type BackupSource } from "./create-backup.js";

export interface BackupScheduleSettings {
  dir: string;
  everyHours: number;
  keep: number;
  includeKek: boolean;
  withModels: boolean;
}

interface Log {
  info(details: object, message: string): void;
  error(details: object, message: string): void;
}

export interface BackupScheduleDeps {
  source: BackupSource;
  settings: BackupScheduleSettings;
  version: string;
  audit: { recordNow(event: AuditEvent): Promise<void> };
  logger: Log;
}

/** Delay before the first backup when none is recent enough: lets the server finish starting. */
const FIRST_DELAY_MS = 60_000;

/** The audit entry of a backup (or of its failure), shared by the CLI and the schedule. */
export function backupAuditEvent(outcome: BackupResult | Error, context: { actor: string; dir: string; trigger: "cli" | "schedule" }): AuditEvent {
  if (outcome instanceof Error) {
    return { type: "backup.create", workspaceId: null, actor: context.actor, outcome: "failure", data: { dir: context.dir, trigger: context.trigger, error: outcome.message.slice(0, 300) } };
  }
  const m = outcome.manifest;
  return {
    type: "backup.create",
    workspaceId: null,
    actor: context.actor,
    outcome: "success",
    data: {
      backup_id: outcome.id,
      name: outcome.name,
      dir: context.dir,
      trigger: context.trigger,
      files: outcome.files,
      bytes: outcome.bytes,
      ms: outcome.ms,
      documents: m.contents.documents,
      chunks: m.contents.chunks,
      kek_included: m.key_provider.kind === "local-file" && m.key_provider.kek_included,
      models_included: m.models.included,
      pruned: outcome.pruned,
    },
  };
}

export class BackupSchedule {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<unknown> | undefined;
  private readonly controller = new AbortController();
  private closed = false;
  private readonly intervalMs: number;

  constructor(private readonly deps: BackupScheduleDeps) {
    this.intervalMs = Math.max(1000, Math.round(deps.settings.everyHours * 3_600_000));
  }

  /** Plans the first backup from the newest complete one in the folder. */
  async start(): Promise<void> {
    const last = (await new BackupFolder(this.deps.settings.dir).complete().catch(() => [])).at(-1);
    const soon = Math.min(FIRST_DELAY_MS, this.intervalMs);
    const due = last ? Math.max(last.startedAt + this.intervalMs - Date.now(), soon) : soon;
    this.deps.logger.info({ dir: this.deps.settings.dir, everyHours: this.deps.settings.everyHours, keep: this.deps.settings.keep, nextInMs: due }, "scheduled backups");
    this.plan(due);
  }

  /** Takes a backup now (the timer's work); resolves to null when it failed (logged and audited). */
  async runNow(): Promise<BackupResult | null> {
    const { settings, source, version, logger, audit } = this.deps;
    const context = { actor: "system", dir: settings.dir, trigger: "schedule" as const };
    let outcome: BackupResult | Error;
    try {
      outcome = await createBackup(source, { dir: settings.dir, keep: settings.keep, includeKek: settings.includeKek, withModels: settings.withModels, version, trigger: "schedule", signal: this.controller.signal });
      logger.info({ backup: outcome.name, dir: settings.dir, files: outcome.files, bytes: outcome.bytes, ms: outcome.ms, pruned: outcome.pruned }, "backup complete");
    } catch (error) {
      outcome = error instanceof Error ? error : new Error(String(error));
      if (this.closed) return null; // aborted by close: not a failure to report
      logger.error({ err: outcome, dir: settings.dir }, "scheduled backup failed");
    }
    await audit.recordNow(backupAuditEvent(outcome, context)).catch((error: unknown) => logger.error({ err: error }, "the backup could not be audited"));
    return outcome instanceof Error ? null : outcome;
  }

  /** Stops the schedule; a backup under way is aborted. Idempotent. */
  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.timer);
    this.controller.abort();
    await this.running?.catch(() => undefined);
  }

  private plan(delayMs: number): void {
    if (this.closed) return;
    this.timer = setTimeout(() => {
      this.running = this.runNow().finally(() => {
        this.running = undefined;
        this.plan(this.intervalMs);
      });
    }, delayMs);
    this.timer.unref();
  }
}
