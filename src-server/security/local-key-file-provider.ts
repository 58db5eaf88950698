/**
 * KEK in a local file (`<data-dir>/keys/kek.bin`, mode 0600), created on first use.
 * For development and single-user machines (the server says so when it starts); a
 * hardware security module (`pkcs11-key-provider.ts`) keeps the KEK out of the file system.
 *
 * Rotation writes a new key file and keeps the old one beside it as
 * `kek.bin.<n>.retired` until every stored key is rewrapped, then removes it. A retired
 * file found at start (a rotation that crashed before committing) still unwraps, so a
 * crash never strands data and `pustaka keys rotate-kek` can simply be run again.
 */
import { createHash } from "node:crypto";
import { closeSync, copyFileSync, constants, fsyncSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync, rmSync, writeSync } from "node:fs";
import path from "node:path";
import { DataCipher, newDataKey } from "./data-cipher.js";
import type { KekSwitch, RotatableKeyProvider } from "./key-provider.js";

const WRAP_AAD = "pustaka:wrapped-data-key:v1";

interface Kek {
  id: string;
  cipher: DataCipher;
  /** The retired file it was read from; absent for the current key. */
  file?: string;
}

function loadKek(key: Buffer, file?: string): Kek {
  if (key.length !== 32) throw new Error(`key file ${file ?? ""} must hold exactly 32 bytes`);
  return { id: `local-file:${createHash("sha256").update(key).digest("hex").slice(0, 16)}`, cipher: new DataCipher(key), file };
}

/** Writes `key` to a new file (0600) and flushes it to disk. */
function writeKeyFile(file: string, key: Buffer): void {
  const fd = openSync(file, "wx", 0o600);
  try {
    writeSync(fd, key);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** Overwrites a key file with zeros, then removes it. */
function destroyKeyFile(file: string): void {
  try {
    const fd = openSync(file, "r+");
    try {
      writeSync(fd, Buffer.alloc(32), 0, 32, 0);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  } catch {
    // removed anyway below
  }
  rmSync(file, { force: true });
}

export class LocalKeyFileProvider implements RotatableKeyProvider {
  private current: Kek;
  /** Earlier KEKs (retired files), tried when the current one cannot unwrap. */
  private retired: Kek[] = [];

  /** Reads the KEK from `file`, creating a random one (0600) when the file does not exist. */
  constructor(private readonly file: string) {
    let kek: Buffer;
    try {
      kek = readFileSync(file);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
      mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
      kek = newDataKey();
      writeKeyFile(file, kek);
    }
    this.current = loadKek(kek, undefined);
    kek.fill(0);
    for (const retired of this.retiredFiles()) {
      const key = readFileSync(retired);
      this.retired.push(loadKek(key, retired));
      key.fill(0);
    }
  }

  get id(): string {
    return this.current.id;
  }

  wrapKey(dataKey: Buffer): Promise<Buffer> {
    return Promise.resolve(this.current.cipher.seal(dataKey, WRAP_AAD));
  }

  unwrapKey(wrapped: Buffer): Promise<Buffer> {
    try {
      return Promise.resolve(this.current.cipher.open(wrapped, WRAP_AAD));
    } catch (error) {
      for (const kek of this.retired) {
        try {
          return Promise.resolve(kek.cipher.open(wrapped, WRAP_AAD));
        } catch {
          // try the next one
        }
      }
      return Promise.reject(error instanceof Error ? error : new Error(String(error)));
    }
  }

  /** New key file in place, the old one kept as `<file>.<n>.retired` until `commit`. */
  beginRotation(): Promise<KekSwitch> {
    const previous = this.current;
    const retiredFile = this.nextRetiredName();
    const fresh = newDataKey();
    const staged = `${this.file}.new`;
    rmSync(staged, { force: true });
    writeKeyFile(staged, fresh);
    // The old key is copied aside before the new one replaces it: at every moment the
    // key file holds one complete key and no key is lost.
    copyFileSync(this.file, retiredFile, constants.COPYFILE_EXCL);
    renameSync(staged, this.file);
    this.current = loadKek(fresh);
    fresh.fill(0);
    this.retired.unshift({ ...previous, file: retiredFile });
    let settled = false;
    return Promise.resolve({
      previousId: previous.id,
      id: this.current.id,
      commit: () => {
        if (settled) throw new Error("this rotation is already settled");
        settled = true;
        const ids = [...new Set(this.retired.map((k) => k.id))];
        for (const kek of this.retired) if (kek.file) destroyKeyFile(kek.file);
        this.retired = [];
        return Promise.resolve(ids);
      },
      abort: () => {
        if (settled) throw new Error("this rotation is already settled");
        settled = true;
        renameSync(retiredFile, this.file);
        this.current = previous;
        this.retired = this.retired.filter((k) => k.file !== retiredFile);
        return Promise.resolve();
      },
    });
  }

  close(): Promise<void> {
    return Promise.resolve();
  }

  private retiredFiles(): string[] {
    const base = path.basename(this.file);
    const pattern = new RegExp(`^${base.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}\\.(\\d+)\\.retired$`);
    let names: string[];
    try {
      names = readdirSync(path.dirname(this.file));
    } catch {
      return [];
    }
    return names
      .map((name) => ({ name, n: Number(pattern.exec(name)?.[1] ?? NaN) }))
      .filter((e) => Number.isInteger(e.n))
      .sort((a, b) => b.n - a.n)
      .map((e) => path.join(path.dirname(this.file), e.name));
  }

  private nextRetiredName(): string {
    const taken = this.retiredFiles().map((f) => Number(/\.(\d+)\.retired$/.exec(f)?.[1] ?? 0));
    return `${this.file}.${Math.max(0, ...taken) + 1}.retired`;
  }
}
