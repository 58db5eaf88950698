/**
 * LangChain.js against the server as its users configure it: `ChatOpenAI` and
 * `OpenAIEmbeddings` (@langchain/openai) on `/v1`, `ChatAnthropic` (@langchain/anthropic) on the
 * server's root. Chat, streaming, forced tool calls, structured output from a zod schema with
 * ordinary constraints, embeddings, and the Anthropic side's tools — with real small models.
 * (The Python side, with LangChain's standard suites, is test/clients/, run by
 * python-clients.test.ts.)
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { ChatAnthropic } from "@langchain/anthropic";
import { AIMessageChunk, type BaseMessageChunk } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { ChatOpenAI, OpenAIEmbeddings } from "@langchain/openai";
import { z } from "zod";
import { testModel } from "../helpers/models.js";
import { startTestServer, type TestServer } from "../helpers/test-server.js";

const weather = tool(async ({ city }: { city: string }) => `Hujan di ${city}`, {
  name: "get_weather",
  description: "The weather in a Malaysian city",
  schema: z.object({ city: z.enum(["Ipoh", "Kuantan", "Kota Bharu"]) }),
});

describe("LangChain.js (ChatOpenAI, OpenAIEmbeddings, ChatAnthropic) against the server", () => {
  let t: TestServer;
  let openai: ChatOpenAI;
  let anthropic: ChatAnthropic;
  before(async () => {
    t = await startTestServer({
      bindings: { chat: testModel("smollm2-135m-instruct"), embed: testModel("all-minilm-l6-v2") },
      config: { chat: { contextSize: 2048, sequences: 2 } },
    });
    openai = new ChatOpenAI({ model: "chat", apiKey: t.key, configuration: { baseURL: `${t.url}/v1` }, temperature: 0, maxTokens: 48, maxRetries: 0 });
    anthropic = new ChatAnthropic({ model: "chat", apiKey: t.key, anthropicApiUrl: t.url, temperature: 0, maxTokens: 48, maxRetries: 0 });
  });
  after(() => t?.close());

  it("ChatOpenAI answers, streams the same text, and reports usage", async () => {
    const reply = await openai.invoke([["system", "You are a helpful assistant."], ["human", "Name a river in Malaysia."]]);
    assert.equal(typeof reply.content, "string");
    assert.ok((reply.content as string).trim().length > 0);
    assert.ok(reply.usage_metadata && reply.usage_metadata.input_tokens > 5 && reply.usage_metadata.output_tokens > 0);
    let streamed: BaseMessageChunk | undefined;
    for await (const chunk of await openai.stream([["system", "You are a helpful assistant."], ["human", "Name a river in Malaysia."]])) {
      streamed = streamed ? streamed.concat(chunk) : chunk;
    }
    assert.ok(streamed instanceof AIMessageChunk);
    assert.equal(streamed.content, reply.content, "greedy: the stream is the same reply");
  });

  it("ChatOpenAI makes a forced tool call whose arguments satisfy the tool's schema", async () => {
    const reply = await openai.bindTools([weather], { tool_choice: "get_weather" }).invoke("Is it raining in Ipoh?");
    assert.equal(reply.tool_calls?.length, 1);
    const call = reply.tool_calls[0]!;
    assert.equal(call.name, "get_weather");
    assert.ok(call.id);
    assert.ok(["Ipoh", "Kuantan", "Kota Bharu"].includes(call.args.city), JSON.stringify(call.args));
    assert.equal(reply.invalid_tool_calls?.length ?? 0, 0);
  });

  it("ChatOpenAI.withStructuredOutput honours a zod schema's bounds, lengths and pattern, by either method", async () => {
    const Report = z.object({
      river: z.string().max(30),
      state_code: z.string().regex(/^[A-Z]{3}$/),
      level_m: z.number().int().min(0).max(20),
      warnings: z.array(z.string().max(40)).max(2),
    });
    const llm = new ChatOpenAI({ model: "chat", apiKey: t.key, configuration: { baseURL: `${t.url}/v1` }, temperature: 0, maxTokens: 120, maxRetries: 0 });
    for (const method of ["jsonSchema", "functionCalling"] as const) {
      const report = await llm.withStructuredOutput(Report, { method, name: "flood_report" }).invoke("Report the flood on the Kelantan river.");
      // withStructuredOutput has already parsed it with the schema; parse again to be sure of every constraint.
      assert.deepEqual(Report.parse(report), report, method);
    }
  });

  it("OpenAIEmbeddings embeds queries and documents, the same text the same way", async () => {
    const embeddings = new OpenAIEmbeddings({ model: "embed", apiKey: t.key, configuration: { baseURL: `${t.url}/v1` }, maxRetries: 0 });
    const [one, two] = await embeddings.embedDocuments(["Banjir di Kelantan", "Flood in Kelantan"]);
    const query = await embeddings.embedQuery("Banjir di Kelantan");
    assert.equal(one!.length, 384);
    assert.equal(two!.length, 384);
    const cosine = (a: number[], b: number[]) => a.reduce((s, x, i) => s + x * b[i]!, 0) / Math.hypot(...a) / Math.hypot(...b);
    assert.ok(cosine(one!, query) > 0.999, "the same text");
    assert.ok(cosine(one!, two!) < cosine(one!, query));
  });

  it("ChatAnthropic answers and streams over /v1/messages", async () => {
    const reply = await anthropic.invoke("Name a river in Malaysia.");
    const text = typeof reply.content === "string" ? reply.content : reply.content.map((b) => ("text" in b ? b.text : "")).join("");
    assert.ok(text.trim().length > 0);
    assert.ok(reply.usage_metadata && reply.usage_metadata.output_tokens > 0);
    let streamed = "";
    for await (const chunk of await anthropic.stream("Name a river in Malaysia.")) streamed += chunk.text;
    assert.equal(streamed, text);
  });

  it("ChatAnthropic makes a forced tool call, and takes the tool's result back", async () => {
    const bound = anthropic.bindTools([weather], { tool_choice: { type: "tool", name: "get_weather" } });
    const call = await bound.invoke("Is it raining in Kuantan?");
    assert.equal(call.tool_calls?.length, 1);
    const toolCall = call.tool_calls[0]!;
    assert.equal(toolCall.name, "get_weather");
    assert.ok(["Ipoh", "Kuantan", "Kota Bharu"].includes(toolCall.args.city));
    const result = await weather.invoke(toolCall);
    const answer = await anthropic.bindTools([weather]).invoke([["human", "Is it raining in Kuantan?"], call, result]);
    const text = typeof answer.content === "string" ? answer.content : answer.content.map((b) => ("text" in b ? b.text : "")).join("");
    assert.ok(text.trim().length > 0 || (answer.tool_calls?.length ?? 0) > 0);
  });
});
