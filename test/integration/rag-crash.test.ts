/**
 * Kill -9 during indexing of a 50-file batch, restart on the same data directory, and
 * every document ends indexed exactly once: no lost, duplicated or orphaned chunks.
 */
import assert from "node:assert/strict";
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, it } from "node:test";
import BetterSqlite3 from "better-sqlite3";
import { REPO_ROOT, testModel } from "../helpers/models.js";

const KEY = "psk-crash-test-key-000000000";
// `node --import tsx`, not the tsx wrapper: the kill must reach the server itself.
const CLI = ["--import", "tsx", path.join(REPO_ROOT, "src-server", "cli.ts")];

const exited = (child: ChildProcess) => new Promise<void>((resolve) => (child.exitCode !== null || child.signalCode !== null ? resolve() : child.once("exit", () => resolve())));

async function serve(dataDir: string): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, [...CLI, "serve", "--port", "0", "--threads", "1", "--log-level", "warn", "--data-dir", dataDir, "--model", `minilm=${testModel("all-minilm-l6-v2")}`], {
    cwd: REPO_ROOT,
    env: { ...process.env, PUSTAKA_API_KEY: KEY },
    stdio: ["ignore", "pipe", "inherit"],
  });
  let out = "";
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout.on("data", (d: Buffer) => {
      out += d.toString();
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) resolve(m[1]!);
    });
    child.once("exit", (code) => reject(new Error(`server exited ${code}: ${out}`)));
  });
  return { child, url };
}

const api = (url: string, route: string, init: RequestInit = {}) =>
  fetch(url + route, { ...init, headers: { authorization: `Bearer ${KEY}`, ...(init.body && typeof init.body === "string" ? { "content-type": "application/json" } : {}), ...init.headers } });

function document(i: number): string {
  const topics = ["flood relief in Kelantan", "bus routes in Kuantan", "rice subsidies in Kedah", "clinic waiting times in Perak", "water supply in Klang"];
  const lines = [`# Report ${i}: ${topics[i % topics.length]}`];
  for (let p = 0; p < 6; p++) lines.push(`Paragraph ${p} of report ${i} records figure ${i * 100 + p} for ${topics[(i + p) % topics.length]}. The committee reviewed item ${i}-${p} and asked for a follow-up before the next quarter.`);
  return lines.join("\n\n");
}

describe("indexing survives a crash", () => {
  it("resumes after SIGKILL and indexes every document exactly once", async () => {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), "pustaka-crash-"));
    let server = await serve(dataDir);
    const corpus = (await (await api(server.url, "/v1/rag/corpora", { method: "POST", body: JSON.stringify({ name: "crash", embedding_model: "minilm", chunking: "paragraph" }) })).json()) as { id: string };
    const form = new FormData();
    for (let i = 0; i < 50; i++) form.append("file", new Blob([document(i)]), `report-${i}.md`);
    const uploaded = await api(server.url, `/v1/rag/corpora/${corpus.id}/documents`, { method: "POST", body: form });
    assert.equal(uploaded.status, 202);

    // Kill once some, but not all, documents are indexed.
    let indexedBeforeKill = 0;
    for (let i = 0; i < 600; i++) {
      const counts = ((await (await api(server.url, `/v1/rag/corpora/${corpus.id}`)).json()) as { document_counts: { indexed: number } }).document_counts;
      indexedBeforeKill = counts.indexed;
      if (counts.indexed >= 3) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    server.child.kill("SIGKILL");
    await exited(server.child);
    assert.ok(indexedBeforeKill >= 3 && indexedBeforeKill < 50, `killed with ${indexedBeforeKill} of 50 indexed; the test needs a kill mid-batch`);

    server = await serve(dataDir);
    try {
      let status = "";
      for (let i = 0; i < 1200 && status !== "ready"; i++) {
        status = ((await (await api(server.url, `/v1/rag/corpora/${corpus.id}`)).json()) as { status: string }).status;
        if (status !== "ready") await new Promise((r) => setTimeout(r, 100));
      }
      assert.equal(status, "ready");
    } finally {
      server.child.kill("SIGTERM");
      await exited(server.child);
    }

    const db = new BetterSqlite3(path.join(dataDir, "pustaka.db"), { readonly: true });
    try {
      const docs = db.prepare("SELECT id, status, chunk_count, attempts FROM documents WHERE corpus_id = ?").all(corpus.id) as { id: string; status: string; chunk_count: number; attempts: number }[];
      assert.equal(docs.length, 50);
      assert.ok(docs.every((d) => d.status === "indexed"), "every document indexed");
      assert.ok(docs.some((d) => d.attempts === 2) || indexedBeforeKill === 50, "the interrupted document was retried");
      for (const d of docs) {
        const rows = db.prepare("SELECT idx FROM chunks WHERE document_id = ? ORDER BY idx").all(d.id) as { idx: number }[];
        assert.equal(rows.length, d.chunk_count, `chunk count of ${d.id}`);
        assert.deepEqual(rows.map((r) => r.idx), [...rows.keys()], `chunks of ${d.id} are 0..n-1 exactly once`);
      }
      const orphans = db.prepare("SELECT COUNT(*) AS n FROM chunks c LEFT JOIN documents d ON d.id = c.document_id WHERE d.id IS NULL").get() as { n: number };
      assert.equal(orphans.n, 0, "no orphaned chunks");
    } finally {
      db.close();
    }
  });
});
