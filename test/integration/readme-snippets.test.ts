/**
 * Every Node snippet of docs/clients.md (each ```ts block after a `<!-- snippet: NAME -->`
 * marker; they were the README's), run as written — as its own program, through tsx, with the
 * project's installed clients — against the real server. The documented address and model
 * names become the test server's; the key comes from PUSTAKA_KEY, as in the snippets.
 * (The Python snippets run in test/clients/test_readme_snippets.py.)
 */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { promisify } from "node:util";
import { REPO_ROOT, testModel } from "../helpers/models.js";
import { startTestServer, type TestServer } from "../helpers/test-server.js";

const DOC_URL = "http://127.0.0.1:7780";
/** Where the snippets are written. */
const DOC = path.join("docs", "clients.md");
/** Inside the repository (ignored by git), so the snippets' imports resolve to its node_modules. */
const WORK = path.join(REPO_ROOT, "test-results", "readme-snippets");

function nodeSnippets(): Map<string, string> {
  const readme = readFileSync(path.join(REPO_ROOT, DOC), "utf8");
  const found = [...readme.matchAll(/<!-- snippet: ([\w-]+) -->\n```ts\n([\s\S]*?)\n```/g)].map((m) => [m[1]!, m[2]!] as const);
  const snippets = new Map(found);
  assert.equal(snippets.size, found.length, "snippet names are unique");
  return snippets;
}

/** Audit entries by type: what reached the server (replies may span lines, so stdout alone cannot tell). */
type Served = Record<string, number>;
const AUDITED = ["chat.completion", "response.create", "text.completion"];

/** What each snippet must print, line by line, and which requests it must have made. */
const EXPECTED: Record<string, (lines: string[], served: Served) => void> = {
  "openai-node": (lines, served) => {
    assert.deepEqual(served, { "chat.completion": 1, "response.create": 1, "text.completion": 1 });
    assert.ok(lines.filter((l) => l.trim()).length >= 3, "a reply, a streamed response and a completion");
  },
  "anthropic-node": (lines, served) => {
    assert.deepEqual(served, { "chat.completion": 1, "response.create": 0, "text.completion": 0 }, "count_tokens generates nothing");
    assert.match(lines.at(-2)!, /^(end_turn|max_tokens)$/);
    assert.ok(Number(lines.at(-1)) > 3, "input tokens counted");
    assert.ok(lines.slice(0, -2).join("").trim().length > 0, "streamed text");
  },
  "langchain-node": (lines, served) => {
    assert.equal(served["chat.completion"], 2);
    assert.equal(lines.at(-1), "384", "all-MiniLM-L6-v2's dimensions");
    const city = lines.join("\n").match(/\{[\s\S]*\}/)?.[0];
    assert.ok(city, "the structured output is printed");
    // console.log quotes a string with ' unless it holds one (then with ").
    assert.match(city, /name:\s*(?:'[^']{0,40}'|"[^"]{0,40}")/);
    const population = Number(city.match(/population_millions:\s*(-?\d+)/)?.[1]);
    assert.ok(Number.isInteger(population) && population >= 0 && population <= 100, city);
  },
};

describe("the documentation's Node snippets (docs/clients.md)", () => {
  let t: TestServer;
  before(async () => {
    t = await startTestServer({
      bindings: { chat: testModel("smollm2-135m-instruct"), embed: testModel("all-minilm-l6-v2") },
      config: { chat: { contextSize: 2048, sequences: 2 } },
    });
    mkdirSync(WORK, { recursive: true });
  });
  after(() => t?.close());

  async function audited(): Promise<Served> {
    const counts: Served = {};
    for (const type of AUDITED) {
      const { json } = await t.call("GET", `/v1/audit/events?type=${type}&limit=500`);
      counts[type] = json.data.filter((e: { type: string }) => e.type === type).length;
    }
    return counts;
  }

  it("has a check for every snippet", () => {
    assert.deepEqual([...nodeSnippets().keys()].sort(), Object.keys(EXPECTED).sort());
  });

  for (const [name, check] of Object.entries(EXPECTED)) {
    it(`runs ${name} as written`, { timeout: 180_000 }, async () => {
      const code = nodeSnippets().get(name);
      assert.ok(code, `no snippet ${name} in ${DOC}`);
      assert.ok(code.includes(DOC_URL));
      const file = path.join(WORK, `${name}.mts`);
      writeFileSync(file, code.replaceAll(DOC_URL, t.url).replaceAll("svc-merlion-13b", "chat").replaceAll("svc-embed-1024", "embed"));
      const before = await audited();
      const { stdout } = await promisify(execFile)(process.execPath, ["--import", "tsx", file], {
        cwd: REPO_ROOT,
        encoding: "utf8",
        env: { ...process.env, PUSTAKA_KEY: t.key, LANGCHAIN_TRACING_V2: "false", LANGSMITH_TRACING: "false" },
        timeout: 170_000,
      });
      const now = await audited();
      check(stdout.trimEnd().split("\n"), Object.fromEntries(AUDITED.map((type) => [type, now[type]! - before[type]!])));
    });
  }
});
