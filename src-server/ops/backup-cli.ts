/**
 * `pustaka backup <dir>` and `pustaka restore <backup>` (docs/backup-restore.md). The work
 * is in `ops/backup.ts`; this module parses flags, opens what the configuration names,
 * audits, and prints. A problem the user can fix is a `ConfigError` (one line, exit 2).
 */
import { existsSync } from "node:fs";
import path from "node:path";
import type { Command } from "commander";
import { InvalidArgumentError } from "commander";
import { ConfigError, type Config } from "../config.js";
import { openAudit } from "../server.js";
import { localKeyFile, openKeyProvider } from "../security/key-providers.js";
import { openSqlDatabase } from "../store/sql-database.js";
import { BackupError, POSTGRES_BACKUP_ADVICE, backupAuditEvent, backupSourceOf, createBackup, refusePostgres, restoreBackup, type BackupResult, type RestoreResult } from "./backup.js";

/** What the CLI program lends: its shared options and how it turns flags into a configuration. */
export interface BackupCliContext {
  withCommonOptions(command: Command): Command;
  configFrom(flags: object): Config;
  version(): string;
}

interface BackupFlags {
  includeKek?: boolean;
  withModels?: boolean;
  keep?: number;
  json?: boolean;
}

interface RestoreFlags {
  kekFile?: string;
  dryRun?: boolean;
  json?: boolean;
}

function count(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError("must be a whole number of at least 1");
  return n;
}

const mb = (bytes: number) => `${(bytes / 1e6).toFixed(1)} MB`;

/** A BackupError is the user's to fix: one line, exit 2. */
async function userErrors<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof BackupError) throw new ConfigError(error.message);
    throw error;
  }
}

/** Registers `backup` and `restore` on the program. */
export function registerBackupCommands(program: Command, context: BackupCliContext): void {
  context
    .withCommonOptions(program.command("backup <dir>").description("back the data folder up into <dir> (a new folder per backup), while the server runs or not"))
    .option("--include-kek", "local key file: put the KEK in the backup (it then restores on its own, so it must be kept as safe as the KEK)")
    .option("--with-models", "copy the model files too (otherwise their names and SHA-256 are recorded)")
    .option("--keep <n>", "keep only the newest <n> complete backups in <dir>", count)
    .option("--json", "print the result as JSON")
    .addHelpText("after", "\nThe KEK is left out unless --include-kek: keep it apart and give it to `pustaka restore --kek-file`.\nAn HSM's KEK never leaves the token: a restore needs the same token (or its backup) and PIN.")
    .action((dir: string, flags: BackupFlags & Record<string, unknown>) => userErrors(() => backup(path.resolve(dir), flags, context)));

  context
    .withCommonOptions(program.command("restore <backup>").description("restore a backup into an empty or new data folder (--data-dir)"))
    .option("--kek-file <file>", "local key file: the KEK of the instance the backup came from, when the backup does not carry it")
    .option("--dry-run", "check the backup (manifest, every file's hash, the KEK, the audit trail) and write nothing")
    .option("--json", "print the result as JSON")
    .action((backupDir: string, flags: RestoreFlags & Record<string, unknown>) => userErrors(() => restore(backupDir, flags, context)));
}

async function backup(dir: string, flags: BackupFlags & Record<string, unknown>, context: BackupCliContext): Promise<void> {
  const config = context.configFrom(flags);
  refusePostgres(config);
  // Checked before anything opens: the local provider would create a KEK in a folder that has none.
  if (!existsSync(path.join(config.dataDir, "pustaka.db"))) throw new ConfigError(`${config.dataDir} is not a Pustaka data folder (it has no pustaka.db): pass --data-dir`);
  const kekFile = localKeyFile(config.security, config.dataDir);
  if (config.security.provider === "local-file" && !existsSync(kekFile)) throw new ConfigError(`no KEK at ${kekFile}: the data folder's key file is missing (security.keyFile names another place?)`);
  const provider = await openKeyProvider(config.security, { dataDir: config.dataDir });
  try {
    const store = await openSqlDatabase({ kind: "sqlite", dataDir: config.dataDir });
    const trail = await openAudit(store, config.dataDir);
    try {
      let result: BackupResult;
      try {
        result = await createBackup(backupSourceOf(config, provider), {
          dir,
          includeKek: flags.includeKek,
          withModels: flags.withModels,
          keep: flags.keep,
          version: context.version(),
          trigger: "cli",
          onProgress: (message) => process.stderr.write(`  ${message}\n`),
        });
      } catch (error) {
        await trail.recordNow(backupAuditEvent(error instanceof Error ? error : new Error(String(error)), { actor: "cli", dir, trigger: "cli" }));
        throw error;
      }
      await trail.recordNow(backupAuditEvent(result, { actor: "cli", dir, trigger: "cli" }));
      printBackup(result, flags.json === true, kekFile);
    } finally {
      await trail.close();
      await store.close();
    }
  } finally {
    await provider.close();
  }
}

