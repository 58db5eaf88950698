/**
 * Corpus bundles across instances (issue 35), through the HTTP API as the CLI and the
 * workbench use it: a bilingual corpus (Markdown, HTML, text, an e-mail with attachments, a
 * scanned notice read by OCR) exported from one instance and imported into a second with its
 * own data folder and keys, which then gives the same search results and the same cited
 * answers; a bundle made for the second instance's key; and each bad bundle (a flipped byte,
 * one cut short, a wrong passphrase, a foreign file, one re-signed by another key) refused
 * with its reason and nothing written; a missing embedding model refused, or indexed again
 * with a local one. Both ends are audited.
 */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import os from "node:os";
import { promisify } from "node:util";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { Decrypter, Encrypter } from "age-encryption";
import tar from "tar-stream";
import { reportEmail } from "../fixtures/email/build-email.js";
import { assertDocumentedCommandsRun } from "../helpers/doc-commands.js";
import { REPO_ROOT, testModel } from "../helpers/models.js";
import { evalDoc, upload, waitForStatus } from "../helpers/rag.js";
import { startTestServer, type TestServer } from "../helpers/test-server.js";
import { AuditSigner } from "../../src-server/security/audit-chain.js";
import { webStreamOf } from "../../src-server/rag/bundles/bundle-writer.js";

const PASSPHRASE = "sungai-kelantan-naik-dua-puluh-enam";
const CLI = [path.join(REPO_ROOT, "node_modules", "tsx", "dist", "cli.mjs"), path.join(REPO_ROOT, "src-server", "cli.ts")];
const NOTICE = path.join(REPO_ROOT, "test", "fixtures", "ocr", "notis-air-klang.png");
const QUESTIONS = [
  "Berapakah bilangan kemuncak mangsa di pusat pemindahan sementara semasa banjir Kelantan November 2022?",
  "During the late-2022 monsoon floods, what peak river level was recorded at the royal jetty gauge in Kelantan?",
  "Which areas lose their water supply during the Klang disruption?",
  "What share of rural households had broadband at the midterm review?",
];

async function bytesOf(stream: AsyncIterable<Uint8Array>): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const p of stream) parts.push(Buffer.from(p));
  return Buffer.concat(parts);
}

async function* once(bytes: Buffer): AsyncGenerator<Uint8Array> {
  yield bytes;
}

