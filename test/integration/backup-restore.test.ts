/**
 * Backup and restore end to end, with the real server, the real `pustaka` command, real
 * models and real SQLite: a backup taken by the CLI while documents are uploaded and
 * indexed; a backup killed with SIGKILL half-way, which leaves the previous one intact and
 * is cleaned up by the next; every refusal of `pustaka restore` (non-empty target, a
 * tampered, missing or unlisted file, a missing or wrong KEK, an altered or truncated
 * manifest, an unfinished backup), each leaving nothing behind; then a restore into an
 * empty folder, and a server on it that gives the same search results and the same cited
 * answers to bilingual questions, whose audit trail verifies (`pustaka audit verify`).
 */
import assert from "node:assert/strict";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, truncateSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { randomBytes } from "node:crypto";
import BetterSqlite3 from "better-sqlite3";
import { testModel } from "../helpers/models.js";
import { evalDoc, upload, waitForStatus } from "../helpers/rag.js";
import { assertDocumentedCommandsRun } from "../helpers/doc-commands.js";
import { cliRuns, pustaka, startPustaka, type CliRun } from "../helpers/pustaka-cli.js";
import { startTestServer, type TestServer } from "../helpers/test-server.js";

const EVAL_DOCS = ["banjir-kelantan-2022.md", "floods-pahang-2023-briefing.md", "lrt-laluan-bayu-q2-2024.md", "notis-gangguan-bekalan-air-klang.html", "employee-leave-policy.md", "insentif-padi-kedah-2023.md"];
/** Malay and English questions, two across languages (test/fixtures/eval/questions.json q01, q02, q14, q50). */
const QUESTIONS = [
  { question: "Berapakah bilangan kemuncak mangsa di pusat pemindahan sementara semasa banjir Kelantan November 2022?", doc: "banjir-kelantan-2022.md" },
  { question: "During the late-2022 monsoon floods, what peak river level was recorded at the royal jetty gauge in Kelantan?", doc: "banjir-kelantan-2022.md" },
  { question: "Berapakah harga pas bulanan Pas Bayu 30?", doc: "lrt-laluan-bayu-q2-2024.md" },
  { question: "How much will each affected household get off its water bill after the June 2024 supply cut in Klang?", doc: "notis-gangguan-bekalan-air-klang.html" },
];
const BURST_SOURCES = ["sme-finance-survey-2024.md", "tabung-pks-tp3-2023.md", "rice-price-policy-note.md", "keciciran-sekolah-luar-bandar.md", "tvet-outcomes-review-2023.txt"];

const MODELS = { chat: testModel("smollm2-135m-instruct"), "multilingual-e5-small": testModel("multilingual-e5-small") };
const modelFlags = Object.entries(MODELS).flatMap(([id, file]) => ["--model", `${id}=${file}`]);
const SERVER_CONFIG = { chat: { contextSize: 2048, sequences: 2 } };

/** What a question gets: the passages found and the cited answer (temperature 0: the same model on the same passages answers the same). */
interface Asked {
  search: { chunk_id: string; document_id: string; filename: string; score: number; text: string }[];
  answer: string;
  citations: { index: number; chunk_id: string; filename: string; page: number | null; cited: boolean }[];
}

async function ask(t: TestServer, corpusId: string, key: string): Promise<Asked[]> {
  const out: Asked[] = [];
  for (const q of QUESTIONS) {
    const search = await t.call("POST", `/v1/rag/corpora/${corpusId}/search`, { query: q.question, top_k: 5 }, key);
    assert.equal(search.status, 200, JSON.stringify(search.json));
    const answer = await t.call("POST", `/v1/rag/corpora/${corpusId}/query`, { question: q.question, top_k: 3, temperature: 0, max_tokens: 48 }, key);
    assert.equal(answer.status, 200, JSON.stringify(answer.json));
    out.push({
      search: search.json.data.map((c: any) => ({ chunk_id: c.chunk_id, document_id: c.document_id, filename: c.filename, score: c.score, text: c.text })),
      answer: answer.json.answer as string,
      citations: answer.json.citations.map((c: any) => ({ index: c.index, chunk_id: c.chunk_id, filename: c.filename, page: c.page, cited: c.cited })),
    });
  }
  return out;
}

