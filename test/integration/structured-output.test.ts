/**
 * Structured output with the constraints ordinary pydantic models carry (bounds, patterns,
 * lengths, enums, nested definitions, nullable fields, formats), enforced by the grammar
 * on a real model: every output, at any temperature, validates against its schema and
 * is compact JSON. Tools with such parameters are accepted in every tool_choice.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { Ajv2020 } from "ajv/dist/2020.js";
import { testModel } from "../helpers/models.js";
import { startTestServer, type TestServer } from "../helpers/test-server.js";

/** What pydantic writes for a model with `Field(ge=…, le=…, pattern=…, max_length=…)`, an enum, a nested model and an optional field. */
const REPORT = {
  $defs: {
    Location: {
      type: "object",
      properties: { state: { enum: ["Kelantan", "Terengganu", "Pahang", "Johor"], title: "State", type: "string" }, district: { maxLength: 24, minLength: 2, title: "District", type: "string" } },
      required: ["state", "district"],
      title: "Location",
    },
  },
  properties: {
    code: { pattern: "^BNJ-[0-9]{4}$", title: "Code", type: "string" },
    location: { $ref: "#/$defs/Location" },
    evacuees: { maximum: 100000, minimum: 0, title: "Evacuees", type: "integer" },
    water_level_m: { exclusiveMaximum: 30, exclusiveMinimum: 0, title: "Water Level M", type: "number" },
    reported_on: { format: "date", title: "Reported On", type: "string" },
    notes: { anyOf: [{ maxLength: 40, type: "string" }, { type: "null" }], default: null, title: "Notes" },
  },
  required: ["code", "location", "evacuees", "water_level_m", "reported_on"],
  title: "FloodReport",
  type: "object",
};

/** LangChain's standard-test tool: `magic_function(input: int = Field(gt=-1000, lt=1000))`. */
const MAGIC = {
  type: "function",
  function: {
    name: "magic_function",
    description: "Applies a magic function to an input.",
    parameters: { type: "object", properties: { input: { type: "integer", exclusiveMinimum: -1000, exclusiveMaximum: 1000 } }, required: ["input"] },
  },
};

/** True when no whitespace stands outside a string in `json`. */
function compact(json: string): boolean {
  let inString = false;
  for (let i = 0; i < json.length; i++) {
    const c = json[i]!;
    if (inString && c === "\\") i++;
    else if (c === '"') inString = !inString;
    else if (!inString && /\s/.test(c)) return false;
  }
  return true;
}

describe("structured output with constraints", () => {
  let t: TestServer;
  const ajv = new Ajv2020({ strict: false });
  before(async () => {
    t = await startTestServer({ bindings: { chat: testModel("gemma3-270m") }, config: { chat: { contextSize: 1024, sequences: 1 } } });
  });
  after(() => t.close());

  const ask = (body: Record<string, unknown>) =>
    t.call("POST", "/v1/chat/completions", { model: "chat", messages: [{ role: "user", content: "Write the flood report for Kuala Krai as JSON." }], ...body });

  it("always produces JSON valid against a pydantic-style schema, even when sampling wildly", async () => {
    const validate = ajv.compile(REPORT);
    for (const seed of [1, 2, 3, 4]) {
      const res = await ask({ temperature: 1.5, seed, max_tokens: 200, response_format: { type: "json_schema", json_schema: { name: "FloodReport", schema: REPORT, strict: true } } });
      assert.equal(res.status, 200, JSON.stringify(res.json));
      const text = res.json.choices[0].message.content as string;
      assert.equal(res.json.choices[0].finish_reason, "stop", `ended by the grammar, not the limit: ${text}`);
      const value = JSON.parse(text) as Record<string, unknown>;
      assert.ok(validate(value), `${text}\n${JSON.stringify(validate.errors)}`);
      assert.match(value.reported_on as string, /^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])$/);
      assert.ok(compact(text), `no whitespace outside strings: ${text}`);
    }
  });

  it("fits a three-field object in 32 tokens: compact JSON, no indentation", async () => {
    const schema = { type: "object", properties: { name: { type: "string", maxLength: 12 }, age: { type: "integer", minimum: 0, maximum: 120 }, city: { enum: ["Ipoh", "Kuantan", "Melaka"] } }, required: ["name", "age", "city"], additionalProperties: false };
    const res = await ask({ temperature: 0, max_tokens: 32, response_format: { type: "json_schema", json_schema: { name: "person", schema } } });
    assert.equal(res.json.choices[0].finish_reason, "stop", res.json.choices[0].message.content);
    const text = res.json.choices[0].message.content as string;
    assert.ok(ajv.validate(schema, JSON.parse(text)), text);
    assert.doesNotMatch(text, /\n/);
  });

  it("accepts tools with bounded parameters in every tool_choice, and enforces the bounds when the call is forced", async () => {
    const messages = [{ role: "user", content: "What is the magic function of 3?" }];
    for (const toolChoice of ["auto", "required", { type: "function", function: { name: "magic_function" } }]) {
      const res = await t.call("POST", "/v1/chat/completions", { model: "chat", messages, tools: [MAGIC], tool_choice: toolChoice, temperature: 0, max_tokens: 40 });
      assert.equal(res.status, 200, `${JSON.stringify(toolChoice)}: ${JSON.stringify(res.json)}`);
      if (toolChoice === "auto") continue;
      const call = res.json.choices[0].message.tool_calls[0];
      assert.equal(call.function.name, "magic_function");
      const input = JSON.parse(call.function.arguments).input as number;
      assert.ok(Number.isInteger(input) && input > -1000 && input < 1000, call.function.arguments);
    }
  });

  it("refuses a schema it cannot enforce by naming the keyword, in every place a schema goes", async () => {
    const format = await ask({ response_format: { type: "json_schema", json_schema: { name: "x", schema: { type: "object", properties: { tags: { type: "array", items: { type: "string" }, uniqueItems: true } } } } } });
    assert.equal(format.status, 400);
    assert.equal(format.json.error.code, "unsupported_json_schema");
    assert.equal(format.json.error.param, "response_format.json_schema.schema");
    assert.match(format.json.error.message, /properties\.tags\.uniqueItems/);
    const tool = await t.call("POST", "/v1/chat/completions", {
      model: "chat",
      messages: [{ role: "user", content: "hi" }],
      tools: [MAGIC, { type: "function", function: { name: "even", parameters: { type: "object", properties: { n: { type: "integer", multipleOf: 2 } } } } }],
    });
    assert.equal(tool.status, 400);
    assert.equal(tool.json.error.param, "tools.1.function.parameters");
    assert.match(tool.json.error.message, /properties\.n\.multipleOf/);
  });
});