describe("corpus bundles between instances", () => {
  let a: TestServer;
  let b: TestServer;
  let sourceId: string;
  let bundle: Buffer;

  const exportFrom = async (t: TestServer, corpusId: string, body: unknown): Promise<Buffer> => {
    const res = await fetch(`${t.url}/v1/rag/corpora/${corpusId}/export`, { method: "POST", headers: { authorization: `Bearer ${t.key}`, "content-type": "application/json" }, body: JSON.stringify(body) });
    assert.equal(res.status, 200, await res.clone().text());
    assert.match(res.headers.get("content-disposition") ?? "", /attachment; filename="notis-banjir-dan-air\.pustaka"/);
    return Buffer.from(await res.arrayBuffer());
  };
  const stage = async (t: TestServer, file: Buffer, passphrase?: string) => {
    const form = new FormData();
    if (passphrase !== undefined) form.append("passphrase", passphrase);
    form.append("file", new Blob([file]), "corpus.pustaka");
    const res = await fetch(`${t.url}/v1/rag/bundles/imports`, { method: "POST", headers: { authorization: `Bearer ${t.key}` }, body: form });
    return { status: res.status, json: (await res.json()) as any };
  };
  const corpusNames = async (t: TestServer) => ((await t.call("GET", "/v1/rag/corpora?limit=100")).json.data as { name: string }[]).map((c) => c.name).sort();
  const importsLeft = (t: TestServer) => (existsSync(path.join(t.dataDir, "imports")) ? readdirSync(path.join(t.dataDir, "imports")) : []);
  const search = async (t: TestServer, corpusId: string, query: string) => (await t.call("POST", `/v1/rag/corpora/${corpusId}/search`, { query, top_k: 5 })).json.data as { filename: string; text: string; score: number; page: number | null }[];
  const answer = async (t: TestServer, corpusId: string, question: string) => {
    const res = await t.call("POST", `/v1/rag/corpora/${corpusId}/query`, { question, top_k: 3, max_tokens: 48, temperature: 0 });
    assert.equal(res.status, 200, JSON.stringify(res.json));
    return { answer: res.json.answer as string, citations: (res.json.citations as { filename: string; text: string; page: number | null }[]).map((c) => [c.filename, c.page, c.text]) };
  };

  before(async () => {
    const chat = testModel("smollm2-135m-instruct");
    a = await startTestServer({ bindings: { "svc-merlion-13b": chat, e5: testModel("multilingual-e5-small") }, rendererDir: null });
    // The second instance knows the same model file by another name, and has a minilm of its own.
    b = await startTestServer({ bindings: { "svc-merlion-13b": chat, "e5-tempatan": testModel("multilingual-e5-small"), minilm: testModel("all-minilm-l6-v2") }, rendererDir: null });
    sourceId = (await a.call("POST", "/v1/rag/corpora", { name: "Notis banjir dan air", embedding_model: "e5", search_defaults: { search: "hybrid", fusion: { method: "rrf" } }, metadata: { unit: "K-17" } })).json.id as string;
    const res = await upload(a, sourceId, [
      evalDoc("banjir-kelantan-2022.md"),
      evalDoc("notis-gangguan-bekalan-air-klang.html"),
      evalDoc("rural-broadband-midterm-review.txt"),
      { name: "laporan.eml", content: await reportEmail() },
      { name: "notis-air-klang.png", content: readFileSync(NOTICE) },
    ]);
    assert.equal(res.status, 202, JSON.stringify(res.json));
    const ready = await waitForStatus(a, sourceId, 900_000);
    assert.equal(ready.status, "ready");
    assert.equal(ready.document_counts.failed, 0, JSON.stringify(ready.document_counts));
    bundle = await exportFrom(a, sourceId, { passphrase: PASSPHRASE });
  });
  after(async () => {
    await a?.close();
    await b?.close();
  });

  it("imports into a second instance after showing the signer: the same search results and cited answers, sealed under its own keys", async () => {
    const signer = (await a.call("GET", "/v1/rag/bundles/recipient")).json.signer.key_id as string;
    assert.notEqual(signer, (await b.call("GET", "/v1/rag/bundles/recipient")).json.signer.key_id, "each instance signs with its own key");
    const staged = await stage(b, bundle, PASSPHRASE);
    assert.equal(staged.status, 201, JSON.stringify(staged.json));
    const source = (await a.call("GET", `/v1/rag/corpora/${sourceId}`)).json;
    assert.equal(staged.json.signer.key_id, signer);
    assert.equal(staged.json.source.corpus_name, "Notis banjir dan air");
    assert.deepEqual([staged.json.counts.documents, staged.json.counts.passages], [source.document_counts.total, source.chunk_count]);
    assert.equal(staged.json.embedding_model.local, "e5-tempatan", "the same GGUF, known here by another name");
    assert.equal(staged.json.encrypted_for, "passphrase");
    assert.deepEqual(await corpusNames(b), [], "verifying writes nothing");

    const committed = await b.call("POST", `/v1/rag/bundles/imports/${staged.json.id}/commit`, { passphrase: PASSPHRASE, expected_signer: signer });
    assert.equal(committed.status, 201, JSON.stringify(committed.json));
    const imported = committed.json;
    assert.notEqual(imported.id, sourceId);
    assert.deepEqual([imported.name, imported.embedding_model, imported.status, imported.chunk_count, imported.document_counts], ["Notis banjir dan air", "e5-tempatan", "ready", source.chunk_count, source.document_counts]);
    assert.deepEqual(imported.search_defaults, source.search_defaults);
    assert.deepEqual(imported.metadata, { unit: "K-17" });
    assert.deepEqual(importsLeft(b), [], "the received bundle is removed once imported");

    for (const q of QUESTIONS) {
      const [want, got] = [await search(a, sourceId, q), await search(b, imported.id, q)];
      assert.ok(want.length > 0, q);
      assert.deepEqual(got.map((h) => [h.filename, h.page, h.text]), want.map((h) => [h.filename, h.page, h.text]), q);
      got.forEach((h, i) => assert.ok(Math.abs(h.score - want[i]!.score) < 1e-4, `${q}: score ${h.score} against ${want[i]!.score}`));
      assert.deepEqual(await answer(b, imported.id, q), await answer(a, sourceId, q), q);
    }
    // What came out of the e-mail, and what OCR read, came along.
    const uploads = (await b.call("GET", `/v1/rag/corpora/${imported.id}/documents?parent_document_id=none&order=asc`)).json.data as any[];
    const eml = uploads.find((d) => d.filename === "laporan.eml");
    assert.equal(eml.children.attachments, 3);
    const attachments = (await b.call("GET", `/v1/rag/corpora/${imported.id}/documents?parent_document_id=${eml.id}`)).json.data as any[];
    assert.ok(attachments.every((d) => d.relation === "attachment" && d.status === "indexed"));
    const png = uploads.find((d) => d.filename === "notis-air-klang.png");
    assert.equal(png.ocr.pages.length, 1);
    const words = (await b.call("GET", `/v1/rag/corpora/${imported.id}/documents/${png.id}/pages/1/ocr`)).json;
    const sourcePng = ((await a.call("GET", `/v1/rag/corpora/${sourceId}/documents?parent_document_id=none&order=asc`)).json.data as any[]).find((d) => d.filename === "notis-air-klang.png");
    assert.deepEqual(words.words, (await a.call("GET", `/v1/rag/corpora/${sourceId}/documents/${sourcePng.id}/pages/1/ocr`)).json.words);
    // Originals byte for byte.
    const original = await fetch(`${b.url}/v1/rag/corpora/${imported.id}/documents/${png.id}/content`, { headers: { authorization: `Bearer ${b.key}` } });
    assert.deepEqual(Buffer.from(await original.arrayBuffer()), readFileSync(NOTICE));

    // Audited at both ends.
    const exported = (await a.call("GET", "/v1/audit/events?type=corpus.export")).json.data as any[];
    assert.ok(exported.some((e) => e.outcome === "success" && e.data.corpus_id === sourceId && e.data.signer === signer));
    const importedEvents = (await b.call("GET", "/v1/audit/events?type=corpus.import")).json.data as any[];
    assert.ok(importedEvents.some((e) => e.data.stage === "commit" && e.outcome === "success" && e.data.corpus_id === imported.id && e.data.signer === signer));
  });

  it("opens a bundle made for the receiving instance's key without a passphrase; no other instance opens it", async () => {
    const recipient = (await b.call("GET", "/v1/rag/bundles/recipient")).json.recipient as string;
    assert.match(recipient, /^age1[02-9ac-hj-np-z]{58}$/);
    const sealed = await exportFrom(a, sourceId, { recipients: [recipient] });
    const refused = await stage(a, sealed);
    assert.deepEqual([refused.status, refused.json.error.code], [400, "bundle_key_mismatch"]);
    const staged = await stage(b, sealed);
    assert.equal(staged.status, 201, JSON.stringify(staged.json));
    assert.equal(staged.json.encrypted_for, "recipient");
    const committed = await b.call("POST", `/v1/rag/bundles/imports/${staged.json.id}/commit`, { name: "Salinan untuk pejabat" });
    assert.equal(committed.status, 201, JSON.stringify(committed.json));
    assert.equal(committed.json.name, "Salinan untuk pejabat");
    assert.equal((await b.call("DELETE", `/v1/rag/corpora/${committed.json.id}`)).status, 200);
  });

  it("refuses a flipped byte, a bundle cut short, a wrong passphrase, a foreign file and one re-signed by another key, writing nothing", async () => {
    const before = await corpusNames(b);
    const flipped = Buffer.from(bundle);
    flipped[Math.floor(bundle.length / 2)]! ^= 0x40;
    const cases: [string, Buffer, string | undefined, string][] = [
      ["a flipped byte", flipped, PASSPHRASE, "bundle_tampered"],
      ["cut short", bundle.subarray(0, Math.floor(bundle.length * 0.6)), PASSPHRASE, "bundle_truncated"],
      ["the wrong passphrase", bundle, "bukan-kata-laluan-ini", "bundle_key_mismatch"],
      ["a Markdown file", readFileSync(path.join(REPO_ROOT, "test", "fixtures", "eval", "docs", "banjir-kelantan-2022.md")), PASSPHRASE, "bundle_format_unknown"],
      ["nothing", Buffer.alloc(0), PASSPHRASE, "bundle_format_unknown"],
    ];
    for (const [what, file, passphrase, code] of cases) {
      const res = await stage(b, file, passphrase);
      assert.deepEqual([res.status, res.json.error?.code], [400, code], `${what}: ${JSON.stringify(res.json)}`);
      assert.equal(res.json.error.type, "invalid_request_error");
    }

    // Re-signed: someone who knows the passphrase swaps a passage and signs the manifest with their own key.
    const forger = AuditSigner.fromPem(AuditSigner.generatePem().pem);
    const d = new Decrypter();
    d.addPassphrase(PASSPHRASE);
    const plain = await bytesOf(await d.decrypt(webStreamOf(once(bundle))));
    const extract = tar.extract();
    const entries: { name: string; data: Buffer }[] = [];
    const reading = (async () => {
      for await (const entry of extract) entries.push({ name: entry.header.name, data: await bytesOf(entry as AsyncIterable<Uint8Array>) });
    })();
    extract.end(plain);
    await reading;
    const { createHash } = await import("node:crypto");
    const altered = entries.map((e) => (e.name.startsWith("passages/") ? { ...e, data: Buffer.from(e.data.toString("utf8").replace(/41,870/g, "14,870")) } : e));
    const manifest = JSON.parse(altered.at(-1)!.data.toString("utf8"));
    manifest.entries = altered.slice(0, -1).map((e) => ({ name: e.name, bytes: e.data.length, sha256: createHash("sha256").update(e.data).digest("hex") }));
    delete manifest.signature;
    const signed = { ...manifest, key_id: forger.keyId, public_key: forger.publicKey };
    altered[altered.length - 1] = { name: "manifest.json", data: Buffer.from(JSON.stringify({ ...signed, signature: forger.sign(signed) })) };
    const pack = tar.pack();
    for (const e of altered) pack.entry({ name: e.name, size: e.data.length }, e.data);
    pack.finalize();
    const encrypter = new Encrypter();
    encrypter.setPassphrase(PASSPHRASE);
    const forged = await bytesOf(await encrypter.encrypt(webStreamOf(pack as AsyncIterable<Uint8Array>)));
    const staged = await stage(b, forged, PASSPHRASE);
    assert.equal(staged.status, 201, "a re-signed bundle verifies, as the forger's");
    assert.equal(staged.json.signer.key_id, forger.keyId);
    const signer = (await a.call("GET", "/v1/rag/bundles/recipient")).json.signer.key_id as string;
    const refused = await b.call("POST", `/v1/rag/bundles/imports/${staged.json.id}/commit`, { passphrase: PASSPHRASE, expected_signer: signer });
    assert.deepEqual([refused.status, refused.json.error.code], [400, "bundle_signer_mismatch"]);
    assert.match(refused.json.error.message, new RegExp(`signed by ${forger.keyId}`));
    assert.equal((await b.call("DELETE", `/v1/rag/bundles/imports/${staged.json.id}`)).status, 200);

    assert.deepEqual(await corpusNames(b), before, "no corpus was created");
    assert.deepEqual(importsLeft(b), [], "no received bundle is kept");
    const failures = ((await b.call("GET", "/v1/audit/events?type=corpus.import")).json.data as any[]).filter((e) => e.outcome === "failure").map((e) => e.data.reason);
    for (const code of ["bundle_tampered", "bundle_truncated", "bundle_key_mismatch", "bundle_format_unknown", "bundle_signer_mismatch"]) assert.ok(failures.includes(code), `${code} audited (${failures.join(", ")})`);
  });

  it("does the same from the command line: export by name to a file, import with the signer confirmed; a wrong signer or none confirmed imports nothing", async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "pustaka-cli-bundle-"));
    const runs: string[][] = [];
    const run = async (t: TestServer, args: string[]) => {
      runs.push(args);
      try {
        const { stdout, stderr } = await promisify(execFile)(process.execPath, [...CLI, ...args], { env: { ...process.env, PUSTAKA_URL: t.url, PUSTAKA_API_KEY: t.key }, timeout: 300_000 });
        return { code: 0, stdout, stderr };
      } catch (error) {
        const e = error as { code: number; stdout: string; stderr: string };
        return { code: e.code, stdout: e.stdout, stderr: e.stderr };
      }
    };
    try {
      const secret = path.join(dir, "passphrase.txt");
      writeFileSync(secret, `${PASSPHRASE}\n`, { mode: 0o600 });
      const file = path.join(dir, "notis.pustaka");
      assert.match((await run(a, ["corpora", "list"])).stdout, new RegExp(`${sourceId}  Notis banjir dan air`));
      const recipient = (await b.call("GET", "/v1/rag/bundles/recipient")).json as { recipient: string; signer: { key_id: string } };
      assert.equal((await run(b, ["corpora", "recipient"])).stdout, `recipient: ${recipient.recipient}\nsigner:    ${recipient.signer.key_id}\n`);
      const exported = await run(a, ["corpora", "export", "Notis banjir dan air", "--output", file, "--passphrase-file", secret]);
      assert.equal(exported.code, 0, exported.stderr);
      const signer = (await a.call("GET", "/v1/rag/bundles/recipient")).json.signer.key_id as string;
      assert.match(exported.stdout, new RegExp(`signed by ${signer}`));
      assert.ok(statSync(file).size > 10_000);
      assert.ok(!existsSync(`${file}.partial`));

      const before = await corpusNames(b);
      const wrong = await run(b, ["corpora", "import", file, "--passphrase-file", secret, "--expect-signer", "ed25519:0000000000000000"]);
      assert.equal(wrong.code, 2, wrong.stderr);
      assert.match(wrong.stderr, new RegExp(`signed by ${signer}`));
      const unconfirmed = await run(b, ["corpora", "import", file, "--passphrase-file", secret]);
      assert.equal(unconfirmed.code, 2);
      assert.match(unconfirmed.stderr, /confirm the signer with --expect-signer/);
      assert.match(unconfirmed.stderr, new RegExp(`signed by\\s+${signer}`));
      assert.deepEqual(await corpusNames(b), before);
      assert.deepEqual(importsLeft(b), []);

      const imported = await run(b, ["corpora", "import", file, "--passphrase-file", secret, "--expect-signer", signer, "--name", "Dari baris perintah"]);
      assert.equal(imported.code, 0, imported.stderr);
      assert.match(imported.stdout, /imported as corp_\w+ 'Dari baris perintah' \(\d+ documents, \d+ passages, e5-tempatan, ready\)/);
      assert.deepEqual(await corpusNames(b), [...before, "Dari baris perintah"].sort());
      // For the receiving instance's key: no passphrase travels, and none is asked.
      const sealed = path.join(dir, "untuk-b.pustaka");
      const forB = await run(a, ["corpora", "export", sourceId, "-o", sealed, "--recipient", recipient.recipient]);
      // The short flag works too; the documented form is the long one.
      assert.equal((await run(a, ["corpora", "export", sourceId, "--output", `${sealed}.2`, "--recipient", recipient.recipient])).code, 0);
      assert.equal(forB.code, 0, forB.stderr);
      const opened = await run(b, ["corpora", "import", sealed, "--yes", "--name", "Untuk B"]);
      assert.equal(opened.code, 0, opened.stderr);
      assert.match(opened.stdout, /imported as corp_\w+ 'Untuk B'/);
      // Every command docs/bundles.md shows was run here.
      assertDocumentedCommandsRun("docs/bundles.md", "bundles", runs);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("refuses a bundle whose embedding model is not here, or indexes its documents again with a local model when asked", async () => {
    const c = await startTestServer({ bindings: { "svc-merlion-13b": testModel("smollm2-135m-instruct"), minilm: testModel("all-minilm-l6-v2") }, rendererDir: null });
    try {
      const staged = await stage(c, bundle, PASSPHRASE);
      assert.equal(staged.status, 201, JSON.stringify(staged.json));
      assert.equal(staged.json.embedding_model.local, null);
      const missing = await c.call("POST", `/v1/rag/bundles/imports/${staged.json.id}/commit`, { passphrase: PASSPHRASE });
      assert.deepEqual([missing.status, missing.json.error.code, missing.json.error.param], [400, "embedding_model_missing", "embedding_model"]);
      assert.match(missing.json.error.message, /multilingual|e5/);
      assert.deepEqual(await corpusNames(c), []);
      const reindexed = await c.call("POST", `/v1/rag/bundles/imports/${staged.json.id}/commit`, { passphrase: PASSPHRASE, embedding_model: "minilm" });
      assert.equal(reindexed.status, 201, JSON.stringify(reindexed.json));
      assert.equal(reindexed.json.embedding_model, "minilm");
      const ready = await waitForStatus(c, reindexed.json.id, 900_000);
      assert.deepEqual([ready.status, ready.document_counts.failed], ["ready", 0]);
      assert.equal((await search(c, reindexed.json.id, QUESTIONS[0]!))[0]?.filename, "banjir-kelantan-2022.md");
    } finally {
      await c.close();
    }
  });
});