function printBackup(result: BackupResult, json: boolean, kekFile: string): void {
  const m = result.manifest;
  if (json) {
    process.stdout.write(`${JSON.stringify({ path: result.path, id: result.id, files: result.files, bytes: result.bytes, ms: result.ms, cleaned: result.cleaned, pruned: result.pruned, contents: m.contents, key_provider: m.key_provider, left_out: m.left_out }, null, 2)}\n`);
    return;
  }
  const out = process.stdout;
  out.write(`backup complete: ${result.path}\n`);
  out.write(`  ${result.files} files, ${mb(result.bytes)}, ${(result.ms / 1000).toFixed(1)} s; ${m.contents.corpora} corpora, ${m.contents.documents} documents (${m.contents.documents_pending} still to index), ${m.contents.chunks} passages, ${m.contents.audit_entries} audit entries\n`);
  if (m.key_provider.kind === "pkcs11") out.write(`  KEK: in the HSM token '${m.key_provider.token_label}' (${m.key_provider.kek_id}); a restore needs that token (or its backup) and its PIN\n`);
  else if (m.key_provider.kek_included) out.write(`  KEK: INCLUDED (${m.key_provider.kek_id}): this backup restores on its own; keep it as safe as the key itself\n`);
  else out.write(`  KEK: not included (${m.key_provider.kek_id}); a restore needs it: keep a copy of ${kekFile} apart and pass it to \`pustaka restore --kek-file\`\n`);
  if (m.contents.originals_missing_at_source.length > 0) out.write(`  warning: ${m.contents.originals_missing_at_source.length} documents had no original in the data folder: ${m.contents.originals_missing_at_source.slice(0, 5).join(", ")}\n`);
  if (result.cleaned.length > 0) out.write(`  removed unfinished backups: ${result.cleaned.join(", ")}\n`);
  if (result.pruned.length > 0) out.write(`  removed old backups: ${result.pruned.join(", ")}\n`);
}

async function restore(backupDir: string, flags: RestoreFlags & Record<string, unknown>, context: BackupCliContext): Promise<void> {
  const config = context.configFrom(flags);
  if (config.database.url) throw new ConfigError(`pustaka restore restores a data folder, not Postgres: ${POSTGRES_BACKUP_ADVICE}`);
  const result = await restoreBackup({
    backup: backupDir,
    dataDir: config.dataDir,
    modelsDir: config.modelsDir,
    security: config.security,
    kekFile: flags.kekFile ? path.resolve(flags.kekFile) : undefined,
    dryRun: flags.dryRun,
    onProgress: (message) => process.stderr.write(`  ${message}\n`),
  });
  printRestore(result, flags.json === true);
  if (!result.audit.valid) process.exitCode = 1;
}

function printRestore(result: RestoreResult, json: boolean): void {
  const m = result.manifest;
  const audit = { valid: result.audit.valid, checked_entries: result.audit.checked_entries, problems: result.audit.problems.slice(0, 10) };
  if (json) {
    process.stdout.write(`${JSON.stringify({ data_dir: result.dryRun ? null : result.dataDir, dry_run: result.dryRun, backup: { id: m.id, name: m.name, created_at: m.created_at }, files: result.files, bytes: result.bytes, kek: result.kek, data_keys: result.dataKeys, audit, models_restored: result.modelsRestored, corpus_models: m.models.corpus_models, ms: result.ms }, null, 2)}\n`);
    return;
  }
  const out = process.stdout;
  out.write(result.dryRun ? `backup verified: ${m.name} (${m.created_at}), nothing written\n` : `restored ${m.name} (${m.created_at}) into ${result.dataDir}\n`);
  out.write(`  ${result.files} files, ${mb(result.bytes)}, every SHA-256 as the manifest lists it; KEK from ${result.kek}; ${result.dataKeys} corpus data keys unwrap\n`);
  out.write(`  audit trail: ${result.audit.valid ? "VALID" : "INVALID"} (${result.audit.checked_entries} entries)\n`);
  for (const p of result.audit.problems.slice(0, 5)) out.write(`    ${p.chain} ${p.reason}${p.seq === null ? "" : ` at ${p.seq}`}: ${p.message}\n`);
  if (m.models.corpus_models.length > 0) {
    out.write(`  the corpora use: ${m.models.corpus_models.join(", ")}\n`);
    for (const model of m.models.files.filter((f) => f.bound_as.length > 0)) out.write(`    ${model.bound_as.join(", ")} was bound to ${path.basename(model.source_path)} (sha256 ${model.sha256.slice(0, 16)}…): bind it again with --model ${model.bound_as[0]}=<file>\n`);
  }
  for (const file of result.modelsRestored) out.write(`  model restored: ${file}\n`);
  if (!result.dryRun) out.write(`  next: pustaka serve --data-dir ${result.dataDir}\n`);
}
