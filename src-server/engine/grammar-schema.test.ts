import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ServiceError } from "../errors.js";
import { toGrammarSchema } from "./grammar-schema.js";

const P = { in: "responseFormat", schema: true } as const;

describe("toGrammarSchema", () => {
  it("drops annotations but keeps property names that look like keywords", () => {
    const out = toGrammarSchema(
      { $schema: "x", title: "T", type: "object", properties: { title: { type: "string", description: "kept", default: "d" } }, required: ["title"], additionalProperties: false },
      P,
    );
    assert.deepEqual(out, { type: "object", properties: { title: { type: "string", description: "kept" } }, required: ["title"], additionalProperties: false });
  });

  it("normalises anyOf, definitions references and nullable objects", () => {
    const out = toGrammarSchema(
      { definitions: { pt: { type: "object", properties: { x: { type: "number" } } } }, anyOf: [{ $ref: "#/definitions/pt" }, { type: ["string", "null"] }] },
      P,
    ) as Record<string, any>;
    assert.deepEqual(out.oneOf[0], { $ref: "#/$defs/pt" });
    assert.deepEqual(out.oneOf[1], { type: ["string", "null"] });
    assert.ok(out.$defs.pt);
    const nullable = toGrammarSchema({ type: ["object", "null"], properties: { a: { type: "string" } } }, P) as Record<string, any>;
    assert.deepEqual(nullable.oneOf.map((s: any) => s.type), ["object", "null"]);
  });

  it("describes to the model what function calling cannot enforce (bounds, patterns) instead of refusing it", () => {
    const out = toGrammarSchema({ type: "object", properties: { n: { type: "integer", exclusiveMinimum: -1000, exclusiveMaximum: 1000, description: "a number" }, code: { type: "string", pattern: "^[A-Z]{3}$" } }, required: ["n"] }, P) as Record<string, any>;
    assert.deepEqual(out.properties.n, { type: "integer", description: "a number (exclusiveMinimum: -1000; exclusiveMaximum: 1000)" });
    assert.deepEqual(out.properties.code, { type: "string", description: '(pattern: "^[A-Z]{3}$")' });
  });

  it("refuses what a grammar cannot enforce, naming the keyword and its place", () => {
    const refused: [unknown, RegExp][] = [
      [{ type: "frobnicate" }, /at 'type': unknown type "frobnicate"/],
      [{ type: "object", properties: { n: { type: "integer", multipleOf: 5 } } }, /at 'properties\.n\.multipleOf': the keyword 'multipleOf'/],
      [{ type: "string", pattern: "^(?=a)" }, /'pattern'.*lookahead/],
      [{ type: "string", format: "email" }, /format "email"/],
      [{ $ref: "http://example.com/schema" }, /inside the schema/],
      ["not a schema", /must be a JSON object/],
    ];
    for (const [schema, message] of refused) {
      assert.throws(() => toGrammarSchema(schema, P), (e: unknown) => e instanceof ServiceError && e.code === "unsupported_json_schema" && e.location === P && e.param === null && message.test(e.message));
    }
  });

  it("refuses absurdly deep schemas instead of recursing without bound", () => {
    let schema: Record<string, unknown> = { type: "string" };
    for (let i = 0; i < 100; i++) schema = { type: "array", items: schema };
    assert.throws(() => toGrammarSchema(schema, P), /nested deeper/);
  });
});
