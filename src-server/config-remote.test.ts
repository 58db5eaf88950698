import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, it } from "node:test";
import { parseModelFlags } from "./cli-program.js";
import { ConfigError, loadConfig, type ConfigInput } from "./config.js";
import { remoteSpecsOf } from "./models/remote-binding.js";

const load = (overrides: ConfigInput, env: NodeJS.ProcessEnv = {}, file?: string) => loadConfig({ defaults: { catalogPath: "/catalog.json", dataDir: "/tmp/pustaka-config-remote" }, env, overrides, ...(file ? { file } : {}) });

describe("remote models in the configuration", () => {
  it("reads --model ID=URL#model as replicas of one model, and --upstream-key as the variable holding its key", () => {
    const flags = parseModelFlags(["team=http://127.0.0.1:8080/v1#qwen2.5-7b", "team=https://gpu2.example:8443/v1#qwen2.5-7b", "local=models/x.gguf"], ["team=TEAM_KEY"]);
    assert.deepEqual(flags.remote, {
      team: {
        upstreams: [
          { url: "http://127.0.0.1:8080/v1", model: "qwen2.5-7b", apiKeyEnv: "TEAM_KEY" },
          { url: "https://gpu2.example:8443/v1", model: "qwen2.5-7b", apiKeyEnv: "TEAM_KEY" },
        ],
      },
    });
    assert.equal(flags.bindings.local, path.resolve("models/x.gguf"));
    const config = load({ models: flags }, { TEAM_KEY: "sk-secret-team-key" });
    const spec = remoteSpecsOf(config.models.remote).team!;
    assert.deepEqual(spec.upstreams.map((u) => [u.id, u.baseUrl, u.model]), [["r1", "http://127.0.0.1:8080/v1", "qwen2.5-7b"], ["r2", "https://gpu2.example:8443/v1", "qwen2.5-7b"]]);
    assert.equal(spec.upstreams[0]!.apiKey?.(), "sk-secret-team-key");
    // The key is read through a function: printing the configuration shows no key.
    assert.ok(!JSON.stringify(config).includes("sk-secret-team-key"));
  });

  it("refuses what would leak or mislead: keys in URLs, keys as flags, unknown schemes, an unset key variable", () => {
    assert.throws(() => parseModelFlags(["x=http://user:pw@127.0.0.1:8080/v1"], []), (e: unknown) => e instanceof ConfigError && /no credentials in the URL/.test(e.message));
    assert.throws(() => parseModelFlags(["x=http://127.0.0.1:8080/v1"], ["x=sk-live-123"]), (e: unknown) => e instanceof ConfigError && /never the key/.test(e.message));
    assert.throws(() => parseModelFlags(["x=ftp://127.0.0.1/v1"], []), (e: unknown) => e instanceof ConfigError && /http or https/.test(e.message));
    assert.throws(() => parseModelFlags([], ["x=KEY"]), (e: unknown) => e instanceof ConfigError && /no --model x=http/.test(e.message));
    assert.throws(() => load({ models: parseModelFlags(["x=http://127.0.0.1:8080/v1"], ["x=MISSING_KEY"]) }), (e: unknown) => e instanceof ConfigError && /MISSING_KEY, which is not set/.test(e.message));
  });

  it("needs https or an explicit flag to reach an upstream beyond this machine", () => {
    const remote = { models: parseModelFlags(["x=http://gpu.example:8000/v1#m"], []) };
    assert.throws(() => load(remote), (e: unknown) => e instanceof ConfigError && /beyond this machine in plain HTTP/.test(e.message) && /--upstream-insecure-http/.test(e.message));
    assert.equal(load({ ...remote, upstreams: { insecureHttp: true } }).models.remote.x?.upstreams[0]?.url, "http://gpu.example:8000/v1");
    assert.doesNotThrow(() => load({ models: parseModelFlags(["x=https://gpu.example:8000/v1#m"], []) }));
    assert.doesNotThrow(() => load({ models: parseModelFlags(["x=http://localhost:8000/v1#m"], []) }));
  });

  it("takes a config file's remote models with names, types, TLS files and key variables", () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "pustaka-config-remote-"));
    const file = path.join(dir, "config.json");
    writeFileSync(
      file,
      JSON.stringify({
        models: {
          remote: {
            "svc-embed-1024": { type: "embedding", dimensions: 1024, upstreams: [{ url: "https://embed.example/v1", model: "bge-m3", name: "gpu-a", apiKeyEnv: "EMBED_KEY", tls: { caFile: "ca.pem", certFile: "client.pem", keyFile: "client-key.pem" } }] },
          },
        },
      }),
    );
    const config = load({}, { EMBED_KEY: "k" }, file);
    const spec = remoteSpecsOf(config.models.remote)["svc-embed-1024"]!;
    assert.equal(spec.type, "embedding");
    assert.equal(spec.dimensions, 1024);
    assert.equal(spec.upstreams[0]!.id, "gpu-a");
    assert.equal(spec.upstreams[0]!.tls?.certFile, path.resolve("client.pem"));
    writeFileSync(file, JSON.stringify({ models: { remote: { y: { upstreams: [{ url: "https://a.example/v1", tls: { certFile: "c.pem" } }] } } } }));
    assert.throws(() => load({}, {}, file), (e: unknown) => e instanceof ConfigError && /certFile and tls.keyFile/.test(e.message));
  });
});
