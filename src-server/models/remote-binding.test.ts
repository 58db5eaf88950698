import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { isPlainHttpBeyondLoopback, parseUpstreamUrl, remoteSpecsOf, upstreamAllowed, upstreamView, type UpstreamTarget } from "./remote-binding.js";

function target(overrides: Partial<UpstreamTarget> = {}): UpstreamTarget {
  return { id: "r1", baseUrl: "https://gpu1.example/v1", model: "qwen2.5-7b-instruct", apiKey: null, tls: null, ...overrides };
}

describe("parseUpstreamUrl", () => {
  it("splits the base URL from the upstream model after '#'", () => {
    assert.deepEqual(parseUpstreamUrl("http://gpu1:8080/v1#qwen2.5-7b-instruct", "svc-chat"), { baseUrl: "http://gpu1:8080/v1", model: "qwen2.5-7b-instruct" });
    assert.deepEqual(parseUpstreamUrl("https://vllm.example/v1", "svc-chat"), { baseUrl: "https://vllm.example/v1", model: "svc-chat" }, "the model id without '#'");
    assert.equal(parseUpstreamUrl("http://gpu1:8080/v1#Qwen%2FQwen2.5-7B-Instruct", "x").model, "Qwen/Qwen2.5-7B-Instruct");
  });

  it("normalises the base URL: no trailing slash, lower-case host, no default port", () => {
    assert.equal(parseUpstreamUrl("http://GPU1.Example:8080/v1///", "m").baseUrl, "http://gpu1.example:8080/v1");
    assert.equal(parseUpstreamUrl("https://gpu1.example:443/v1", "m").baseUrl, "https://gpu1.example/v1");
    assert.equal(parseUpstreamUrl("http://127.0.0.1:8080/", "m").baseUrl, "http://127.0.0.1:8080");
    assert.equal(parseUpstreamUrl("http://[::1]:8080/v1", "m").baseUrl, "http://[::1]:8080/v1");
  });

  it("refuses what is not an http(s) URL", () => {
    assert.throws(() => parseUpstreamUrl("gpu1:8080/v1", "m"), /over http or https, not gpu1:/);
    assert.throws(() => parseUpstreamUrl("not a url", "m"), /'not a url' is not a URL/);
    assert.throws(() => parseUpstreamUrl("ftp://gpu1/v1", "m"), /over http or https, not ftp:/);
  });

  it("refuses credentials in the URL without repeating them", () => {
    assert.throws(
      () => parseUpstreamUrl("https://admin:s3cret-token@gpu1.example/v1", "m"),
      (error: unknown) => {
        assert.ok(error instanceof Error);
        assert.match(error.message, /no credentials in the URL/);
        assert.doesNotMatch(error.message, /s3cret-token/);
        return true;
      },
    );
    assert.throws(() => parseUpstreamUrl("https://sk-abc@gpu1.example/v1", "m"), /no credentials/);
  });

  it("refuses a query string and a bad model name", () => {
    assert.throws(() => parseUpstreamUrl("https://gpu1.example/v1?key=abc", "m"), /takes no query string/);
    assert.throws(() => parseUpstreamUrl("https://gpu1.example/v1#", "m"), /must be 1 to 256 characters/);
    assert.throws(() => parseUpstreamUrl(`https://gpu1.example/v1#${"m".repeat(257)}`, "m"), /must be 1 to 256 characters/);
    assert.equal(parseUpstreamUrl(`https://gpu1.example/v1#${"m".repeat(256)}`, "x").model.length, 256);
    assert.throws(() => parseUpstreamUrl("https://gpu1.example/v1#%E0%A4%A", "m"));
  });
});

describe("isPlainHttpBeyondLoopback", () => {
  it("is true only for plain HTTP to another machine", () => {
    assert.equal(isPlainHttpBeyondLoopback("http://gpu1.example:8080/v1"), true);
    assert.equal(isPlainHttpBeyondLoopback("http://10.0.0.5:8080/v1"), true);
    assert.equal(isPlainHttpBeyondLoopback("http://127.example.com/v1"), true);
    assert.equal(isPlainHttpBeyondLoopback("https://gpu1.example/v1"), false);
    assert.equal(isPlainHttpBeyondLoopback("http://127.0.0.1:8080/v1"), false);
    assert.equal(isPlainHttpBeyondLoopback("http://127.1.2.3:8080/v1"), false);
    assert.equal(isPlainHttpBeyondLoopback("http://localhost:8080/v1"), false);
    assert.equal(isPlainHttpBeyondLoopback("http://[::1]:8080/v1"), false);
  });
});

