/**
 * Backup and restore of a data folder (docs/backup-restore.md): `pustaka backup`,
 * `pustaka restore` and the server's scheduled backups all run this code. No Express, no
 * commander here: the CLI (`backup-cli.ts`) and the server (`server.ts`) call it.
 */
import { ConfigError, type Config } from "../config.js";
import type { KeyProvider } from "../security/key-provider.js";
import { isInside } from "./backup/backup-files.js";
import { BackupSchedule, type BackupScheduleDeps } from "./backup/backup-schedule.js";

export { BackupError, readManifest, type BackupManifest } from "./backup/backup-manifest.js";
export { BackupFolder } from "./backup/backup-folder.js";
export { createBackup, type BackupResult, type BackupSource, type CreateBackupOptions } from "./backup/create-backup.js";
export { restoreBackup, type RestoreOptions, type RestoreResult } from "./backup/restore-backup.js";
export { BackupSchedule, backupAuditEvent } from "./backup/backup-schedule.js";

/** What a team server's replicas share lives in Postgres: pg_dump backs it up, not this. */
export const POSTGRES_BACKUP_ADVICE =
  "this instance keeps its state in Postgres (database.url), shared by its replicas: back the database up with pg_dump " +
  "(originals, tombstones and signing keys are in it too) and keep the KEK apart (the key file, or the HSM token's own backup); see docs/backup-restore.md";

/** Refuses a Postgres deployment, whose backup is pg_dump's job (a file copy of one replica would be half of it). */
export function refusePostgres(config: Pick<Config, "database">): void {
  if (config.database.url) throw new ConfigError(`pustaka backup: ${POSTGRES_BACKUP_ADVICE}`);
}

/** The source of a backup, as the configuration describes it. */
export function backupSourceOf(config: Config, provider: KeyProvider) {
  return { dataDir: config.dataDir, modelsDir: config.modelsDir, bindings: config.models.bindings, security: config.security, provider };
}

/**
 * Starts the server's scheduled backups when `config.backup.dir` is set (null otherwise);
 * a Postgres deployment is refused at start.
 */
export async function startBackupSchedule(config: Config, deps: Omit<BackupScheduleDeps, "source" | "settings"> & { provider: KeyProvider }): Promise<BackupSchedule | null> {
  const settings = config.backup;
  if (!settings.dir) return null;
  if (config.database.url) throw new ConfigError(`backup.dir: ${POSTGRES_BACKUP_ADVICE}`);
  if (isInside(config.dataDir, settings.dir)) throw new ConfigError(`backup.dir ${settings.dir} is inside the data folder ${config.dataDir}: put backups elsewhere (another disk, ideally)`);
  const schedule = new BackupSchedule({ ...deps, source: backupSourceOf(config, deps.provider), settings: { ...settings, dir: settings.dir } });
  await schedule.start();
  return schedule;
}
