import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { API_PREFIXES, isApiPath } from "./api-paths.js";

describe("isApiPath", () => {
  it("claims each prefix, itself and below it", () => {
    for (const prefix of API_PREFIXES) {
      for (const p of [prefix, `${prefix}/`, `${prefix}/x`, `${prefix}/x/y.json`]) assert.equal(isApiPath(p), true, p);
    }
  });

  it("judges a path as routing and file serving see it: any case, percent-encoded, dot segments, doubled slashes", () => {
    for (const p of ["/V1/Models", "/METRICS", "/%761/models", "/%2Fv1/models", "//v1/models", "/assets/../metrics", "/a/./../healthz/x", "/.WELL-KNOWN/jwks.json", "\\v1\\models"]) {
      assert.equal(isApiPath(p), true, p);
    }
    assert.equal(isApiPath("/v1/%ff"), true, "malformed encoding: judged as written");
  });

  it("leaves the workbench's paths alone, including names that only start like a prefix", () => {
    for (const p of ["/", "/index.html", "/assets/index-abc.js", "/corpora/corp_x", "/keys", "/v1x", "/v2/models", "/metricsx", "/healthzz", "/apis", "/mcpx", "/well-known", "/%ff"]) {
      assert.equal(isApiPath(p), false, p);
    }
  });
});
