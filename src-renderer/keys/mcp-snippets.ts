/**
 * MCP client configurations pointing at this server, ready to paste. They are docs/clients.md's
 * blocks (`<!-- mcp-config: NAME -->`) with the address and the key filled in; a test keeps
 * the two equal.
 */

export type McpClient = "claude-desktop" | "vscode" | "cursor" | "lm-studio";

export interface McpInput {
  /** The server's origin, `http://127.0.0.1:7780` (no `/v1`, no `/mcp`). */
  origin: string;
  /** The key to fill in; a placeholder unless one was just created. VS Code's never holds it. */
  apiKey: string;
}

/** The clients in the order the page offers them, with the file each configuration goes into. */
export const MCP_CLIENTS: readonly { client: McpClient; label: string; file: string }[] = [
  { client: "claude-desktop", label: "Claude Desktop", file: "claude_desktop_config.json" },
  { client: "vscode", label: "VS Code", file: ".vscode/mcp.json" },
  { client: "cursor", label: "Cursor", file: "~/.cursor/mcp.json" },
  { client: "lm-studio", label: "LM Studio", file: "mcp.json" },
];

/** The Streamable HTTP endpoint: `<origin>/mcp`. */
export const mcpUrl = (origin: string) => `${origin.replace(/\/+$/, "")}/mcp`;

/** The configuration object for `client` (what its file holds). */
export function mcpConfig(client: McpClient, { origin, apiKey }: McpInput): Record<string, unknown> {
  const url = mcpUrl(origin);
  switch (client) {
    case "claude-desktop":
      // Claude Desktop launches a command; `pustaka mcp` relays stdio to the running server.
      return { mcpServers: { pustaka: { command: "pustaka", args: ["mcp"], env: { PUSTAKA_URL: origin.replace(/\/+$/, ""), PUSTAKA_API_KEY: apiKey } } } };
    case "vscode":
      // VS Code asks for the key once and keeps it in its secret storage, so the file holds no key.
      return {
        inputs: [{ type: "promptString", id: "pustaka-key", description: "Pustaka API key", password: true }],
        servers: { pustaka: { type: "http", url, headers: { Authorization: "Bearer ${input:pustaka-key}" } } },
      };
    case "cursor":
    case "lm-studio":
      return { mcpServers: { pustaka: { url, headers: { Authorization: `Bearer ${apiKey}` } } } };
  }
}

/** The configuration as the text to paste (JSON laid out as docs/clients.md writes it). */
export const mcpConfigText = (client: McpClient, input: McpInput) => formatJson(mcpConfig(client, input));

/**
 * JSON laid out as people write it by hand: a value that fits on its line stays on it
 * (`"args": ["mcp"]`), a longer one is spread over lines with a two-space indent.
 * @param width the line length to keep within, in characters (default 80)
 */
export function formatJson(value: unknown, width = 80): string {
  const inline = (v: unknown): string => {
    if (Array.isArray(v)) return `[${v.map(inline).join(", ")}]`;
    if (v !== null && typeof v === "object") {
      const entries = Object.entries(v);
      return entries.length === 0 ? "{}" : `{ ${entries.map(([k, x]) => `${JSON.stringify(k)}: ${inline(x)}`).join(", ")} }`;
    }
    return JSON.stringify(v);
  };
  // `used`: the characters already on the line before the value (indent and key); +1 for a comma after it.
  const layout = (v: unknown, indent: string, used: number): string => {
    const flat = inline(v);
    if (v === null || typeof v !== "object" || used + flat.length + 1 <= width) return flat;
    const inner = `${indent}  `;
    if (Array.isArray(v)) return `[\n${v.map((x) => inner + layout(x, inner, inner.length)).join(",\n")}\n${indent}]`;
    const lines = Object.entries(v).map(([k, x]) => {
      const key = `${JSON.stringify(k)}: `;
      return inner + key + layout(x, inner, inner.length + key.length);
    });
    return `{\n${lines.join(",\n")}\n${indent}}`;
  };
  return layout(value, "", 0);
}
