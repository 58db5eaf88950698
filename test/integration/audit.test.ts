/**
 * The audit trail end to end: entries for inference, uploads, queries, deletions, key
 * changes, failed authentication and rate-limit refusals (prompts only as hashes);
 * append-only in the database itself; hash-chained and verifiable; exports (JSONL and
 * CSV) with a signed manifest checked offline by `pustaka audit verify`, which finds edits,
 * removed entries and a cut tail; tampering through the sqlite3 CLI found by
 * `/v1/audit/verify`.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import canonicalize from "canonicalize";
import { REPO_ROOT, testModel, tinyModel } from "../helpers/models.js";
import { upload, waitForStatus } from "../helpers/rag.js";
import { readSse, startTestServer, type TestServer } from "../helpers/test-server.js";

const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");
const CLI = path.join(REPO_ROOT, "src-server", "cli.ts");

/** `pustaka audit verify` through tsx, as a user would run it. */
function verifyCli(...args: string[]): { status: number; out: string } {
  const result = spawnSync(process.execPath, ["--import", "tsx", CLI, "audit", "verify", ...args], { cwd: REPO_ROOT, encoding: "utf8" });
  return { status: result.status ?? -1, out: `${result.stdout}${result.stderr}` };
}

function sqlite(db: string, sql: string): { status: number; stderr: string } {
  const result = spawnSync("sqlite3", [db, sql], { encoding: "utf8" });
  if (result.error) throw new Error(`the sqlite3 CLI is needed for this test (apt-get install sqlite3): ${result.error.message}`);
  return { status: result.status ?? -1, stderr: result.stderr };
}

