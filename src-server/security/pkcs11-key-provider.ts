/**
 * KEK inside a PKCS#11 token: a hardware security module in production (any vendor's
 * module), SoftHSM2 in tests. The KEK is an AES-256 key generated in the token: a
 * private token object, sensitive, never extractable, allowed to encrypt and decrypt and
 * nothing else. Data keys are wrapped and unwrapped inside the token with AES-256-GCM
 * (CKM_AES_GCM, authenticated): a wrapped key is
 * `format(1) | idLength(1) | the KEK's CKA_ID | iv(12) | ciphertext(32) | tag(16)`, and
 * the header is part of the additional authenticated data, so each wrapped key names the
 * KEK that wrapped it and cannot be moved to another.
 *
 * Rotation adds a KEK under the same label with the next generation in its CKA_ID
 * (`v<generation>.<random hex>`): the highest generation wraps, every KEK with the label
 * unwraps, and earlier ones are destroyed only when asked. A token key with another kind
 * of CKA_ID counts as generation 0.
 *
 * One session per provider, logged in as the user with the PIN from the configuration.
 * Encryption and decryption run on libuv's pool (a network HSM does not stall the event
 * loop); a queue serializes the session's operations. A session lost to an HSM restart
 * is reopened once per operation.
 */
import { randomBytes } from "node:crypto";
import { realpathSync } from "node:fs";
import os from "node:os";
import pkcs11js, { type GcmParams, type Mechanism, type PKCS11 } from "pkcs11js";
import { ServiceError } from "../errors.js";
import type { KekSwitch, RotatableKeyProvider } from "./key-provider.js";

export interface Pkcs11Settings {
  /** Path of the vendor's PKCS#11 module (`.so`, `.dylib`, `.dll`). */
  module: string;
  tokenLabel: string;
  keyLabel: string;
  /** Returns the user PIN (the configuration reads it from an environment variable or a file). */
  readPin: () => string;
}

const FORMAT = 0x81;
const IV_BYTES = 12;
const TAG_BYTES = 16;
const AAD_PREFIX = Buffer.from("pustaka:wrapped-data-key:pkcs11:v1|", "utf8");
/** Errors after which the session is reopened and the operation tried once more. */
const SESSION_LOST = new Set([
  pkcs11js.CKR_SESSION_HANDLE_INVALID,
  pkcs11js.CKR_SESSION_CLOSED,
  pkcs11js.CKR_DEVICE_REMOVED,
  pkcs11js.CKR_TOKEN_NOT_PRESENT,
  pkcs11js.CKR_USER_NOT_LOGGED_IN,
]);

interface Kek {
  handle: Buffer;
  /** CKA_ID. */
  id: Buffer;
  generation: number;
  providerId: string;
}

function unavailable(code: string, message: string, cause?: unknown): ServiceError {
  return new ServiceError("unavailable", message, { code, cause });
}

