/**
 * Kill -9 while the pipelined indexer has groups under way (documents parsed ahead, a group
 * being embedded, another being committed), restart on the same data directory: every
 * document ends indexed exactly once, no chunk lost, duplicated or orphaned. The server
 * runs without its supervisor so that the kill reaches the process holding the groups.
 */
import assert from "node:assert/strict";
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, it } from "node:test";
import BetterSqlite3 from "better-sqlite3";
import { REPO_ROOT, testModel } from "../helpers/models.js";

const KEY = "psk-pipeline-crash-key-00000000";
const CLI = ["--import", "tsx", path.join(REPO_ROOT, "src-server", "cli.ts")];
const DOCUMENTS = 80;

const exited = (child: ChildProcess) => new Promise<void>((resolve) => (child.exitCode !== null || child.signalCode !== null ? resolve() : child.once("exit", () => resolve())));

async function serve(dataDir: string, config: string): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, [...CLI, "serve", "--no-supervise", "--port", "0", "--threads", "1", "--log-level", "warn", "--data-dir", dataDir, "--config", config, "--model", `minilm=${testModel("all-minilm-l6-v2")}`], {
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
  child.removeAllListeners("exit");
  return { child, url };
}

const api = (url: string, route: string, init: RequestInit = {}) =>
  fetch(url + route, { ...init, headers: { authorization: `Bearer ${KEY}`, ...(init.body && typeof init.body === "string" ? { "content-type": "application/json" } : {}), ...init.headers } });

describe("pipelined indexing survives a crash", () => {
  it("resumes after SIGKILL mid-group and indexes every document exactly once", async () => {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), "pustaka-pipeline-crash-"));
    const config = path.join(dataDir, "config.json");
    writeFileSync(config, JSON.stringify({ rateLimits: { defaultTier: "unlimited" }, rag: { indexing: { batchDocuments: 8, parseAhead: 12 } } }));
    const abstracts = readFileSync(path.resolve(REPO_ROOT, "..", "shared", "evalsets", "scifact", "corpus.jsonl"), "utf8")
      .split("\n")
      .filter((l) => l.trim())
      .slice(500, 500 + DOCUMENTS)
      .map((l) => JSON.parse(l) as { _id: string; title: string; text: string });
    try {
      let server = await serve(dataDir, config);
      const corpus = (await (await api(server.url, "/v1/rag/corpora", { method: "POST", body: JSON.stringify({ name: "crash", embedding_model: "minilm" }) })).json()) as { id: string };
      const form = new FormData();
      for (const d of abstracts) form.append("file", new Blob([`${d.title}\n\n${d.text}`]), `${d._id}.txt`);
      assert.equal((await api(server.url, `/v1/rag/corpora/${corpus.id}/documents`, { method: "POST", body: form })).status, 202);

      // Kill once a group or two is committed, while the pipeline holds others.
      let indexedBeforeKill = 0;
      for (let i = 0; i < 6000; i++) {
        const counts = ((await (await api(server.url, `/v1/rag/corpora/${corpus.id}`)).json()) as { document_counts: { indexed: number } }).document_counts;
        indexedBeforeKill = counts.indexed;
        if (counts.indexed >= 8) break;
        await new Promise((r) => setTimeout(r, 25));
      }
      server.child.kill("SIGKILL");
      await exited(server.child);
      assert.ok(indexedBeforeKill >= 8 && indexedBeforeKill < DOCUMENTS, `killed with ${indexedBeforeKill} of ${DOCUMENTS} indexed; the test needs a kill mid-way`);

      const atKill = new BetterSqlite3(path.join(dataDir, "pustaka.db"), { readonly: true });
      const inFlight = (atKill.prepare("SELECT id FROM documents WHERE status = 'processing'").all() as { id: string }[]).map((r) => r.id);
      const indexedAtKill = atKill.prepare("SELECT COUNT(*) AS n FROM documents WHERE status = 'indexed'").get() as { n: number };
      const partial = atKill.prepare("SELECT COUNT(*) AS n FROM chunks c JOIN documents d ON d.id = c.document_id WHERE d.status <> 'indexed'").get() as { n: number };
      atKill.close();
      assert.ok(inFlight.length >= 2, `several documents were under way at the kill (${inFlight.length})`);
      assert.equal(partial.n, 0, "no chunk of a document not committed");

      server = await serve(dataDir, config);
      try {
        let status = "";
        for (let i = 0; i < 6000 && status !== "ready"; i++) {
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
        assert.equal(docs.length, DOCUMENTS);
        assert.ok(docs.every((d) => d.status === "indexed"), "every document indexed");
        const attempts = new Map(docs.map((d) => [d.id, d.attempts]));
        for (const id of inFlight) assert.equal(attempts.get(id), 2, `${id}, under way at the kill, was taken again`);
        assert.ok(indexedAtKill.n >= indexedBeforeKill);
        for (const d of docs) {
          const rows = db.prepare("SELECT idx FROM chunks WHERE document_id = ? ORDER BY idx").all(d.id) as { idx: number }[];
          assert.ok(rows.length > 0, `${d.id} has chunks`);
          assert.equal(rows.length, d.chunk_count, `chunk count of ${d.id}`);
          assert.deepEqual(rows.map((r) => r.idx), [...rows.keys()], `chunks of ${d.id} are 0..n-1 exactly once`);
        }
        const orphans = db.prepare("SELECT COUNT(*) AS n FROM chunks c LEFT JOIN documents d ON d.id = c.document_id WHERE d.id IS NULL").get() as { n: number };
        assert.equal(orphans.n, 0, "no orphaned chunks");
      } finally {
        db.close();
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
