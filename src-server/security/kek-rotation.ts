/**
 * Key-encryption-key rotation (`pustaka keys rotate-kek`): a new KEK rewraps every stored
 * data key (corpora, including deleted ones still in their retention window, and
 * conversations) without re-encrypting any data. Every key is unwrapped first, then
 * wrapped under the new KEK and checked to unwrap again, and the database takes all new
 * wrapped keys in one transaction; only after it commits are the earlier KEKs retired.
 * A failure anywhere before the commit changes nothing and discards the new KEK.
 *
 * The same run moves keys from one provider to another: keys still wrapped by the local
 * key file when the configuration now names an HSM are rewrapped under the HSM's KEK.
 *
 * The result is what the caller records in the audit log (`kek.rotated`).
 */
import { existsSync } from "node:fs";
import { ServiceError } from "../errors.js";
import type { SqlDatabase } from "../store/sql-database.js";
import { runningServerPid } from "../store/server-pid-file.js";
import { LeaseStore, REPLICA_LEASE_PREFIX } from "../store/lease-store.js";
import { WrappedKeyStore, type WrappedKeyRow } from "../store/wrapped-key-store.js";
import type { KeyProvider, RotatableKeyProvider } from "./key-provider.js";
import { localKeyFile, openKeyProvider, type KeyProviderSettings } from "./key-providers.js";
import { LocalKeyFileProvider } from "./local-key-file-provider.js";

export interface KekRotationResult {
  /** The provider id that wrapped new keys before the rotation. */
  oldProviderId: string;
  /** The provider id every stored key now records. */
  newProviderId: string;
  rewrapped: { corpora: number; conversations: number; responses: number; remoteModels: number; signingKeys: number };
  /** KEKs retired after the commit: a removed key file, destroyed HSM keys (`destroyOld`). */
  retired: string[];
  /** Provider ids the stored keys recorded before, with their counts. */
  before: Record<string, number>;
}

export interface RotateKekOptions {
  /** PKCS#11: destroy the earlier KEKs in the token once nothing refers to them (a key file is always removed). */
  destroyOld?: boolean;
  /** Other providers that may have wrapped stored keys (a previous provider), tried after `provider`. */
  previous?: KeyProvider[];
}

/** Rewraps every wrapped key in the store's database under a new KEK of `provider`. */
export async function rotateKek(store: SqlDatabase, provider: RotatableKeyProvider, options: RotateKekOptions = {}): Promise<KekRotationResult> {
  const keys = new WrappedKeyStore(store);
  const before = await keys.countByProvider();
  const rows = await keys.all();
  const unwrapped: { row: WrappedKeyRow; key: Buffer }[] = [];
  try {
    for (const row of rows) unwrapped.push({ row, key: await unwrapWithAny(row, [provider, ...(options.previous ?? [])]) });
    const kekSwitch = await provider.beginRotation();
    let counts: Record<WrappedKeyRow["kind"], number>;
    try {
      const rewrapped: (WrappedKeyRow & { rewrapped: Buffer })[] = [];
      for (const { row, key } of unwrapped) {
        const wrapped = await provider.wrapKey(key);
        const check = await provider.unwrapKey(wrapped);
        const same = check.equals(key);
        check.fill(0);
        if (!same) throw new ServiceError("server", `the new KEK did not give back the data key of ${row.kind} ${row.id}`, { code: "kek_rotation_failed" });
        rewrapped.push({ ...row, rewrapped: wrapped });
      }
      counts = await keys.replace(rewrapped, kekSwitch.id);
    } catch (error) {
      await kekSwitch.abort();
      throw error;
    }
    const retired = await kekSwitch.commit({ destroyOld: options.destroyOld });
    return { oldProviderId: kekSwitch.previousId, newProviderId: kekSwitch.id, rewrapped: { corpora: counts.corpus, conversations: counts.conversation, responses: counts.response, remoteModels: counts.remote_model, signingKeys: counts.signing_key }, retired, before };
  } finally {
    for (const { key } of unwrapped) key.fill(0);
  }
}

async function unwrapWithAny(row: WrappedKeyRow, providers: KeyProvider[]): Promise<Buffer> {
  let firstError: unknown;
  for (const provider of providers) {
    try {
      return await provider.unwrapKey(row.wrappedKey);
    } catch (error) {
      firstError ??= error;
    }
  }
  throw new ServiceError("server", `cannot unwrap the data key of ${row.kind} ${row.id} (wrapped by ${row.provider}); nothing was rewrapped: ${(firstError as Error)?.message ?? "no provider"}`, {
    code: "kek_rotation_failed",
    cause: firstError,
  });
}

/**
 * The offline command: refuses while a server uses the data directory (it would keep
 * wrapping new keys under the old KEK), opens the configured provider (and the local key
 * file when keys wrapped by it remain), rotates, and closes what it opened.
 */
export async function rotateConfiguredKek(store: SqlDatabase, settings: KeyProviderSettings, options: { dataDir: string; destroyOld?: boolean }): Promise<KekRotationResult> {
  const pid = runningServerPid(options.dataDir);
  if (pid !== null) {
    throw new ServiceError("conflict", `a Pustaka server (pid ${pid}) is using ${options.dataDir}; stop it before rotating the key-encryption key`, { code: "server_running" });
  }
  // Replicas sharing the store hold a heartbeat lease each: one still running would go on
  // wrapping new keys under the KEK this rotation retires.
  const replicas = await new LeaseStore(store).live(REPLICA_LEASE_PREFIX);
  if (replicas.length > 0) {
    throw new ServiceError("conflict", `replicas are still serving this database (${replicas.map((r) => r.holder).join(", ")}); stop every replica before rotating the key-encryption key`, { code: "server_running" });
  }
  const provider = await openKeyProvider(settings, { dataDir: options.dataDir });
  const previous: KeyProvider[] = [];
  try {
    const keyFile = localKeyFile(settings, options.dataDir);
    const wrappedByFile = Object.keys(await new WrappedKeyStore(store).countByProvider()).some((id) => id.startsWith("local-file:"));
    if (settings.provider !== "local-file" && wrappedByFile && existsSync(keyFile)) previous.push(new LocalKeyFileProvider(keyFile));
    return await rotateKek(store, provider, { destroyOld: options.destroyOld, previous });
  } finally {
    for (const p of previous) await p.close();
    await provider.close();
  }
}
