/**
 * SoftHSM2 tokens in a temporary folder, for tests of the PKCS#11 key provider. The
 * first call points SOFTHSM2_CONF at a private configuration (read by the module when it
 * initializes), so tests never touch the machine's tokens. SoftHSM2 missing is a loud
 * failure, never a skip: `apt-get install softhsm2` (`.ci/run` does).
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { randomBase62 } from "../../src-server/ids.js";

const MODULE_CANDIDATES = [
  "/usr/lib/softhsm/libsofthsm2.so",
  `/usr/lib/${process.arch === "arm64" ? "aarch64" : "x86_64"}-linux-gnu/softhsm/libsofthsm2.so`,
  "/usr/local/lib/softhsm/libsofthsm2.so",
  "/opt/homebrew/lib/softhsm/libsofthsm2.so",
  "/usr/lib64/pkcs11/libsofthsm2.so",
];

export interface SoftHsmToken {
  module: string;
  tokenLabel: string;
  pin: string;
  soPin: string;
  /** `config.security.pkcs11` / `Pkcs11Settings` for this token. */
  settings(keyLabel?: string): { module: string; tokenLabel: string; keyLabel: string; readPin: () => string };
}

let root: string | undefined;

/** The SoftHSM2 module on this machine (SOFTHSM2_MODULE overrides); throws when SoftHSM2 is not installed. */
export function softHsmModule(): string {
  const candidates = process.env.SOFTHSM2_MODULE ? [process.env.SOFTHSM2_MODULE] : MODULE_CANDIDATES;
  const found = candidates.find((file) => existsSync(file));
  if (!found) throw new Error(`SoftHSM2 is not installed (no libsofthsm2.so in ${candidates.join(", ")}): run \`apt-get install softhsm2\` (.ci/run installs it)`);
  return found;
}

function softHsmRoot(): string {
  if (root) return root;
  const dir = mkdtempSync(path.join(os.tmpdir(), "pustaka-softhsm-"));
  mkdirSync(path.join(dir, "tokens"), { mode: 0o700 });
  const conf = path.join(dir, "softhsm2.conf");
  writeFileSync(conf, `directories.tokendir = ${path.join(dir, "tokens")}\nobjectstore.backend = file\nlog.level = ERROR\nslots.removable = false\n`);
  process.env.SOFTHSM2_CONF = conf;
  process.on("exit", () => rmSync(dir, { recursive: true, force: true }));
  root = dir;
  return dir;
}

/** Initializes a fresh token (its own label and PINs) in the private token folder. */
export function createSoftHsmToken(label = `pustaka-${randomBase62(6)}`): SoftHsmToken {
  const module = softHsmModule();
  softHsmRoot();
  const pin = `pin-${randomBase62(8)}`;
  const soPin = `so-${randomBase62(8)}`;
  try {
    execFileSync("softhsm2-util", ["--init-token", "--free", "--label", label, "--pin", pin, "--so-pin", soPin], { env: process.env, stdio: ["ignore", "pipe", "pipe"] });
  } catch (error) {
    const e = error as NodeJS.ErrnoException & { stderr?: Buffer };
    if (e.code === "ENOENT") throw new Error("softhsm2-util is not installed: run `apt-get install softhsm2` (.ci/run installs it)");
    throw new Error(`softhsm2-util --init-token failed: ${e.stderr?.toString() ?? e.message}`);
  }
  return {
    module,
    tokenLabel: label,
    pin,
    soPin,
    settings: (keyLabel = "pustaka-kek") => ({ module, tokenLabel: label, keyLabel, readPin: () => pin }),
  };
}
