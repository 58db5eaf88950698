/** Bearer auth on every /v1 route, scopes, workspaces and key lifecycle over HTTP. */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { tinyModel } from "../helpers/models.js";
import { startTestServer, type TestServer } from "../helpers/test-server.js";

describe("authentication and administration", () => {
  let t: TestServer;
  before(async () => {
    t = await startTestServer({ bindings: { tiny: tinyModel("stories260K") } });
  });
  after(() => t.close());

  it("serves /healthz without a key and everything under /v1 only with one", async () => {
    assert.equal((await t.call("GET", "/healthz", undefined, null)).status, 200);
    const missing = await t.call("GET", "/v1/models", undefined, null);
    assert.equal(missing.status, 401);
    assert.equal(missing.headers.get("www-authenticate"), 'Bearer realm="pustaka"');
    assert.deepEqual(Object.keys(missing.json.error).sort(), ["code", "message", "param", "type"]);
    assert.equal(missing.json.error.code, "missing_api_key");
    const wrong = await t.call("GET", "/v1/models", undefined, "psk-wrongwrongwrongwrongwrong");
    assert.equal(wrong.status, 401);
    assert.equal(wrong.json.error.type, "authentication_error");
    const unknownRoute = await t.call("GET", "/v1/nothing-here", undefined, null);
    assert.equal(unknownRoute.status, 401, "unknown /v1 routes do not reveal themselves without a key");
  });

  it("puts a request id on every response, errors included", async () => {
    const ok = await t.call("GET", "/healthz", undefined, null);
    const denied = await t.call("GET", "/v1/models", undefined, null);
    assert.match(ok.headers.get("x-request-id") ?? "", /^req_/);
    assert.match(denied.headers.get("x-request-id") ?? "", /^req_/);
    assert.notEqual(ok.headers.get("x-request-id"), denied.headers.get("x-request-id"));
  });

  it("creates a workspace and a key whose secret is shown once, and revokes it", async () => {
    const ws = await t.call("POST", "/v1/admin/workspaces", { name: "Analysts" });
    assert.equal(ws.status, 201);
    assert.match(ws.json.id, /^ws_/);
    const created = await t.call("POST", `/v1/admin/workspaces/${ws.json.id}/api_keys`, { name: "laptop", scopes: ["inference"] });
    assert.equal(created.status, 201);
    const secret: string = created.json.secret;
    assert.equal(secret.slice(0, created.json.prefix.length), created.json.prefix);
    const listed = await t.call("GET", `/v1/admin/workspaces/${ws.json.id}/api_keys`);
    assert.equal(listed.json.object, "list");
    assert.equal(listed.json.data.length, 1);
    assert.ok(!JSON.stringify(listed.json).includes(secret), "a list must never show the secret");

    const me = await t.call("GET", "/v1/me", undefined, secret);
    assert.equal(me.json.workspace_id, ws.json.id);
    assert.equal((await t.call("GET", "/v1/models", undefined, secret)).status, 200);

    const forbidden = await t.call("GET", `/v1/admin/workspaces/${ws.json.id}/api_keys`, undefined, secret);
    assert.equal(forbidden.status, 403);
    assert.equal(forbidden.json.error.type, "permission_error");
    const otherWs = await t.call("GET", "/v1/admin/workspaces/ws_default", undefined, secret);
    assert.equal(otherWs.status, 404, "another workspace is invisible, not forbidden");

    const revoked = await t.call("DELETE", `/v1/admin/workspaces/${ws.json.id}/api_keys/${created.json.id}`);
    assert.equal(revoked.status, 200);
    assert.ok(revoked.json.revoked_at > 0);
    const after = await t.call("GET", "/v1/models", undefined, secret);
    assert.equal(after.status, 401);
    assert.equal(after.json.error.code, "revoked_api_key");
  });

  it("validates admin input and list parameters", async () => {
    assert.equal((await t.call("POST", "/v1/admin/workspaces", { name: "" })).status, 400);
    assert.equal((await t.call("POST", "/v1/admin/workspaces/ws_default/api_keys", { name: "x", scopes: ["root"] })).status, 400);
    const badLimit = await t.call("GET", "/v1/admin/workspaces?limit=1000");
    assert.equal(badLimit.status, 400);
    assert.equal(badLimit.json.error.param, "limit");
    assert.equal((await t.call("GET", "/v1/admin/workspaces?limit=1")).json.data.length, 1);
  });

  it("refuses requests whose Host is not this server's (DNS rebinding)", async () => {
    const { request } = await import("node:http");
    const status = await new Promise<number>((resolve, reject) => {
      const req = request(`${t.url}/healthz`, { headers: { host: "attacker.example" } }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on("error", reject);
      req.end();
    });
    assert.equal(status, 403);
  });
});
