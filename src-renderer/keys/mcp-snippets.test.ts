/// <reference types="node" />
// The renderer never uses Node; this test, run by vitest under Node, reads docs/clients.md from disk.
// eslint-disable-next-line import-x/no-nodejs-modules
import { readFileSync } from "node:fs";
// eslint-disable-next-line import-x/no-nodejs-modules
import path from "node:path";
import { describe, expect, it } from "vitest";
import { formatJson, MCP_CLIENTS, mcpConfig, mcpConfigText, mcpUrl, type McpClient } from "./mcp-snippets.js";

// The documentation's MCP configurations, read as they are now: the page and the docs cannot drift apart.
const readme = readFileSync(path.resolve(import.meta.dirname, "../../docs/clients.md"), "utf8");

/** The JSON block that follows `<!-- mcp-config: NAME -->` in docs/clients.md, parsed. */
function readmeBlock(name: McpClient): unknown {
  const match = new RegExp(`<!-- mcp-config: ${name} -->\\s*\`\`\`json\\n([\\s\\S]*?)\\n\`\`\``).exec(readme);
  if (!match) throw new Error(`docs/clients.md has no block after <!-- mcp-config: ${name} -->`);
  return JSON.parse(match[1]!);
}

// The documentation's placeholders: generating with them must give its blocks exactly.
const DOC_INPUT = { origin: "http://127.0.0.1:7780", apiKey: "psk-your-key" };

describe("MCP client configurations", () => {
  it.each(MCP_CLIENTS.map((c) => c.client))("%s equals the documented block", (client) => {
    expect(JSON.parse(mcpConfigText(client, DOC_INPUT))).toEqual(readmeBlock(client));
  });

  it("covers every configuration the docs document, and no other", () => {
    const documented = [...readme.matchAll(/<!-- mcp-config: ([\w-]+) -->/g)].map((m) => m[1]).sort();
    expect(documented).toEqual(MCP_CLIENTS.map((c) => c.client).sort());
  });

  it("fills in the page's address and a real key, escaped as JSON", () => {
    const input = { origin: "http://10.0.0.5:9000/", apiKey: 'psk-"odd\\key' };
    expect(mcpUrl(input.origin)).toBe("http://10.0.0.5:9000/mcp");
    const cursor = JSON.parse(mcpConfigText("cursor", input)) as { mcpServers: { pustaka: { url: string; headers: { Authorization: string } } } };
    expect(cursor.mcpServers.pustaka).toEqual({ url: "http://10.0.0.5:9000/mcp", headers: { Authorization: 'Bearer psk-"odd\\key' } });
    expect(mcpConfig("claude-desktop", input)).toMatchObject({ mcpServers: { pustaka: { env: { PUSTAKA_URL: "http://10.0.0.5:9000", PUSTAKA_API_KEY: 'psk-"odd\\key' } } } });
  });

  it("never writes the key into VS Code's file: VS Code asks for it as a password", () => {
    const text = mcpConfigText("vscode", { origin: "http://127.0.0.1:7780", apiKey: "psk-secret-123" });
    expect(text).not.toContain("psk-secret-123");
    expect(JSON.parse(text)).toMatchObject({ inputs: [{ type: "promptString", password: true }] });
  });
});

describe("formatJson", () => {
  it("keeps what fits on a line on it and spreads the rest, as the docs write it", () => {
    const text = mcpConfigText("claude-desktop", DOC_INPUT);
    expect(text).toContain('"args": ["mcp"],');
    expect(text.split("\n").every((line) => line.length <= 80)).toBe(true);
    expect(formatJson({ a: [], b: {}, c: null, d: [1, "x", true] })).toBe('{ "a": [], "b": {}, "c": null, "d": [1, "x", true] }');
  });

  it("gives back the same value for anything JSON holds, however long or nested", () => {
    const long = "ä\"\\\n".repeat(40);
    const value = { list: Array.from({ length: 30 }, (_, i) => ({ i, long: i % 7 === 0 ? long : "s", nested: { deeper: [i, [i, { k: null }]] } })), empty: [], "odd key \u2028": { "": 0 } };
    for (const width of [0, 20, 80, 10_000]) expect(JSON.parse(formatJson(value, width))).toEqual(value);
  });
});
