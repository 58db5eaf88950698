/**
 * Signing keys in the shared store (`signing_keys`), for replicas on Postgres: each private
 * key sealed (AES-256-GCM) under its own data key, which the key provider wraps (the local
 * key file or the HSM every replica is configured with), bound to its purpose and key id.
 * Public halves are stored in clear: they are published anyway.
 */
import type { JWK } from "jose";
import { DataCipher, newDataKey } from "./data-cipher.js";
import type { KeyProvider } from "./key-provider.js";
import { AuditSigner } from "./audit-chain.js";
import type { KeyVault, StoredKey } from "./oauth-keys.js";
import type { SqlDatabase } from "../store/sql-database.js";

export class SqlKeyVault implements KeyVault {
  /** Private keys already unsealed, by key id (they never change; retirement is read each time). */
  private readonly unsealed = new Map<string, string>();

  constructor(
    private readonly store: SqlDatabase,
    private readonly provider: KeyProvider,
    private readonly purpose: "oauth" | "audit",
  ) {}

  private aad(kid: string): string {
    return `signing:${this.purpose}:${kid}`;
  }

  /** The key's row: its private half sealed under a fresh data key, which the provider wraps. */
  private async sealedRow(key: StoredKey) {
    const dataKey = newDataKey();
    try {
      const sealed = new DataCipher(dataKey).seal(Buffer.from(key.privateKey, "utf8"), this.aad(key.kid));
      const wrapped = await this.provider.wrapKey(dataKey);
      return { purpose: this.purpose, kid: key.kid, key_provider: this.provider.id, wrapped_key: wrapped, sealed, public_key: JSON.stringify(key.publicJwk), created_at: key.createdAt, retires_at: key.retiresAt };
    } finally {
      dataKey.fill(0);
    }
  }

  async load(): Promise<StoredKey[]> {
    const rows = await this.store.db.selectFrom("signing_keys").selectAll().where("purpose", "=", this.purpose).orderBy("created_at").orderBy("kid").execute();
    const keys: StoredKey[] = [];
    for (const row of rows) {
      let privateKey = this.unsealed.get(row.kid);
      if (privateKey === undefined) {
        const dataKey = await this.provider.unwrapKey(row.wrapped_key);
        try {
          privateKey = new DataCipher(dataKey).open(row.sealed, this.aad(row.kid)).toString("utf8");
        } finally {
          dataKey.fill(0);
        }
        this.unsealed.set(row.kid, privateKey);
      }
      keys.push({ kid: row.kid, privateKey, publicJwk: JSON.parse(row.public_key) as JWK, createdAt: row.created_at, retiresAt: row.retires_at });
    }
    return keys;
  }

  async update(change: { fresh: StoredKey; retire: { kid: string; retiresAt: number }[]; forget: string[] }): Promise<void> {
    const { fresh } = change;
    const row = await this.sealedRow(fresh);
    await this.store.transaction(async (tx) => {
      await tx
        .insertInto("signing_keys")
        .values(row)
        .onConflict((oc) => oc.columns(["purpose", "kid"]).doNothing())
        .execute();
      for (const { kid, retiresAt } of change.retire) {
        // A retirement only ever comes sooner: two replicas rotating at once keep the earlier.
        await tx
          .updateTable("signing_keys")
          .set({ retires_at: retiresAt })
          .where("purpose", "=", this.purpose)
          .where("kid", "=", kid)
          .where((eb) => eb.or([eb("retires_at", "is", null), eb("retires_at", ">", retiresAt)]))
          .execute();
      }
      if (change.forget.length > 0) await tx.deleteFrom("signing_keys").where("purpose", "=", this.purpose).where("kid", "in", change.forget).execute();
    });
    this.unsealed.set(fresh.kid, fresh.privateKey);
  }

  /**
   * Adds `key` unless the vault already holds one (under a lock, so replicas starting
   * together agree on one); returns the oldest key (the one every replica uses).
   */
  async firstOrAdd(key: StoredKey): Promise<StoredKey> {
    const existing = await this.load();
    if (existing.length > 0) return existing[0]!;
    const row = await this.sealedRow(key);
    await this.store.transaction(async (tx) => {
      await this.store.lock(tx, [`signing:${this.purpose}`]);
      const any = await tx.selectFrom("signing_keys").select("kid").where("purpose", "=", this.purpose).limit(1).executeTakeFirst();
      if (any) return;
      await tx.insertInto("signing_keys").values({ ...row, retires_at: null }).execute();
    });
    return (await this.load())[0]!;
  }
}

/** The audit trail's signing key shared by every replica (made by the first to start), as PKCS#8 PEM. */
export async function sharedAuditSigningKey(store: SqlDatabase, provider: KeyProvider, now = Math.floor(Date.now() / 1000)): Promise<string> {
  const fresh = AuditSigner.generatePem();
  const kept = await new SqlKeyVault(store, provider, "audit").firstOrAdd({ kid: fresh.keyId, privateKey: fresh.pem, publicJwk: { kty: "OKP", crv: "Ed25519", spki: fresh.publicKey } as JWK, createdAt: now, retiresAt: null });
  return kept.privateKey;
}