function ckr(error: unknown): number | undefined {
  return (error as { name?: string }).name === "Pkcs11Error" ? (error as { code: number }).code : undefined;
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** A CK_ULONG attribute value (native width and byte order). */
function ulong(value: Buffer): number {
  if (value.length === 8) return Number(os.endianness() === "LE" ? value.readBigUInt64LE() : value.readBigUInt64BE());
  return os.endianness() === "LE" ? value.readUInt32LE() : value.readUInt32BE();
}

const bool = (value: Buffer | undefined) => value !== undefined && value.length > 0 && value[0] !== 0;

/** A module is loaded and initialized once per process (C_Initialize is process-wide); providers share it. */
interface LoadedModule {
  lib: PKCS11;
  refs: number;
  /** Whether this process's C_Initialize was ours (then C_Finalize is ours too). */
  initialized: boolean;
  /** Open provider sessions per slot: the login is per token and application, so the last one logs out. */
  sessions: Map<string, number>;
}
const modules = new Map<string, LoadedModule>();

function acquireModule(file: string): { key: string; module: LoadedModule } {
  let key: string;
  try {
    key = realpathSync(file);
  } catch (error) {
    throw unavailable("hsm_module_not_found", `PKCS#11 module ${file} not found (security.pkcs11.module): ${describe(error)}`, error);
  }
  let module = modules.get(key);
  if (!module) {
    const lib = new pkcs11js.PKCS11();
    try {
      lib.load(key);
    } catch (error) {
      throw unavailable("hsm_module_not_found", `cannot load the PKCS#11 module ${file} (security.pkcs11.module): ${describe(error)}`, error);
    }
    let initialized = true;
    try {
      lib.C_Initialize({ flags: pkcs11js.CKF_OS_LOCKING_OK });
    } catch (error) {
      if (ckr(error) !== pkcs11js.CKR_CRYPTOKI_ALREADY_INITIALIZED) {
        lib.close();
        throw unavailable("hsm_unavailable", `the PKCS#11 module ${file} failed to initialize: ${describe(error)}`, error);
      }
      initialized = false;
    }
    module = { lib, refs: 0, initialized, sessions: new Map() };
    modules.set(key, module);
  }
  module.refs += 1;
  return { key, module };
}

function releaseModule(key: string): void {
  const module = modules.get(key);
  if (!module) return;
  module.refs -= 1;
  if (module.refs > 0) return;
  modules.delete(key);
  try {
    if (module.initialized) module.lib.C_Finalize();
  } finally {
    module.lib.close();
  }
}

export class Pkcs11KeyProvider implements RotatableKeyProvider {
  private readonly lib: PKCS11;
  private session: Buffer | undefined;
  private slot: Buffer | undefined;
  private keks = new Map<string, Kek>();
  private current!: Kek;
  private queue: Promise<unknown> = Promise.resolve();
  private closed = false;
  /** Whether `open` generated the KEK (first use with `create`). */
  created = false;

  private constructor(
    private readonly settings: Pkcs11Settings,
    private readonly moduleKey: string,
    private readonly module: LoadedModule,
  ) {
    this.lib = module.lib;
  }

  /**
   * Loads the module, finds the token by label, logs in and finds the KEK by label.
   * With `create`, a missing KEK is generated in the token; otherwise it is an error
   * (`pustaka keys init-hsm` creates it). Errors name what to fix.
   */
  static open(settings: Pkcs11Settings, options: { create?: boolean } = {}): Promise<Pkcs11KeyProvider> {
    let acquired: ReturnType<typeof acquireModule>;
    try {
      acquired = acquireModule(settings.module);
    } catch (error) {
      return Promise.reject(error instanceof Error ? error : new Error(String(error)));
    }
    const provider = new Pkcs11KeyProvider(settings, acquired.key, acquired.module);
    try {
      provider.connect();
      const keks = provider.findKeks();
      if (keks.length === 0) {
        if (!options.create) {
          throw unavailable(
            "hsm_key_not_found",
            `no key labelled '${settings.keyLabel}' in token '${settings.tokenLabel}' (security.pkcs11.keyLabel): create it with \`pustaka keys init-hsm\``,
          );
        }
        keks.push(provider.generateKek(1));
        provider.created = true;
      }
      provider.adopt(keks);
      return Promise.resolve(provider);
    } catch (error) {
      provider.disconnect();
      return Promise.reject(error instanceof Error ? error : new Error(String(error)));
    }
  }

  get id(): string {
    return this.current.providerId;
  }

  /** Provider ids of every KEK with the label in the token, newest first. */
  kekIds(): string[] {
    return [...this.keks.values()].sort((a, b) => b.generation - a.generation).map((k) => k.providerId);
  }

  wrapKey(dataKey: Buffer): Promise<Buffer> {
    return this.serial(async () => {
      const kek = this.current;
      const header = Buffer.concat([Buffer.from([FORMAT, kek.id.length]), kek.id]);
      const iv = randomBytes(IV_BYTES);
      const sealed = await this.withSession(async (session) => {
        this.lib.C_EncryptInit(session, this.gcm(iv, header), this.keks.get(kek.id.toString("hex"))?.handle ?? kek.handle);
        return Buffer.from(await this.lib.C_EncryptAsync(session, dataKey, Buffer.alloc(dataKey.length + TAG_BYTES)));
      });
      return Buffer.concat([header, iv, sealed]);
    });
  }

  unwrapKey(wrapped: Buffer): Promise<Buffer> {
    return this.serial(async () => {
      if (wrapped.length < 2 || wrapped[0] !== FORMAT) {
        throw new Error("not a data key wrapped by a PKCS#11 KEK (wrapped by another key provider? `pustaka keys rotate-kek` rewraps such keys)");
      }
      const headerLength = 2 + wrapped[1]!;
      if (wrapped.length < headerLength + IV_BYTES + TAG_BYTES + 1) throw new Error("the wrapped data key is truncated");
      const header = wrapped.subarray(0, headerLength);
      const id = header.subarray(2);
      let kek = this.keks.get(id.toString("hex"));
      if (!kek) {
        // Another process (a rotation) may have added it since this provider opened.
        this.adopt(this.findKeks(), this.current);
        kek = this.keks.get(id.toString("hex"));
      }
      if (!kek) throw new Error(`the KEK that wrapped this data key (${this.providerId(id)}) is not in the token; was it destroyed?`);
      const iv = wrapped.subarray(headerLength, headerLength + IV_BYTES);
      const sealed = wrapped.subarray(headerLength + IV_BYTES);
      return this.withSession(async (session) => {
        // Looked up again: a reopened session finds the keys anew.
        const handle = this.keks.get(id.toString("hex"))?.handle ?? kek.handle;
        this.lib.C_DecryptInit(session, this.gcm(iv, header), handle);
        const out = Buffer.alloc(sealed.length);
        try {
          const plain = await this.lib.C_DecryptAsync(session, sealed, out);
          return Buffer.from(plain);
        } catch (error) {
          if (SESSION_LOST.has(ckr(error) ?? -1)) throw error;
          throw new Error("the wrapped data key was altered, or was not wrapped by this KEK", { cause: error });
        } finally {
          out.fill(0);
        }
      });
    });
  }

  /** Generates the next generation's KEK in the token and makes it the one that wraps. */
  beginRotation(): Promise<KekSwitch> {
    return this.serial(() => {
      const previous = this.current;
      const keks = this.findKeks();
      const fresh = this.generateKek(Math.max(0, ...keks.map((k) => k.generation)) + 1);
      this.adopt([...keks, fresh]);
      let settled = false;
      const settle = () => {
        if (settled) throw new Error("this rotation is already settled");
        settled = true;
      };
      return Promise.resolve({
        previousId: previous.providerId,
        id: fresh.providerId,
        commit: (options: { destroyOld?: boolean } = {}) =>
          this.serial(() => {
            settle();
            if (!options.destroyOld) return Promise.resolve([]);
            const old = [...this.keks.values()].filter((k) => k !== this.current);
            for (const kek of old) {
              this.lib.C_DestroyObject(this.requireSession(), kek.handle);
              this.keks.delete(kek.id.toString("hex"));
            }
            return Promise.resolve(old.map((k) => k.providerId));
          }),
        abort: () =>
          this.serial(() => {
            settle();
            this.lib.C_DestroyObject(this.requireSession(), fresh.handle);
            this.keks.delete(fresh.id.toString("hex"));
            this.current = previous;
            return Promise.resolve();
          }),
      });
    });
  }

  /** Logs out (with the last session on the token), closes the session and finalizes the module with its last user. */
  close(): Promise<void> {
    return this.serial(() => {
      if (!this.closed) {
        this.closed = true;
        this.disconnect();
      }
      return Promise.resolve();
    });
  }

  /** Runs `operation` after every earlier one of this provider has settled. */
  private serial<T>(operation: () => Promise<T>): Promise<T> {
    const run = this.queue.then(() => {
      if (this.closed) throw new Error("the PKCS#11 key provider is closed");
      return operation();
    });
    this.queue = run.catch(() => undefined);
    return run;
  }

  /** Runs `operation` on the session; a session lost to the HSM is reopened and the operation tried once more. */
  private async withSession<T>(operation: (session: Buffer) => Promise<T>): Promise<T> {
    try {
      return await operation(this.requireSession());
    } catch (error) {
      if (!SESSION_LOST.has(ckr(error) ?? -1)) throw error;
      this.disconnectSession();
      this.connect();
      this.adopt(this.findKeks(), this.current);
      return operation(this.requireSession());
    }
  }

  private requireSession(): Buffer {
    if (!this.session) this.connect();
    return this.session!;
  }

  private connect(): void {
    const { tokenLabel } = this.settings;
    const labels: string[] = [];
    let slot: Buffer | undefined;
    for (const candidate of this.lib.C_GetSlotList(true)) {
      const label = this.lib.C_GetTokenInfo(candidate).label.trimEnd();
      if (label) labels.push(label);
      if (label === tokenLabel && !slot) slot = candidate;
    }
    if (!slot) {
      throw unavailable(
        "hsm_token_not_found",
        `no token labelled '${tokenLabel}' in the PKCS#11 module ${this.settings.module} (security.pkcs11.tokenLabel); tokens present: ${labels.length ? labels.map((l) => `'${l}'`).join(", ") : "none"}`,
      );
    }
    const session = this.lib.C_OpenSession(slot, pkcs11js.CKF_SERIAL_SESSION | pkcs11js.CKF_RW_SESSION);
    try {
      const pin = this.settings.readPin();
      this.lib.C_Login(session, pkcs11js.CKU_USER, pin);
    } catch (error) {
      const code = ckr(error);
      if (code !== pkcs11js.CKR_USER_ALREADY_LOGGED_IN) {
        this.lib.C_CloseSession(session);
        if (code === pkcs11js.CKR_PIN_INCORRECT) throw unavailable("hsm_pin_incorrect", `wrong PIN for token '${tokenLabel}' (check security.pkcs11.pinEnv or pinFile)`, error);
        if (code === pkcs11js.CKR_PIN_LOCKED) throw unavailable("hsm_pin_locked", `the user PIN of token '${tokenLabel}' is locked; the security officer must reset it`, error);
        if (code === pkcs11js.CKR_PIN_LEN_RANGE) throw unavailable("hsm_pin_incorrect", `the PIN for token '${tokenLabel}' has a length the token refuses`, error);
        if (code === undefined && (error as Error).name !== "NativeError") throw error;
        throw unavailable("hsm_unavailable", `cannot log in to token '${tokenLabel}': ${describe(error)}`, error);
      }
    }
    this.session = session;
    this.slot = slot;
    const slotKey = slot.toString("hex");
    this.module.sessions.set(slotKey, (this.module.sessions.get(slotKey) ?? 0) + 1);
  }

  private disconnectSession(): void {
    const session = this.session;
    const slot = this.slot;
    this.session = undefined;
    this.slot = undefined;
    if (!session || !slot) return;
    const slotKey = slot.toString("hex");
    const left = (this.module.sessions.get(slotKey) ?? 1) - 1;
    if (left > 0) this.module.sessions.set(slotKey, left);
    else this.module.sessions.delete(slotKey);
    try {
      if (left === 0) this.lib.C_Logout(session);
    } catch {
      // a lost session is logged out already
    }
    try {
      this.lib.C_CloseSession(session);
    } catch {
      // already closed by the token
    }
  }

  private disconnect(): void {
    try {
      this.disconnectSession();
    } finally {
      releaseModule(this.moduleKey);
    }
  }

  /** Every AES key with the configured label in the token. */
  private findKeks(): Kek[] {
    const session = this.requireSession();
    this.lib.C_FindObjectsInit(session, [
      { type: pkcs11js.CKA_CLASS, value: pkcs11js.CKO_SECRET_KEY },
      { type: pkcs11js.CKA_KEY_TYPE, value: pkcs11js.CKK_AES },
      { type: pkcs11js.CKA_LABEL, value: this.settings.keyLabel },
    ]);
    const handles: Buffer[] = [];
    try {
      for (let batch = this.lib.C_FindObjects(session, 32); batch.length > 0; batch = this.lib.C_FindObjects(session, 32)) handles.push(...batch);
    } finally {
      this.lib.C_FindObjectsFinal(session);
    }
    return handles.map((handle) => {
      const attributes = this.lib.C_GetAttributeValue(session, handle, [
        { type: pkcs11js.CKA_ID },
        { type: pkcs11js.CKA_VALUE_LEN },
        { type: pkcs11js.CKA_SENSITIVE },
        { type: pkcs11js.CKA_EXTRACTABLE },
        { type: pkcs11js.CKA_ENCRYPT },
        { type: pkcs11js.CKA_DECRYPT },
      ]);
      const value = (type: number) => attributes.find((a) => a.type === type)?.value;
      const id = Buffer.from(value(pkcs11js.CKA_ID) ?? Buffer.alloc(0));
      const where = `key '${this.settings.keyLabel}' (${this.providerId(id)}) in token '${this.settings.tokenLabel}'`;
      if (!bool(value(pkcs11js.CKA_SENSITIVE)) || bool(value(pkcs11js.CKA_EXTRACTABLE))) {
        throw unavailable("hsm_key_unsuitable", `${where} can leave the token (CKA_SENSITIVE false or CKA_EXTRACTABLE true); a KEK must not: create one with \`pustaka keys init-hsm\``);
      }
      if (!bool(value(pkcs11js.CKA_ENCRYPT)) || !bool(value(pkcs11js.CKA_DECRYPT))) {
        throw unavailable("hsm_key_unsuitable", `${where} is not allowed to encrypt and decrypt (CKA_ENCRYPT, CKA_DECRYPT)`);
      }
      const length = value(pkcs11js.CKA_VALUE_LEN);
      if (length && ulong(length) !== 32) throw unavailable("hsm_key_unsuitable", `${where} is not an AES-256 key`);
      if (id.length > 255) throw unavailable("hsm_key_unsuitable", `${where} has a CKA_ID longer than 255 bytes`);
      const generation = Number(/^v(\d{1,9})\./.exec(id.toString("latin1"))?.[1] ?? 0);
      return { handle, id, generation, providerId: this.providerId(id) };
    });
  }

  /** Takes `keks` as the keys of the label; the highest generation wraps (unless `keep` says which). */
  private adopt(keks: Kek[], keep?: Kek): void {
    this.keks = new Map(keks.map((k) => [k.id.toString("hex"), k]));
    const newest = Math.max(...keks.map((k) => k.generation));
    const top = keks.filter((k) => k.generation === newest);
    if (top.length > 1) {
      throw unavailable(
        "hsm_key_ambiguous",
        `several keys labelled '${this.settings.keyLabel}' in token '${this.settings.tokenLabel}' share generation ${newest} (${top.map((k) => k.providerId).join(", ")}); keep one or give them distinct CKA_IDs`,
      );
    }
    this.current = (keep && this.keks.get(keep.id.toString("hex"))) ?? top[0]!;
  }

  private generateKek(generation: number): Kek {
    const id = Buffer.from(`v${generation}.${randomBytes(4).toString("hex")}`, "latin1");
    const handle = this.lib.C_GenerateKey(this.requireSession(), { mechanism: pkcs11js.CKM_AES_KEY_GEN }, [
      { type: pkcs11js.CKA_CLASS, value: pkcs11js.CKO_SECRET_KEY },
      { type: pkcs11js.CKA_KEY_TYPE, value: pkcs11js.CKK_AES },
      { type: pkcs11js.CKA_VALUE_LEN, value: 32 },
      { type: pkcs11js.CKA_TOKEN, value: true },
      { type: pkcs11js.CKA_PRIVATE, value: true },
      { type: pkcs11js.CKA_SENSITIVE, value: true },
      { type: pkcs11js.CKA_EXTRACTABLE, value: false },
      { type: pkcs11js.CKA_ENCRYPT, value: true },
      { type: pkcs11js.CKA_DECRYPT, value: true },
      { type: pkcs11js.CKA_WRAP, value: false },
      { type: pkcs11js.CKA_UNWRAP, value: false },
      { type: pkcs11js.CKA_SIGN, value: false },
      { type: pkcs11js.CKA_VERIFY, value: false },
      { type: pkcs11js.CKA_DERIVE, value: false },
      { type: pkcs11js.CKA_LABEL, value: this.settings.keyLabel },
      { type: pkcs11js.CKA_ID, value: id },
    ]);
    return { handle, id, generation, providerId: this.providerId(id) };
  }

  private gcm(iv: Buffer, header: Buffer): Mechanism {
    const parameter: GcmParams = { type: pkcs11js.CK_PARAMS_GCM, iv, ivBits: IV_BYTES * 8, aad: Buffer.concat([AAD_PREFIX, header]), tagBits: TAG_BYTES * 8 };
    return { mechanism: pkcs11js.CKM_AES_GCM, parameter };
  }

  /** `pkcs11:<token>/<key label>:<CKA_ID>` (the id as text when printable, else hex). */
  private providerId(id: Buffer): string {
    const text = id.toString("latin1");
    const shown = id.length > 0 && /^[\x21-\x7e]+$/.test(text) ? text : id.toString("hex");
    return `pkcs11:${this.settings.tokenLabel}/${this.settings.keyLabel}:${shown}`;
  }
}
