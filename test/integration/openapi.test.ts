/**
 * `GET /v1/openapi.json`: every route the server serves is in it, documented, with the
 * scope it needs and the request shapes it validates — generated, so it cannot drift.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { Validator } from "@seriousme/openapi-schema-validator";
import { Ajv2020 } from "ajv/dist/2020.js";
import { openApiPath, servedRoutes } from "../../src-server/http/openapi/openapi-document.js";
import { tinyModel } from "../helpers/models.js";
import { startTestServer, type TestServer } from "../helpers/test-server.js";

describe("the OpenAPI document", () => {
  let t: TestServer;
  let openapi: any;
  before(async () => {
    t = await startTestServer({ bindings: { tiny: tinyModel("stories260K") } });
    const res = await t.call("GET", "/v1/openapi.json");
    assert.equal(res.status, 200);
    openapi = res.json;
  });
  after(() => t.close());

  it("is a valid OpenAPI 3.1 document, with bearer and session security", async () => {
    const result = await new Validator().validate(structuredClone(openapi));
    assert.equal(result.valid, true, String(JSON.stringify(result.errors ?? null)).slice(0, 2000));
    assert.equal(openapi.openapi, "3.1.0");
    assert.equal(openapi.info.title, "Pustaka");
    assert.deepEqual(Object.keys(openapi.components.securitySchemes).sort(), ["bearer", "session"]);
    assert.ok(openapi.components.schemas.Error.properties.error);
  });

  it("lists every route the server serves, each with a written summary", () => {
    const served = servedRoutes(t.server.app);
    assert.ok(served.length >= 60, `only ${served.length} routes found`);
    const undocumented: string[] = [];
    for (const route of served) {
      const op = openapi.paths[openApiPath(route.path).path]?.[route.method];
      assert.ok(op, `${route.method.toUpperCase()} ${route.path} is missing`);
      if (op.summary === `${route.method.toUpperCase()} ${route.path}`) undocumented.push(`${route.method.toUpperCase()} ${route.path}`);
    }
    assert.deepEqual(undocumented, [], "routes without a summary");
  });

  it("generates request bodies from the schemas the routes validate with, each a valid JSON Schema", () => {
    const ajv = new Ajv2020({ strict: false });
    let bodies = 0;
    for (const [path, ops] of Object.entries<any>(openapi.paths)) {
      for (const [method, op] of Object.entries<any>(ops)) {
        const schema = op.requestBody?.content?.["application/json"]?.schema;
        if (!schema) continue;
        bodies++;
        assert.doesNotThrow(() => ajv.compile(schema), `${method} ${path}`);
      }
    }
    assert.ok(bodies >= 20, `${bodies} JSON bodies`);
    const chat = openapi.paths["/v1/chat/completions"].post;
    assert.ok(chat.requestBody.content["application/json"].schema.properties.messages);
    assert.deepEqual(chat.requestBody.content["application/json"].schema.required, ["messages"]);
    assert.ok(chat.responses["200"].content["text/event-stream"], "chat streams");
    assert.match(chat.description, /`inference` scope/);
    const completions = openapi.paths["/v1/completions"].post.requestBody.content["application/json"].schema;
    assert.ok(completions.properties.prompt && completions.properties.suffix);
    // A body the server accepts validates against the document's schema, and one it refuses does not.
    const validate = ajv.compile(chat.requestBody.content["application/json"].schema);
    assert.ok(validate({ model: "tiny", messages: [{ role: "user", content: "hi" }], temperature: 0.2 }));
    assert.ok(!validate({ model: "tiny", messages: [{ role: "user", content: "hi" }], temperature: 7 }));
  });

  it("declares path and query parameters, and which routes need no key", () => {
    const doc = openapi.paths["/v1/rag/corpora/{corpusId}/documents/{documentId}"].get;
    assert.deepEqual(doc.parameters.filter((p: any) => p.in === "path").map((p: any) => p.name), ["corpusId", "documentId"]);
    const list = openapi.paths["/v1/rag/corpora/{corpusId}/documents"].get;
    assert.ok(list.parameters.some((p: any) => p.in === "query" && p.name === "limit" && p.required === false));
    assert.deepEqual(openapi.paths["/healthz"].get.security, []);
    assert.deepEqual(openapi.paths["/v1/oauth/token"].post.security, []);
    assert.equal(openapi.paths["/v1/models"].get.security, undefined, "inherits the bearer requirement");
    assert.ok(openapi.paths["/v1/rag/corpora/{corpusId}/documents"].post.requestBody.content["multipart/form-data"]);
  });

  it("needs a key like every /v1 route", async () => {
    assert.equal((await t.call("GET", "/v1/openapi.json", undefined, null)).status, 401);
  });
});
