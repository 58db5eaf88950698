import { describe, expect, it } from "vitest";
import { snippet } from "./snippets.js";

describe("snippet", () => {
  const input = { baseUrl: "http://127.0.0.1:7780/v1", model: "svc-merlion-13b", apiKey: "psk-abc" };
  it("points curl, openai and LangChain at this server with the default model", () => {
    expect(snippet("curl", input)).toContain("curl http://127.0.0.1:7780/v1/chat/completions");
    expect(snippet("curl", input)).toContain('"model":"svc-merlion-13b"');
    expect(snippet("python", input)).toContain('OpenAI(base_url="http://127.0.0.1:7780/v1", api_key="psk-abc")');
    expect(snippet("langchain", input)).toContain('ChatOpenAI(base_url="http://127.0.0.1:7780/v1", api_key="psk-abc", model="svc-merlion-13b")');
  });
});