describe("audit trail", () => {
  let t: TestServer;
  let dataDir: string;
  let work: string;
  const events = async (query: string, key?: string) => (await t.call("GET", `/v1/audit/events?${query}`, undefined, key)).json;
  const exportText = async (query: string) => {
    const res = await fetch(`${t.url}/v1/audit/export?${query}`, { headers: { authorization: `Bearer ${t.key}` } });
    assert.equal(res.status, 200, await res.clone().text());
    return { text: await res.text(), type: res.headers.get("content-type") };
  };

  before(async () => {
    dataDir = mkdtempSync(path.join(os.tmpdir(), "pustaka-audit-"));
    work = mkdtempSync(path.join(os.tmpdir(), "pustaka-audit-work-"));
    t = await startTestServer({
      bindings: { chat: testModel("smollm2-135m-instruct"), tiny: tinyModel("stories260K"), minilm: testModel("all-minilm-l6-v2") },
      dataDir,
      config: { chat: { contextSize: 1024, sequences: 1 }, rag: { minSimilarity: -1 }, rateLimits: { tiers: { one: { requestsPerMinute: 1, tokensPerMinute: 0 } } } },
    });
  });
  after(async () => {
    await t.close();
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(work, { recursive: true, force: true });
  });

  it("records chat and embeddings by the prompt's hash, never its text, with model, tokens, status and identity", async () => {
    const messages = [{ role: "user", content: "Sebutkan satu negeri di Malaysia." }];
    const chat = await t.call("POST", "/v1/chat/completions", { model: "chat", messages, max_tokens: 8, temperature: 0 });
    assert.equal(chat.status, 200);
    const requestId = chat.headers.get("x-request-id")!;
    const streamed = await fetch(`${t.url}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${t.key}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "chat", messages, max_tokens: 4, stream: true }),
    });
    await readSse(streamed);
    const bad = await t.call("POST", "/v1/embeddings", { model: "tiny", input: ["ok", ""] });
    assert.equal(bad.status, 400);
    assert.equal((await t.call("POST", "/v1/embeddings", { model: "tiny", input: ["rahsia sulit"] })).status, 200);

    const me = (await t.call("GET", "/v1/me")).json;
    const chats = (await events("type=chat.completion&order=asc")).data;
    assert.equal(chats.length, 2);
    const [first, second] = chats;
    assert.equal(first.request_id, requestId);
    assert.equal(first.actor, `api_key:${me.key_id}`);
    assert.equal(first.chain, "ws_default");
    assert.equal(first.outcome, "success");
    assert.equal(first.data.prompt_sha256, sha256(canonicalize(messages)!));
    assert.equal(first.data.model, "chat");
    assert.equal(first.data.prompt_tokens, chat.json.usage.prompt_tokens);
    assert.equal(first.data.completion_tokens, chat.json.usage.completion_tokens);
    assert.equal(first.data.status, 200);
    assert.equal(typeof first.data.latency_ms, "number");
    assert.equal(second.data.stream, true);
    assert.ok(second.data.completion_tokens > 0, "a streamed completion's tokens are recorded when it ends");

    const embeds = (await events("type=embeddings.create&order=asc")).data;
    assert.equal(embeds.length, 2);
    assert.equal(embeds[0].outcome, "failure");
    assert.equal(embeds[0].data.status, 400);
    assert.equal(embeds[0].data.error, bad.json.error.code);
    assert.ok(embeds[0].data.input_sha256, "a refused request is recorded by its input's hash too");
    assert.equal(embeds[1].data.input_sha256, sha256(canonicalize(["rahsia sulit"])!));
    assert.equal(embeds[1].data.inputs, 1);
    // The text itself is nowhere in the database (WAL included).
    const raw = Buffer.concat([readFileSync(path.join(dataDir, "pustaka.db")), readFileSync(path.join(dataDir, "pustaka.db-wal"))]);
    assert.equal(raw.includes(Buffer.from("rahsia sulit")), false);
    assert.equal(raw.includes(Buffer.from("negeri di Malaysia")), false);
  });

  it("records each uploaded file (accepted or refused, and why), queries with their citations, and deletions", { timeout: 300_000 }, async () => {
    const corpus = (await t.call("POST", "/v1/rag/corpora", { name: "Audit", embedding_model: "minilm", chunking: "paragraph" })).json;
    const text = "Banjir besar melanda Kelantan pada Disember 2022.\n\nSeramai 40,000 mangsa dipindahkan.";
    const up = await upload(t, corpus.id, [
      { name: "a.txt", content: text },
      { name: "b.txt", content: text },
      { name: "c.bin", content: Buffer.from([0, 1, 2, 3, 0, 0, 255]) },
    ]);
    assert.equal(up.status, 202);
    await waitForStatus(t, corpus.id);
    const uploads = (await events("type=document.upload&order=asc")).data;
    assert.equal(uploads.length, 3, "one entry per file");
    const accepted = uploads.find((e: any) => e.outcome === "success");
    assert.equal(accepted.data.document_id, up.json.documents[0].id);
    assert.equal(accepted.data.sha256, sha256(text));
    assert.equal(accepted.data.bytes, Buffer.byteLength(text));
    assert.equal(accepted.data.format, "txt");
    assert.deepEqual(uploads.filter((e: any) => e.outcome === "failure").map((e: any) => e.data.reason).sort(), ["duplicate_document", "unsupported_file_type"]);

    const question = "Berapa mangsa dipindahkan?";
    const answer = await t.call("POST", `/v1/rag/corpora/${corpus.id}/query`, { question, model: "chat", max_tokens: 16 });
    assert.equal(answer.status, 200);
    const [query] = (await events("type=rag.query")).data;
    assert.equal(query.data.corpus_id, corpus.id);
    assert.equal(query.data.question_sha256, sha256(question));
    assert.deepEqual(
      query.data.citations.map((c: any) => c.chunk_id),
      answer.json.citations.map((c: any) => c.chunk_id),
    );
    assert.ok(query.data.prompt_tokens > 0);

    assert.equal((await t.call("DELETE", `/v1/rag/corpora/${corpus.id}/documents/${accepted.data.document_id}`)).status, 200);
    assert.equal((await t.call("DELETE", `/v1/rag/corpora/${corpus.id}`)).status, 200);
    const deletions = (await events("type=corpus.&order=asc")).data.map((e: any) => e.type);
    assert.deepEqual(deletions, ["corpus.create", "corpus.delete"]);
    const [docDelete] = (await events("type=document.delete")).data;
    assert.equal(docDelete.data.document_id, accepted.data.document_id);
  });

  it("records key and workspace changes in the touched workspace's chain, failed authentication and rate-limit refusals", async () => {
    const ws = (await t.call("POST", "/v1/admin/workspaces", { name: "Audit team" })).json;
    const key = (await t.call("POST", `/v1/admin/workspaces/${ws.id}/api_keys`, { name: "limited", scopes: ["inference"] })).json;
    assert.equal((await t.call("PATCH", `/v1/admin/workspaces/${ws.id}/api_keys/${key.id}`, { rate_limit_tier: "one" })).status, 200);
    assert.equal((await t.call("POST", "/v1/embeddings", { model: "tiny", input: "a" }, key.secret)).status, 200);
    assert.equal((await t.call("POST", "/v1/embeddings", { model: "tiny", input: "b" }, key.secret)).status, 429);
    assert.equal((await t.call("DELETE", `/v1/admin/workspaces/${ws.id}/api_keys/${key.id}`)).status, 200);
    assert.equal((await t.call("GET", "/v1/models", undefined, key.secret)).status, 401);
    assert.equal((await t.call("GET", "/v1/models", undefined, "psk-notarealkeynotarealkey00")).status, 401);

    const chain = (await events(`chain=${ws.id}&order=asc`)).data;
    assert.deepEqual(
      chain.map((e: any) => e.type),
      ["workspace.create", "api_key.create", "api_key.update", "embeddings.create", "rate_limit.rejected", "api_key.revoke"],
    );
    assert.equal(chain[1].data.key_id, key.id);
    assert.equal(chain[4].data.operation, "embeddings.create");
    assert.equal(chain[4].actor, `api_key:${key.id}`);
    assert.ok(!JSON.stringify(chain).includes(key.secret), "no secret in the trail");
    const failed = (await events("chain=instance&type=auth.failed")).data;
    assert.deepEqual(failed.map((e: any) => e.data.reason).sort(), ["invalid_api_key", "revoked_api_key"]);
    assert.equal(failed.find((e: any) => e.data.reason === "revoked_api_key").data.key_prefix, key.secret.slice(0, 12));
    // The workspace's own keys cannot read other chains; audit.read is required.
    const reader = (await t.call("POST", `/v1/admin/workspaces/${ws.id}/api_keys`, { name: "auditor", scopes: ["audit.read"] })).json;
    assert.equal((await events("chain=ws_default", reader.secret)).error.code, "audit_chain_not_found");
    assert.equal((await events("", reader.secret)).data.length, 7);
    const noScope = (await t.call("POST", `/v1/admin/workspaces/${ws.id}/api_keys`, { name: "plain", scopes: ["inference"] })).json;
    assert.equal((await t.call("GET", "/v1/audit/events", undefined, noScope.secret)).status, 403);
  });

  it("lists with filters and cursor pagination, and refuses bad filters in the error shape", async () => {
    const page1 = await events("limit=2&order=asc");
    assert.equal(page1.data.length, 2);
    assert.equal(page1.has_more, true);
    assert.deepEqual(page1.data.map((e: any) => e.seq), [1, 2]);
    const page2 = await events(`limit=2&order=asc&after=${page1.last_id}`);
    assert.deepEqual(page2.data.map((e: any) => e.seq), [3, 4]);
    assert.equal((await events("outcome=failure")).data.every((e: any) => e.outcome === "failure"), true);
    const future = new Date(Date.now() + 3600_000).toISOString();
    assert.equal((await events(`since=${future}`)).data.length, 0);
    for (const bad of ["since=yesterday", "type=DROP%20TABLE", "limit=0", "outcome=maybe", "chain=../x", "nope=1"]) {
      const res = await t.call("GET", `/v1/audit/events?${bad}`);
      assert.equal(res.status, 400, bad);
      assert.deepEqual(Object.keys(res.json.error).sort(), ["code", "message", "param", "type"]);
    }
  });

  it("exports JSONL and CSV with a signed manifest that `pustaka audit verify` checks offline, finding edits, removals and a cut tail", { timeout: 120_000 }, async () => {
    const key = (await t.call("GET", "/v1/audit/signing-key")).json;
    assert.match(key.key_id, /^ed25519:[0-9a-f]{16}$/);
    const pem = path.join(work, "audit-key.pem");
    writeFileSync(pem, key.public_key_pem);

    const jsonl = await exportText("format=jsonl");
    assert.match(jsonl.type!, /ndjson/);
    const lines = jsonl.text.trimEnd().split("\n");
    const manifest = JSON.parse(lines.at(-1)!);
    assert.equal(manifest.object, "audit.manifest");
    assert.equal(manifest.count, lines.length - 1);
    assert.equal(manifest.key_id, key.key_id);
    const good = path.join(work, "good.jsonl");
    writeFileSync(good, jsonl.text);
    const ok = verifyCli(good, "--public-key", pem);
    assert.equal(ok.status, 0, ok.out);
    assert.match(ok.out, /^VALID/);

    const csv = await exportText("format=csv");
    const csvFile = path.join(work, "good.csv");
    writeFileSync(csvFile, csv.text);
    const csvOk = verifyCli(csvFile, "--public-key", pem);
    assert.equal(csvOk.status, 0, csvOk.out);

    // A time range is a contiguous run of the chain, checked against its own anchor.
    const mid = JSON.parse(lines[3]!).time;
    const ranged = path.join(work, "ranged.jsonl");
    writeFileSync(ranged, (await exportText(`since=${encodeURIComponent(mid)}`)).text);
    assert.equal(verifyCli(ranged).status, 0);

    const variants: Record<string, string[]> = {
      edited: lines.map((l, i) => (i === 2 ? l.replace(/"outcome":"(success|failure)"/, (_m, o: string) => `"outcome":"${o === "success" ? "failure" : "success"}"`) : l)),
      removed: lines.filter((_l, i) => i !== 3),
      tail_cut: lines.slice(0, -3),
      last_entries_removed: [...lines.slice(0, -3), lines.at(-1)!],
    };
    const expected: Record<string, RegExp> = { edited: /hash_mismatch at entry 3/, removed: /sequence_gap|broken_link/, tail_cut: /manifest_missing/, last_entries_removed: /truncated/ };
    for (const [name, content] of Object.entries(variants)) {
      const file = path.join(work, `${name}.jsonl`);
      writeFileSync(file, `${content.join("\n")}\n`);
      const result = verifyCli(file, "--public-key", pem);
      assert.equal(result.status, 1, `${name}: ${result.out}`);
      assert.match(result.out, /^INVALID/);
      assert.match(result.out, expected[name]!, `${name}: ${result.out}`);
    }
    // A manifest re-signed by someone else's key passes its own signature but not the pinned key.
    const otherDir = mkdtempSync(path.join(os.tmpdir(), "pustaka-audit-other-"));
    const other = await startTestServer({ bindings: {}, dataDir: otherDir });
    try {
      const otherExport = await fetch(`${other.url}/v1/audit/export`, { headers: { authorization: `Bearer ${other.key}` } });
      const foreign = path.join(work, "foreign.jsonl");
      writeFileSync(foreign, await otherExport.text());
      const result = verifyCli(foreign, "--public-key", pem);
      assert.equal(result.status, 1);
      assert.match(result.out, /untrusted_key/);
    } finally {
      await other.close();
      rmSync(otherDir, { recursive: true, force: true });
    }
    const missing = verifyCli(path.join(work, "nope.jsonl"));
    assert.equal(missing.status, 2);
    assert.match(missing.out, /cannot read/);
  });

  it("is append-only in the database, and verify finds a tampered row and rows deleted from the end through the sqlite3 CLI", async () => {
    const intact = (await t.call("GET", "/v1/audit/verify")).json;
    assert.equal(intact.valid, true, JSON.stringify(intact.problems));
    assert.equal(intact.first_problem, null);
    assert.ok(intact.checked_entries > 20);
    const before = (await t.call("GET", "/v1/audit/verify?chain=ws_default")).json.chains[0];

    const db = path.join(dataDir, "pustaka.db");
    const update = sqlite(db, "UPDATE audit_events SET outcome = 'success' WHERE chain = 'ws_default' AND seq = 5;");
    assert.notEqual(update.status, 0);
    assert.match(update.stderr, /append-only: UPDATE refused/);
    const del = sqlite(db, "DELETE FROM audit_events WHERE chain = 'ws_default' AND seq = 5;");
    assert.match(del.stderr, /append-only: DELETE refused/);
    const forged = sqlite(db, `INSERT INTO audit_events (id, chain, seq, at_ms, type, actor, outcome, request_id, body, prev_hash, hash) VALUES ('aud_x', 'ws_default', 1000, 0, 't', 'a', 'success', NULL, '{}', 'x', 'y');`);
    assert.match(forged.stderr, /must extend its chain/);

    // Someone with the file drops the protection, edits entry 5 and cuts the last 3 entries.
    const attack = sqlite(
      db,
      `DROP TRIGGER audit_events_no_update; DROP TRIGGER audit_events_no_delete;
       UPDATE audit_events SET actor = 'api_key:key_someoneelse' WHERE chain = 'ws_default' AND seq = 5;
       DELETE FROM audit_events WHERE chain = 'ws_default' AND seq > ${before.head_seq - 3};`,
    );
    assert.equal(attack.status, 0, attack.stderr);
    const found = (await t.call("GET", "/v1/audit/verify?chain=ws_default")).json;
    assert.equal(found.valid, false);
    assert.equal(found.first_problem.seq, 5);
    assert.equal(found.first_problem.reason, "hash_mismatch");
    const reasons = found.problems.map((p: any) => p.reason);
    assert.ok(reasons.includes("truncated"), JSON.stringify(found.problems));
    assert.ok(reasons.includes("append_only_disabled"));
    const truncated = found.problems.find((p: any) => p.reason === "truncated");
    assert.equal(truncated.seq, before.head_seq - 2);
    assert.match(truncated.message, new RegExp(`${before.head_seq - 2}–${before.head_seq}`));
    // Offline too: an export taken now carries the altered entry and fails.
    const file = path.join(work, "after-attack.jsonl");
    writeFileSync(file, (await exportText("")).text);
    assert.match(verifyCli(file).out, /hash_mismatch at entry 5/);
  });
});