/** The backups (complete folders) in `dir`, oldest first. */
const completeBackups = (dir: string) => readdirSync(dir).filter((n) => /^pustaka-backup-[\dT-]+Z$/.test(n)).sort();
const filesUnder = (dir: string): string[] => readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? filesUnder(path.join(dir, e.name)).map((f) => `${e.name}/${f}`) : [e.name])).sort();

describe("backup and restore", () => {
  let a: TestServer;
  let work: string;
  let backups: string;
  let evalCorpus: string;
  let burstCorpus: string;
  let before1: Asked[];
  let first: string;
  const kek = () => path.join(a.dataDir, "keys", "kek.bin");

  before(async () => {
    work = mkdtempSync(path.join(os.tmpdir(), "pustaka-backup-it-"));
    backups = path.join(work, "backups");
    a = await startTestServer({ bindings: MODELS, config: SERVER_CONFIG });
    evalCorpus = (await a.call("POST", "/v1/rag/corpora", { name: "Taklimat", embedding_model: "multilingual-e5-small" })).json.id;
    const uploaded = await upload(a, evalCorpus, EVAL_DOCS.map(evalDoc));
    assert.equal(uploaded.status, 202, JSON.stringify(uploaded.json));
    assert.equal((await waitForStatus(a, evalCorpus)).status, "ready");
    // Asked before anything else runs on the chat model: the restored server, started fresh, is asked the same in the same order.
    before1 = await ask(a, evalCorpus, a.key);
    for (const [i, q] of QUESTIONS.entries()) assert.ok(before1[i]!.search.slice(0, 3).some((c) => c.filename === q.doc), `a passage of ${q.doc} is found for "${q.question}"`);
    burstCorpus = (await a.call("POST", "/v1/rag/corpora", { name: "Burst", embedding_model: "multilingual-e5-small" })).json.id;
  });
  after(async () => {
    await a?.close();
    rmSync(work, { recursive: true, force: true });
  });

  it("takes a backup with the CLI while documents are uploaded and indexed", { timeout: 600_000 }, async () => {
    let n = 0;
    const burstFile = () => {
      const source = BURST_SOURCES[n % BURST_SOURCES.length]!;
      const doc = evalDoc(source);
      return { name: `${n++}-${source}`, content: Buffer.concat([Buffer.from(doc.content), Buffer.from(`\n\nSalinan ${n}: ${randomBytes(6).toString("hex")}\n`)]) };
    };
    // A queue of documents to index before the backup starts, then more uploads while it runs.
    for (let i = 0; i < 4; i++) assert.equal((await upload(a, burstCorpus, Array.from({ length: 10 }, burstFile))).status, 202);
    const run = startPustaka(["backup", backups, "--data-dir", a.dataDir, ...modelFlags]);
    let running = true;
    const uploads = (async () => {
      while (running) {
        const res = await upload(a, burstCorpus, [burstFile(), burstFile()]);
        assert.equal(res.status, 202, JSON.stringify(res.json));
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
    })();
    const result = await run.done;
    running = false;
    await uploads;
    assert.equal(result.status, 0, result.stderr);
    assert.match(result.stdout, /^backup complete: .*pustaka-backup-/m);
    assert.match(result.stdout, /KEK: not included \(local-file:[0-9a-f]{16}\); a restore needs it/);
    const [name] = completeBackups(backups);
    assert.ok(name);
    first = name;
    const manifest = JSON.parse(readFileSync(path.join(backups, first, "manifest.json"), "utf8"));
    assert.equal(manifest.format, "pustaka-backup/1");
    assert.equal(manifest.source.trigger, "cli");
    assert.ok(manifest.contents.documents_pending > 0, "documents were still being indexed at the snapshot");
    assert.ok(manifest.contents.documents > EVAL_DOCS.length);
    assert.deepEqual(manifest.contents.originals_missing_at_source, []);
    assert.equal(manifest.key_provider.kind, "local-file");
    assert.equal(manifest.key_provider.kek_included, false);
    assert.ok(!manifest.files.some((f: any) => f.path.includes("kek")), "no KEK in the backup");
    assert.deepEqual(manifest.models.corpus_models, ["multilingual-e5-small"]);
    assert.deepEqual(manifest.models.files.map((m: any) => m.bound_as).flat().sort(), ["chat", "multilingual-e5-small"]);
    assert.ok(manifest.left_out.some((l: any) => l.path === "keys/kek.bin"));
    // Every original the snapshot references is in the backup, and nothing else.
    const db = new BetterSqlite3(path.join(backups, first, "data", "pustaka.db"), { readonly: true });
    const docs = db.prepare("SELECT corpus_id, id FROM documents").all() as { corpus_id: string; id: string }[];
    db.close();
    const blobs = manifest.files.filter((f: any) => f.path.startsWith("data/blobs/")).map((f: any) => f.path).sort();
    assert.deepEqual(blobs, docs.map((d) => `data/blobs/${d.corpus_id}/${d.id}`).sort());
    // Secrets are sealed: the signing key's PEM is nowhere in the backup in the clear.
    const pem = readFileSync(path.join(a.dataDir, "keys", "audit-signing.pem"), "utf8");
    const sealed = readFileSync(path.join(backups, first, "secrets", "audit-signing.pem"), "latin1");
    assert.ok(!sealed.includes("PRIVATE KEY") && !sealed.includes(pem.split("\n")[1]!));
    // The backup is in the instance's audit trail.
    const [entry] = (await a.call("GET", "/v1/audit/events?chain=instance&type=backup.create")).json.data;
    assert.equal(entry.actor, "cli");
    assert.equal(entry.outcome, "success");
    assert.equal(entry.data.name, first);
    assert.equal(entry.data.kek_included, false);
  });

  it("leaves the previous backup intact when a backup is killed mid-way (SIGKILL), and the next run removes the remains", { timeout: 600_000 }, async () => {
    const before = filesUnder(path.join(backups, first));
    const manifestBefore = readFileSync(path.join(backups, first, "manifest.json"));
    // A large model copied with --with-models keeps the backup busy for seconds after its
    // database snapshot and originals are in the partial folder: it is killed there.
    let partialSeen = "";
    const run = startPustaka(["backup", backups, "--data-dir", a.dataDir, "--with-models", ...modelFlags, "--model", `big=${testModel("qwen2.5-coder-1.5b")}`], {}, (stderr, child) => {
      if (partialSeen || !/copying \d+ model files/.test(stderr)) return;
      const partial = readdirSync(backups).find((n) => n.endsWith(".partial"));
      partialSeen = partial ? filesUnder(path.join(backups, partial)).join(",") : "none";
      child.kill("SIGKILL");
    });
    const killed = await run.done;
    assert.equal(killed.signal, "SIGKILL", `${killed.stdout}${killed.stderr}`);
    assert.match(partialSeen, /data\/pustaka\.db/, "the partial folder had the database snapshot when it was killed");
    assert.match(partialSeen, /data\/blobs\//, "and originals");
    const partial = readdirSync(backups).filter((n) => n.endsWith(".partial"));
    assert.equal(partial.length, 1, "the killed backup left its partial folder");
    assert.deepEqual(completeBackups(backups), [first], "no half backup passes for a complete one");
    assert.deepEqual(filesUnder(path.join(backups, first)), before);
    assert.deepEqual(readFileSync(path.join(backups, first, "manifest.json")), manifestBefore);
    const verified = await pustaka(["restore", path.join(backups, first), "--dry-run", "--kek-file", kek()]);
    assert.equal(verified.status, 0, verified.stderr);
    assert.match(verified.stdout, /^backup verified: .*nothing written/m);
    assert.match(verified.stdout, /audit trail: VALID/);
    // The next run takes the dead process's lock over and removes its partial folder.
    const next = await pustaka(["backup", backups, "--data-dir", a.dataDir, "--keep", "5", ...modelFlags]);
    assert.equal(next.status, 0, next.stderr);
    assert.match(next.stdout, new RegExp(`removed unfinished backups: ${partial[0]!.replace(/[.]/g, "\\.")}`));
    assert.deepEqual(readdirSync(backups).filter((n) => n.endsWith(".partial") || n.startsWith(".")), []);
    assert.equal(completeBackups(backups).length, 2);
  });

  it("refuses a non-empty target, tampered, missing, linked or unlisted files, a missing or wrong KEK, an altered or truncated manifest and an unfinished backup, leaving nothing behind", { timeout: 300_000 }, async () => {
    const targets = path.join(work, "targets");
    mkdirSync(targets);
    const refused = async (backup: string, extra: string[], message: RegExp) => {
      const target = path.join(targets, "restored");
      const run: CliRun = await pustaka(["restore", backup, "--data-dir", target, ...extra]);
      assert.equal(run.status, 2, `${run.stdout}${run.stderr}`);
      assert.match(run.stderr, message);
      assert.match(run.stderr, /^pustaka: /m);
      assert.doesNotMatch(run.stderr, /^\s+at /m, "no stack trace");
      assert.deepEqual(readdirSync(targets), [], "nothing left behind (no target, no staging folder)");
    };
    const copy = (name: string) => {
      const to = path.join(work, name);
      cpSync(path.join(backups, first), to, { recursive: true });
      return to;
    };
    const original = path.join(backups, first);
    await refused(original, [], /does not hold its key-encryption key \(KEK local-file:[0-9a-f]{16}\).*pass --kek-file/);
    const wrongKek = path.join(work, "other-kek.bin");
    writeFileSync(wrongKek, randomBytes(32));
    await refused(original, ["--kek-file", wrongKek], /the KEK from .*other-kek\.bin is local-file:[0-9a-f]{16}, but this backup's keys are wrapped by local-file:/);
    const notKek = path.join(work, "not-a-kek.bin");
    writeFileSync(notKek, "hello");
    await refused(original, ["--kek-file", notKek], /is not a KEK file: a KEK file holds exactly 32 bytes/);

    const tampered = copy("tampered");
    const manifest = JSON.parse(readFileSync(path.join(tampered, "manifest.json"), "utf8"));
    const blob = manifest.files.find((f: any) => f.path.startsWith("data/blobs/")).path as string;
    const bytes = readFileSync(path.join(tampered, blob));
    bytes[Math.floor(bytes.length / 2)]! ^= 0x01;
    writeFileSync(path.join(tampered, blob), bytes);
    await refused(tampered, ["--kek-file", kek()], new RegExp(`${blob.replace(/[/.]/g, "\\$&")} does not match the backup's manifest \\(its SHA-256 is`));

    const lacking = copy("lacking");
    rmSync(path.join(lacking, blob));
    await refused(lacking, ["--kek-file", kek()], /the backup lacks data\/blobs\/.* which its manifest lists/);

    const linked = copy("linked");
    rmSync(path.join(linked, blob));
    symlinkSync(path.join(original, blob), path.join(linked, blob));
    await refused(linked, ["--kek-file", kek()], /data\/blobs\/.* in the backup is not a regular file \(a link or a device\)/);

    const extra = copy("extra");
    writeFileSync(path.join(extra, "data", "blobs", "planted"), "x");
    await refused(extra, ["--kek-file", kek()], /holds files its manifest does not list \(data\/blobs\/planted\)/);

    const altered = copy("altered");
    writeFileSync(path.join(altered, "manifest.json"), JSON.stringify({ ...manifest, contents: { ...manifest.contents, documents: 1 } }));
    await refused(altered, ["--kek-file", kek()], /manifest was altered: its MAC does not verify/);

    const truncated = copy("truncated");
    truncateSync(path.join(truncated, "manifest.json"), Math.floor(statSync(path.join(truncated, "manifest.json")).size / 2));
    await refused(truncated, ["--kek-file", kek()], /manifest\.json is truncated or damaged/);

    const escaping = copy("escaping");
    writeFileSync(path.join(escaping, "manifest.json"), JSON.stringify({ ...manifest, files: [...manifest.files, { path: "data/../../outside", bytes: 1, sha256: "0".repeat(64), role: "data" }] }));
    await refused(escaping, ["--kek-file", kek()], /not a valid Pustaka backup manifest \(files\.\d+\.path/);

    const unfinished = path.join(work, `${first}.partial`);
    cpSync(original, unfinished, { recursive: true });
    await refused(unfinished, ["--kek-file", kek()], /is an unfinished backup \(a '\.partial' folder/);
    await refused(path.join(work, "nowhere"), [], /is not a Pustaka backup: it has no manifest\.json/);

    const occupied = path.join(targets, "occupied");
    mkdirSync(occupied);
    writeFileSync(path.join(occupied, "notes.txt"), "mine");
    const run = await pustaka(["restore", original, "--data-dir", occupied, "--kek-file", kek()]);
    assert.equal(run.status, 2);
    assert.match(run.stderr, /the data folder .*occupied is not empty \(notes\.txt\): restore only into an empty or new folder/);
    assert.deepEqual(readdirSync(occupied), ["notes.txt"]);
    assert.deepEqual(readdirSync(targets), ["occupied"]);
    rmSync(occupied, { recursive: true });
  });

  it("restores into an empty folder: the same search results and cited answers, the same keys, an audit trail that verifies", { timeout: 900_000 }, async () => {
    const restored = path.join(work, "restored");
    mkdirSync(restored);
    const run = await pustaka(["restore", path.join(backups, first), "--data-dir", restored, "--kek-file", kek()]);
    assert.equal(run.status, 0, run.stderr);
    assert.match(run.stdout, new RegExp(`^restored ${first} .* into ${restored.replace(/[/.]/g, "\\$&")}$`, "m"));
    assert.match(run.stdout, /audit trail: VALID/);
    assert.match(run.stdout, /2 corpus data keys unwrap/);
    assert.match(run.stdout, /multilingual-e5-small was bound to multilingual-e5-small-q4_0\.gguf .*--model multilingual-e5-small=<file>/);
    assert.ok(existsSync(path.join(restored, "keys", "kek.bin")), "the KEK is where the restored instance looks for it");
    assert.ok(!readdirSync(restored).includes("index-snapshots"));

    const r = await startTestServer({ bindings: MODELS, config: SERVER_CONFIG, dataDir: restored });
    try {
      // The key of the original instance works: keys, workspaces and corpora came back.
      const corpora = (await r.call("GET", "/v1/rag/corpora?order=asc", undefined, a.key)).json.data;
      assert.deepEqual(corpora.map((c: any) => c.id).sort(), [evalCorpus, burstCorpus].sort());
      // Documents still being indexed at the backup are indexed by the restored server, from their originals.
      const burst = await waitForStatus(r, burstCorpus);
      assert.equal(burst.status, "ready");
      assert.equal(burst.document_counts.failed, 0);
      const inA = (await a.call("GET", `/v1/rag/corpora/${burstCorpus}`)).json.document_counts.total;
      assert.ok(burst.document_counts.total <= inA && burst.document_counts.total >= 40);
      assert.deepEqual(await ask(r, evalCorpus, a.key), before1, "the same passages, the same answers, the same citations");

      // The audit trail verifies, on the server and offline with the original instance's key.
      const verify = (await r.call("GET", "/v1/audit/verify")).json;
      assert.equal(verify.valid, true, JSON.stringify(verify.problems));
      const signingKey = (await r.call("GET", "/v1/audit/signing-key")).json;
      assert.deepEqual(signingKey, (await a.call("GET", "/v1/audit/signing-key")).json, "the same audit signing key");
      writeFileSync(path.join(work, "audit-key.pem"), signingKey.public_key_pem);
      for (const chain of ["instance", "ws_default"]) {
        const exported = await fetch(`${r.url}/v1/audit/export?chain=${chain}&format=jsonl`, { headers: { authorization: `Bearer ${r.key}` } });
        const file = path.join(work, `restored-${chain}.jsonl`);
        writeFileSync(file, await exported.text());
        const checked = await pustaka(["audit", "verify", file, "--public-key", path.join(work, "audit-key.pem")]);
        assert.equal(checked.status, 0, checked.stdout);
        assert.match(checked.stdout, /^VALID: /);
      }
      const [restoreEntry] = (await r.call("GET", "/v1/audit/events?chain=instance&type=backup.restore")).json.data;
      assert.equal(restoreEntry.actor, "cli");
      assert.equal(restoreEntry.data.backup_name, first);
      assert.equal(restoreEntry.data.audit_valid, true);
    } finally {
      await r.close();
    }
  });

  it("carries the KEK only when asked (--include-kek), then restores without --kek-file, with the models (--with-models)", { timeout: 300_000 }, async () => {
    const dir = path.join(work, "with-kek");
    const run = await pustaka(["backup", dir, "--data-dir", a.dataDir, "--include-kek", "--with-models", ...modelFlags]);
    assert.equal(run.status, 0, run.stderr);
    assert.match(run.stdout, /KEK: INCLUDED \(local-file:[0-9a-f]{16}\): this backup restores on its own/);
    const [name] = completeBackups(dir);
    const manifest = JSON.parse(readFileSync(path.join(dir, name!, "manifest.json"), "utf8"));
    assert.equal(manifest.models.included, true);
    assert.deepEqual(manifest.files.filter((f: any) => f.role === "model").map((f: any) => f.path).sort(), ["models/bound/SmolLM2-135M-Instruct.Q4_1.gguf", "models/bound/multilingual-e5-small-q4_0.gguf"]);
    const target = path.join(work, "restored-with-kek");
    const restored = await pustaka(["restore", path.join(dir, name!), "--data-dir", target]);
    assert.equal(restored.status, 0, restored.stderr);
    assert.match(restored.stdout, /KEK from the backup \(taken with --include-kek\)/);
    assert.deepEqual(readFileSync(path.join(target, "keys", "kek.bin")), readFileSync(kek()));
    for (const file of Object.values(MODELS)) {
      const copy = path.join(target, "models", "bound", path.basename(file));
      assert.match(restored.stdout, new RegExp(`model restored: ${copy.replace(/[/.]/g, "\\$&")}`));
      assert.equal(statSync(copy).size, statSync(file).size);
    }
  });

  it("refuses to back up a folder that is not a data folder, into the data folder, or a Postgres deployment", { timeout: 120_000 }, async () => {
    const empty = mkdtempSync(path.join(work, "empty-"));
    const notData = await pustaka(["backup", path.join(work, "x"), "--data-dir", empty]);
    assert.equal(notData.status, 2);
    assert.match(notData.stderr, /is not a Pustaka data folder \(it has no pustaka\.db\)/);
    assert.deepEqual(readdirSync(empty), [], "nothing created in it (no KEK either)");
    const inside = await pustaka(["backup", path.join(a.dataDir, "backups"), "--data-dir", a.dataDir]);
    assert.equal(inside.status, 2);
    assert.match(inside.stderr, /is inside the data folder .*: put backups elsewhere/);
    assert.ok(!existsSync(path.join(a.dataDir, "backups")));
    const pg = await pustaka(["backup", path.join(work, "pg"), "--database", "postgres://pustaka@127.0.0.1:1/pustaka"]);
    assert.equal(pg.status, 2);
    assert.match(pg.stderr, /keeps its state in Postgres \(database\.url\).*back the database up with pg_dump/);
    assert.ok(!existsSync(path.join(work, "pg")));
  });

  it("has run every backup and restore command docs/backup-restore.md shows", () => {
    assertDocumentedCommandsRun("docs/backup-restore.md", "backup-restore", cliRuns);
  });
});