describe("upstreamAllowed", () => {
  it("always allows loopback, and nothing else with no rules", () => {
    assert.equal(upstreamAllowed("http://127.0.0.1:8080/v1", []), true);
    assert.equal(upstreamAllowed("http://localhost:11434/v1", []), true);
    assert.equal(upstreamAllowed("http://[::1]:8080/v1", []), true);
    assert.equal(upstreamAllowed("https://gpu1.example/v1", []), false);
  });

  it("matches host names case-insensitively, with or without a port", () => {
    assert.equal(upstreamAllowed("https://gpu1.example/v1", ["GPU1.example"]), true);
    assert.equal(upstreamAllowed("https://gpu1.example:8443/v1", ["gpu1.example"]), true, "a bare host allows every port");
    assert.equal(upstreamAllowed("https://gpu1.example:8443/v1", ["gpu1.example:8443"]), true);
    assert.equal(upstreamAllowed("https://gpu1.example:9443/v1", ["gpu1.example:8443"]), false);
    assert.equal(upstreamAllowed("https://gpu2.example/v1", ["gpu1.example"]), false);
    assert.equal(upstreamAllowed("https://gpu1.example.evil.test/v1", ["gpu1.example"]), false);
    assert.equal(upstreamAllowed("https://gpu1.example/v1", ["  gpu1.example  "]), true, "rules are trimmed");
  });

  it("matches *.domain on sub-domains only", () => {
    assert.equal(upstreamAllowed("https://gpu1.ml.example/v1", ["*.ml.example"]), true);
    assert.equal(upstreamAllowed("https://a.b.ml.example/v1", ["*.ml.example"]), true);
    assert.equal(upstreamAllowed("https://ml.example/v1", ["*.ml.example"]), false, "not the domain itself");
    assert.equal(upstreamAllowed("https://evilml.example/v1", ["*.ml.example"]), false);
  });

  it("matches URL prefixes on path boundaries", () => {
    const rules = ["https://gpu.example/v1"];
    assert.equal(upstreamAllowed("https://gpu.example/v1", rules), true);
    assert.equal(upstreamAllowed("https://gpu.example/v1/extra", rules), true);
    assert.equal(upstreamAllowed("https://gpu.example/v10", rules), false);
    assert.equal(upstreamAllowed("http://gpu.example/v1", rules), false, "the scheme is part of the prefix");
    assert.equal(upstreamAllowed("https://gpu.example.evil.test/v1", ["https://gpu.example"]), false);
    assert.equal(upstreamAllowed("https://gpu.example/v1", ["https://gpu.example/"]), true);
    assert.equal(upstreamAllowed("https://gpu.example:8443/v1", ["https://gpu.example"]), false, "another port is another origin");
  });
});

describe("upstreamView", () => {
  it("says whether a key and a client certificate are set, never the key", () => {
    const view = upstreamView(target({ apiKey: () => "sk-live-0123456789", tls: { caFile: "/etc/pki/ca.pem", certFile: "/etc/pki/client.pem", keyFile: "/etc/pki/client.key" } }));
    assert.deepEqual(view, { id: "r1", url: "https://gpu1.example/v1", model: "qwen2.5-7b-instruct", api_key: true, client_certificate: true });
    assert.doesNotMatch(JSON.stringify(view), /sk-live|client\.key/);
  });

  it("reports no key and no certificate when there are none (a private CA alone is no client certificate)", () => {
    assert.deepEqual(upstreamView(target()), { id: "r1", url: "https://gpu1.example/v1", model: "qwen2.5-7b-instruct", api_key: false, client_certificate: false });
    assert.equal(upstreamView(target({ tls: { caFile: "/etc/pki/ca.pem" } })).client_certificate, false);
  });
});

describe("remoteSpecsOf", () => {
  it("names replicas r1, r2, … unless named, and sends the model id unless told otherwise", () => {
    const readKey = () => "sk-from-env";
    const specs = remoteSpecsOf({
      "svc-chat": {
        type: "chat",
        contextLength: 8192,
        upstreams: [{ url: "https://gpu1.example/v1/" }, { url: "https://GPU2.example/v1", model: "qwen2.5-7b-instruct", name: "gpu2", readApiKey: readKey, tls: { caFile: "/etc/pki/ca.pem" } }, { url: "http://127.0.0.1:8080/v1" }],
      },
      "svc-embed-1024": { dimensions: 1024, upstreams: [{ url: "http://localhost:8081/v1" }] },
    });
    assert.deepEqual(Object.keys(specs), ["svc-chat", "svc-embed-1024"]);
    const chat = specs["svc-chat"]!;
    assert.equal(chat.type, "chat");
    assert.equal(chat.contextLength, 8192);
    assert.equal(chat.dimensions, undefined);
    assert.deepEqual(
      chat.upstreams.map((u) => [u.id, u.baseUrl, u.model]),
      [
        ["r1", "https://gpu1.example/v1", "svc-chat"],
        ["gpu2", "https://gpu2.example/v1", "qwen2.5-7b-instruct"],
        ["r3", "http://127.0.0.1:8080/v1", "svc-chat"],
      ],
    );
    assert.equal(chat.upstreams[0]!.apiKey, null);
    assert.equal(chat.upstreams[0]!.tls, null);
    assert.equal(chat.upstreams[1]!.apiKey, readKey);
    assert.deepEqual(chat.upstreams[1]!.tls, { caFile: "/etc/pki/ca.pem" });
    const embed = specs["svc-embed-1024"]!;
    assert.equal(embed.type, undefined, "the registry decides from the catalog");
    assert.equal(embed.dimensions, 1024);
    assert.deepEqual(
      embed.upstreams.map((u) => u.id),
      ["r1"],
    );
  });

  it("refuses an upstream URL it cannot use", () => {
    assert.throws(() => remoteSpecsOf({ m: { upstreams: [{ url: "https://gpu1.example/v1?x=1" }] } }), /no query string/);
    assert.throws(() => remoteSpecsOf({ m: { upstreams: [{ url: "ws://gpu1.example/v1" }] } }), /http or https/);
  });
});
