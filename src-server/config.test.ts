import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, it } from "node:test";
import { ConfigError, loadConfig, mergeConfig } from "./config.js";

describe("loadConfig", () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), "pustaka-config-"));

  it("layers defaults < file < environment < flags", () => {
    const file = path.join(dir, "a.json");
    writeFileSync(file, JSON.stringify({ port: 1000, chat: { sequences: 2, contextSize: 2048 }, logLevel: "debug" }));
    const config = loadConfig({ defaults: { catalogPath: "/catalog.json" }, file, env: { PUSTAKA_PORT: "2000", PUSTAKA_DATA_DIR: dir }, overrides: { chat: { sequences: 8 } } });
    assert.equal(config.port, 2000);
    assert.equal(config.chat.sequences, 8);
    assert.equal(config.chat.contextSize, 2048, "nested file values survive a partial override");
    assert.equal(config.logLevel, "debug");
    assert.equal(config.host, "127.0.0.1");
    assert.equal(config.modelsDir, path.join(dir, "models"));
  });

  it("lists every invalid field in one error", () => {
    assert.throws(
      () => loadConfig({ defaults: { catalogPath: "/catalog.json" }, env: {}, overrides: { port: 70000, chat: { sequences: 0 } } }),
      (e: unknown) => e instanceof ConfigError && /port/.test(e.message) && /chat\.sequences/.test(e.message),
    );
  });

  it("refuses unknown keys and malformed files", () => {
    const bad = path.join(dir, "bad.json");
    writeFileSync(bad, "{ not json");
    assert.throws(() => loadConfig({ defaults: { catalogPath: "/catalog.json" }, file: bad, env: {} }), (e: unknown) => e instanceof ConfigError && /not valid JSON/.test(e.message));
    const unknown = path.join(dir, "unknown.json");
    writeFileSync(unknown, JSON.stringify({ prot: 1 }));
    assert.throws(() => loadConfig({ defaults: { catalogPath: "/catalog.json" }, file: unknown, env: {} }), (e: unknown) => e instanceof ConfigError && /prot/.test(e.message));
  });

  it("turns decode chaining off with PUSTAKA_DECODE_CHAIN, on by default, and refuses other values", () => {
    const base = { defaults: { catalogPath: "/catalog.json" } };
    assert.equal(loadConfig({ ...base, env: {} }).engine.decodeChain, "on");
    assert.equal(loadConfig({ ...base, env: { PUSTAKA_DECODE_CHAIN: "off" } }).engine.decodeChain, "off");
    assert.throws(() => loadConfig({ ...base, env: { PUSTAKA_DECODE_CHAIN: "maybe" } }), (e: unknown) => e instanceof ConfigError && /engine\.decodeChain/.test(e.message));
  });

  it("takes the admin key from PUSTAKA_API_KEY only", () => {
    assert.equal(loadConfig({ defaults: { catalogPath: "/catalog.json" }, env: { PUSTAKA_API_KEY: "psk-abcdefghijklmnop" } }).apiKey, "psk-abcdefghijklmnop");
    // A key that could never authenticate is refused at start, not accepted and then locked out.
    for (const bad of ["abcdefghijklmnop", "psk-short", "psk-has spaces in it!!", "PSK-abcdefghijklmnop"]) {
      assert.throws(() => loadConfig({ defaults: { catalogPath: "/catalog.json" }, env: { PUSTAKA_API_KEY: bad } }), (e: unknown) => e instanceof ConfigError && /apiKey: must be 'psk-'/.test(e.message), bad);
    }
    assert.equal(loadConfig({ defaults: { catalogPath: "/catalog.json" }, env: {} }).apiKey, undefined);
  });

  it("mergeConfig replaces arrays and ignores undefined", () => {
    assert.deepEqual(mergeConfig({ a: [1, 2], b: { c: 1 } }, { a: [3], b: { d: undefined } }), { a: [3], b: { c: 1 } });
  });
});
