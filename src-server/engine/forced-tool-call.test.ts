import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ServiceError } from "../errors.js";
import { planForcedToolCall } from "./forced-tool-call.js";

const tools = [
  { name: "get_weather", description: "Weather in a city", parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } },
  { name: "get_time", parameters: { type: "object", properties: { zone: { type: "string" } } } },
];
const history = [{ type: "user" as const, text: "Weather in Ipoh?" }, { type: "model" as const, response: [] }];

describe("planForcedToolCall", () => {
  it("forces the named function's arguments and describes it in a system message", () => {
    const plan = planForcedToolCall(history, tools, { name: "get_weather" });
    assert.match(plan.gbnf, /"\\"city\\"" ":"/, "the grammar writes the city argument");
    assert.doesNotMatch(plan.gbnf, /get_weather/, "a single forced tool's grammar is its arguments alone");
    assert.equal(plan.history[0]?.type, "system");
    assert.match((plan.history[0] as { text: string }).text, /must call the function 'get_weather'[\s\S]*"city"/);
    const [call] = plan.toToolCalls('{"city": "Ipoh"}');
    assert.equal(call?.name, "get_weather");
    assert.deepEqual(JSON.parse(call.arguments), { city: "Ipoh" });
    assert.match(call.id, /^call_/);
  });

  it("lets the model pick among all tools when required", () => {
    const plan = planForcedToolCall(history, tools, "required");
    for (const name of ["get_weather", "get_time"]) assert.ok(plan.gbnf.includes(`"\\"${name}\\""`), `the grammar offers ${name}`);
    const [call] = plan.toToolCalls('{"name":"get_time","arguments":{"zone":"Asia/Kuala_Lumpur"}}');
    assert.equal(call?.name, "get_time");
    assert.equal(call?.arguments, '{"zone":"Asia/Kuala_Lumpur"}');
  });

  it("keeps cut-short output as raw arguments, and refuses unknown or missing tools", () => {
    assert.equal(planForcedToolCall(history, tools, { name: "get_time" }).toToolCalls('{"zone": "Asi')[0]?.arguments, '{"zone": "Asi');
    assert.throws(() => planForcedToolCall(history, tools, { name: "nope" }), (e: unknown) => e instanceof ServiceError && e.location?.in === "toolChoice");
    assert.throws(() => planForcedToolCall(history, [], "required"), (e: unknown) => e instanceof ServiceError && e.location?.in === "toolChoice");
  });
});
