/** The `security` block: provider choice, the HSM settings and the PIN, which never becomes a configuration value. */
import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { inspect } from "node:util";
import { describe, it } from "node:test";
import { ConfigError, loadConfig } from "./config.js";

const defaults = { catalogPath: "/catalog.json", dataDir: "/tmp/pustaka-config-security" };
const hsm = { module: "/usr/lib/softhsm/libsofthsm2.so", tokenLabel: "pustaka" };

describe("security configuration", () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), "pustaka-config-"));

  it("defaults to the local key file and needs security.pkcs11 for the HSM", () => {
    const config = loadConfig({ defaults, env: {} });
    assert.equal(config.security.provider, "local-file");
    assert.equal(config.security.pkcs11, undefined);
    assert.throws(() => loadConfig({ defaults, env: {}, overrides: { security: { provider: "pkcs11" } } }), (e: unknown) => e instanceof ConfigError && /security\.pkcs11/.test(e.message));
  });

  it("reads the PIN from the named environment variable, kept out of the configuration object", () => {
    const config = loadConfig({ defaults, env: { MY_PIN: "s3cret-pin" }, overrides: { security: { provider: "pkcs11", pkcs11: { ...hsm, pinEnv: "MY_PIN" } } } });
    assert.equal(config.security.pkcs11?.keyLabel, "pustaka-kek");
    assert.equal(config.security.pkcs11?.readPin?.(), "s3cret-pin");
    assert.ok(!JSON.stringify(config).includes("s3cret-pin"), "not in JSON (logs)");
    assert.ok(!inspect(config, { depth: 10 }).includes("s3cret-pin"), "not in util.inspect");
  });

  it("falls back to the PIN file (one line), and says what is missing when there is neither", () => {
    const pinFile = path.join(dir, "pin");
    writeFileSync(pinFile, "from-file\n", { mode: 0o600 });
    const fromFile = loadConfig({ defaults, env: {}, overrides: { security: { provider: "pkcs11", pkcs11: { ...hsm, pinFile } } } });
    assert.equal(fromFile.security.pkcs11?.readPin?.(), "from-file");
    const envWins = loadConfig({ defaults, env: { PUSTAKA_HSM_PIN: "from-env" }, overrides: { security: { provider: "pkcs11", pkcs11: { ...hsm, pinFile } } } });
    assert.equal(envWins.security.pkcs11?.readPin?.(), "from-env");
    const none = loadConfig({ defaults, env: {}, overrides: { security: { provider: "pkcs11", pkcs11: hsm } } });
    assert.throws(() => none.security.pkcs11?.readPin?.(), (e: unknown) => e instanceof ConfigError && /PUSTAKA_HSM_PIN/.test(e.message) && /pinFile/.test(e.message));
    const missing = loadConfig({ defaults, env: {}, overrides: { security: { provider: "pkcs11", pkcs11: { ...hsm, pinFile: path.join(dir, "nope") } } } });
    assert.throws(() => missing.security.pkcs11?.readPin?.(), /cannot read the HSM PIN file/);
  });

  it("refuses a PIN written into a configuration file", () => {
    const file = path.join(dir, "config.json");
    writeFileSync(file, JSON.stringify({ security: { provider: "pkcs11", pkcs11: { ...hsm, pin: "1234" } } }));
    assert.throws(() => loadConfig({ defaults, file, env: {} }), (e: unknown) => e instanceof ConfigError && /pin/.test(e.message));
    writeFileSync(file, JSON.stringify({ security: { provider: "pkcs11", pkcs11: { ...hsm, readPin: "1234" } } }));
    assert.throws(() => loadConfig({ defaults, file, env: {} }), (e: unknown) => e instanceof ConfigError && /readPin/.test(e.message));
  });
});
