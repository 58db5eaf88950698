import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, describe, it } from "node:test";
import type { Log } from "./log.js";
import { API_KEY_PATTERN, generateApiKey, loadUiCredential, type SafeStorageLike } from "./ui-credential.js";

/** Stands in for the OS keychain: reversible, but the output never contains the input. */
class FakeSafeStorage implements SafeStorageLike {
  encrypted = 0;
  constructor(
    private available = true,
    private backend = "gnome_libsecret",
  ) {}
  isEncryptionAvailable = () => this.available;
  getSelectedStorageBackend = () => this.backend;
  encryptString = (plain: string): Buffer => {
    if (!this.available) throw new Error("unavailable");
    this.encrypted += 1;
    return Buffer.from(`v10:${Buffer.from(Buffer.from(plain).map((b) => b ^ 0x5a)).toString("base64")}`);
  };
  decryptString = (data: Buffer): string => {
    const text = data.toString();
    if (!text.startsWith("v10:")) throw new Error("Error while decrypting the ciphertext provided to safeStorage.decryptString.");
    return Buffer.from(Buffer.from(text.slice(4), "base64").map((b) => b ^ 0x5a)).toString();
  };
}

function recordingLog(): Log & { lines: string[] } {
  const lines: string[] = [];
  const record = (level: string) => (message: string, fields?: Record<string, unknown>) => void lines.push(`${level} ${message} ${JSON.stringify(fields ?? {})}`);
  return { lines, info: record("info"), warn: record("warn"), error: record("error") };
}

const root = mkdtempSync(path.join(os.tmpdir(), "pustaka-credential-"));
after(() => rmSync(root, { recursive: true, force: true }));
let n = 0;
const keyFile = () => path.join(root, `case-${++n}`, "ui-key.bin");

describe("the workbench API key", () => {
  it("is created on first run, in the server's format, and stored only encrypted", () => {
    const file = keyFile();
    const safeStorage = new FakeSafeStorage();
    const { key, persisted } = loadUiCredential({ safeStorage, file, log: recordingLog() });
    assert.match(key, API_KEY_PATTERN);
    assert.equal(persisted, true);
    assert.equal(safeStorage.encrypted, 1);
    const stored = readFileSync(file);
    assert.ok(!stored.includes(key), "the file does not hold the key in clear");
    assert.ok(!stored.includes(key.slice(4, 20)), "nor any recognisable part of it");
    if (process.platform !== "win32") assert.equal(statSync(file).mode & 0o777, 0o600);
  });

  it("is reused on the next start without encrypting again", () => {
    const file = keyFile();
    const first = loadUiCredential({ safeStorage: new FakeSafeStorage(), file, log: recordingLog() });
    const before = readFileSync(file);
    const safeStorage = new FakeSafeStorage();
    const second = loadUiCredential({ safeStorage, file, log: recordingLog() });
    assert.equal(second.key, first.key);
    assert.equal(safeStorage.encrypted, 0);
    assert.deepEqual(readFileSync(file), before);
  });

  it("is never stored when encryption is unavailable: a fresh key per start, and the log says why", () => {
    const file = keyFile();
    const log = recordingLog();
    const a = loadUiCredential({ safeStorage: new FakeSafeStorage(false), file, log });
    const b = loadUiCredential({ safeStorage: new FakeSafeStorage(false), file, log });
    assert.match(a.key, API_KEY_PATTERN);
    assert.notEqual(a.key, b.key);
    assert.equal(a.persisted, false);
    assert.equal(existsSync(file), false);
    assert.equal(existsSync(path.dirname(file)), false, "nothing was written at all");
    assert.match(log.lines[0]!, /^warn .*not stored because it would be in clear.*safeStorage encryption is not available/);
  });

  it("treats Linux's basic_text backend (a hard-coded key) as no encryption", () => {
    const file = keyFile();
    const log = recordingLog();
    const safeStorage = new FakeSafeStorage(true, "basic_text");
    const { persisted } = loadUiCredential({ safeStorage, file, log });
    assert.equal(persisted, false);
    assert.equal(safeStorage.encrypted, 0);
    assert.equal(existsSync(file), false);
    assert.match(log.lines.join("\n"), /basic_text/);
  });

  it("replaces a key that cannot be decrypted (keychain changed) with a new encrypted one", () => {
    const file = keyFile();
    loadUiCredential({ safeStorage: new FakeSafeStorage(), file, log: recordingLog() });
    writeFileSync(file, "garbage from another keychain");
    const log = recordingLog();
    const { key, persisted } = loadUiCredential({ safeStorage: new FakeSafeStorage(), file, log });
    assert.equal(persisted, true);
    assert.match(key, API_KEY_PATTERN);
    assert.equal(new FakeSafeStorage().decryptString(readFileSync(file)), key);
    assert.match(log.lines.join("\n"), /cannot be decrypted/);
  });

  it("generates distinct psk- keys of 43 base62 characters", () => {
    const keys = new Set(Array.from({ length: 200 }, generateApiKey));
    assert.equal(keys.size, 200);
    for (const key of keys) assert.match(key, API_KEY_PATTERN);
    const chars = new Set([...keys].flatMap((k) => [...k.slice(4)]));
    assert.ok(chars.size > 55, "the whole base62 alphabet is used");
  });
});
