/**
 * `pustaka mcp`: MCP over stdio for clients that launch a command (Claude Desktop, and any
 * client configured with `command`/`args`). It runs no model and opens no data: it relays
 * each JSON-RPC message from stdin to a running server's `/mcp` with the key, and the answer
 * back to stdout, so authentication, scopes, rate limits and the audit trail are the
 * server's. Before relaying anything it checks that a server answers at the URL and that
 * it takes the key, and says plainly on stderr when not (stdout carries only the protocol).
 */
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { createParser } from "eventsource-parser";
import type { Readable, Writable } from "node:stream";

export interface StdioBridgeOptions {
  /** The server's base URL (`http://127.0.0.1:7780`). */
  url: string;
  key: string;
  stdin?: Readable;
  stdout?: Writable;
  /** Where problems are reported for the person who configured the client. */
  log?: (line: string) => void;
  /** Per message; a cited answer can take a while on a CPU. */
  timeoutMs?: number;
}

/** Thrown before relaying when no server answers or the key is refused; the CLI prints it and exits 1. */
export class BridgeError extends Error {
  override name = "BridgeError";
}

const ACCEPT = "application/json, text/event-stream";

/** Checks the server and the key, so a misconfigured client gets one clear sentence, not a protocol error. */
export async function checkServer(url: string, key: string): Promise<void> {
  let health: Response;
  try {
    health = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(5000) });
  } catch (error) {
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    const why = cause?.code ?? cause?.message ?? (error as Error).message;
    throw new BridgeError(`no Pustaka server answers at ${url} (${why}): start one with \`pustaka serve\` or open the desktop app, or give its address with --url (or PUSTAKA_URL)`);
  }
  if (!health.ok) throw new BridgeError(`${url} answered /healthz with HTTP ${health.status}: is it a Pustaka server? Give its address with --url`);
  const probe = await fetch(`${url}/mcp`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json", accept: ACCEPT },
    body: JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }),
    signal: AbortSignal.timeout(10_000),
  });
  if (probe.ok) return;
  const body = (await probe.json().catch(() => null)) as { error?: { message?: string } } | null;
  const why = body?.error?.message ?? `HTTP ${probe.status}`;
  if (probe.status === 401) throw new BridgeError(`the server at ${url} refused the API key: ${why} (give a key with --key or PUSTAKA_API_KEY; create one on the workbench's Keys page)`);
  if (probe.status === 403) throw new BridgeError(`the API key cannot use MCP: ${why} (it needs the rag.read scope, and inference to ask questions)`);
  if (probe.status === 404) throw new BridgeError(`the server at ${url} has no MCP endpoint: it is older than this command; upgrade it`);
  throw new BridgeError(`the server at ${url} refused MCP: ${why}`);
}

/** One message to the server; its answers (none for a notification). */
async function relay(options: StdioBridgeOptions, message: JSONRPCMessage): Promise<JSONRPCMessage[]> {
  const id = "id" in message ? message.id : undefined;
  let response: Response;
  try {
    response = await fetch(`${options.url}/mcp`, {
      method: "POST",
      headers: { authorization: `Bearer ${options.key}`, "content-type": "application/json", accept: ACCEPT },
      body: JSON.stringify(message),
      signal: AbortSignal.timeout(options.timeoutMs ?? 300_000),
    });
  } catch (error) {
    if (id === undefined) return [];
    return [{ jsonrpc: "2.0", id, error: { code: -32000, message: `the Pustaka server at ${options.url} did not answer: ${(error as Error).message}` } }];
  }
  const type = response.headers.get("content-type") ?? "";
  if (response.status === 202 || response.headers.get("content-length") === "0") return [];
  const messages: JSONRPCMessage[] = [];
  if (type.includes("text/event-stream")) {
    const parser = createParser({ onEvent: (event) => messages.push(JSON.parse(event.data) as JSONRPCMessage) });
    parser.feed(await response.text());
  } else {
    const text = await response.text();
    if (text) {
      try {
        const parsed = JSON.parse(text) as JSONRPCMessage | JSONRPCMessage[];
        messages.push(...(Array.isArray(parsed) ? parsed : [parsed]));
      } catch {
        if (id !== undefined) messages.push({ jsonrpc: "2.0", id, error: { code: -32000, message: `the server answered HTTP ${response.status} with no JSON-RPC message` } });
      }
    }
  }
  // An error the server gave before reading the message (a rate limit, an expired key) names no id: it answers this one.
  return messages.map((m): JSONRPCMessage => ("error" in m && (m as { id?: unknown }).id === null && id !== undefined ? ({ ...m, id }) : m));
}

/** Relays until stdin ends. Resolves when the client has gone. */
export async function runStdioBridge(options: StdioBridgeOptions): Promise<void> {
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  await checkServer(options.url, options.key);
  log(`pustaka mcp: relaying MCP to ${options.url}/mcp`);
  const transport = new StdioServerTransport(options.stdin, options.stdout);
  const closed = new Promise<void>((resolve) => (transport.onclose = resolve));
  // Messages are relayed in order, one at a time per client, as a stdio server would answer them.
  let queue = Promise.resolve();
  transport.onmessage = (message) => {
    queue = queue
      .then(async () => {
        for (const answer of await relay(options, message)) await transport.send(answer);
      })
      .catch((error: unknown) => log(`pustaka mcp: ${(error as Error).message}`));
  };
  transport.onerror = (error) => log(`pustaka mcp: ${error.message}`);
  await transport.start();
  const input = options.stdin ?? process.stdin;
  input.once("end", () => void queue.then(() => transport.close()));
  await closed;
}
