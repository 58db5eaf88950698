/**
 * The bundle format on its own (no server): a corpus written with real seals, age and
 * Ed25519, read back and verified; and each way a bundle can be wrong, made with the same
 * tools an attacker or an accident would use (a flipped byte, a cut, a re-signed manifest, a
 * re-encrypted altered entry, a foreign file), refused with its own code.
 */
import assert from "node:assert/strict";
import { createHash, randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { Decrypter, Encrypter, generateX25519Identity, identityToRecipient } from "age-encryption";
import tar from "tar-stream";
import { AuditSigner } from "../../security/audit-chain.js";
import { DataCipher } from "../../security/data-cipher.js";
import type { CorpusRecord } from "../../store/corpus-store.js";
import type { DocumentRecord } from "../../store/document-store.js";
import type { SealedChunk } from "../../store/chunk-store.js";
import { sealContent, sealVector } from "../chunk-codec.js";
import { MANIFEST_ENTRY, type Manifest } from "./bundle-format.js";
import { BundleError, readBundle } from "./bundle-reader.js";
import { exportBundle, webStreamOf, type BundleEncryption, type BundleSource } from "./bundle-writer.js";

const PASSPHRASE = "kapal-layar-merah-tujuh-pulau";
const DIMS = 8;

async function collect(stream: AsyncIterable<Uint8Array>): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const p of stream) parts.push(Buffer.from(p));
  return Buffer.concat(parts);
}

async function* chunksOf(bytes: Buffer, size = 100_000): AsyncGenerator<Uint8Array> {
  for (let i = 0; i < bytes.length; i += size) yield bytes.subarray(i, i + size);
}

describe("corpus bundles: the format", () => {
  let dir: string;
  let signer: AuditSigner;
  let other: AuditSigner;
  const cipher = new DataCipher(randomBytes(32));
  const corpus: CorpusRecord = {
    id: "corp_src",
    workspaceId: "ws_1",
    name: "Notis banjir",
    chunking: "semantic",
    embeddingModel: "embed",
    dimensions: DIMS,
    embeddingPrompts: { query: "query: ", document: "passage: " },
    rerankModel: null,
    searchDefaults: null,
    ocrLanguages: ["eng", "msa"],
    retentionDays: 30,
    metadata: { unit: "K-17" },
    createdAt: 1_700_000_000,
    updatedAt: 1_700_000_000,
  };
  const originals = new Map<string, Buffer>();
  const documents: DocumentRecord[] = [];
  const chunks = new Map<string, SealedChunk[]>();

  before(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), "pustaka-bundle-"));
    signer = AuditSigner.open(path.join(dir, "a.pem"));
    other = AuditSigner.open(path.join(dir, "b.pem"));
    for (let d = 0; d < 30; d++) {
      const id = `doc_${String(d).padStart(4, "0")}x`;
      // Originals large enough that passages and vectors span several parts.
      const original = Buffer.from(`Notis ${d}: paras air sungai ${"naik ".repeat(2000 + d)}`);
      originals.set(id, original);
      documents.push({
        id,
        corpusId: corpus.id,
        filename: `notis-${d}.txt`,
        contentType: "text/plain",
        format: "txt",
        bytes: original.length,
        sha256: createHash("sha256").update(original).digest("hex"),
        status: "indexed",
        error: null,
        pageCount: null,
        chunkCount: 40,
        metadata: {},
        attempts: 1,
        createdAt: 1_700_000_000 + d,
        updatedAt: 1_700_000_000 + d,
        indexedAt: 1_700_000_000 + d,
      });
      chunks.set(
        id,
        Array.from({ length: 40 }, (_, i) => {
          const chunkId = `chk_${d}_${i}`;
          const vector = Float32Array.from({ length: DIMS }, (_, k) => Math.sin(d * 100 + i * 10 + k));
          return {
            id: chunkId,
            corpusId: corpus.id,
            documentId: id,
            index: i,
            start: i * 100,
            end: i * 100 + 100,
            pageStart: null,
            pageEnd: null,
            tokenCount: 25,
            content: sealContent(cipher, chunkId, { text: `Passage ${i} of notis ${d}: ${"paras air ".repeat(400)}`, headingPath: ["Notis"], context: `Notis ${d}` }),
            vector: sealVector(cipher, chunkId, vector),
          };
        }),
      );
    }
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  const source = (by: AuditSigner = signer): BundleSource => ({
    corpus,
    cipher,
    documents: async function* () {
      yield* documents;
    },
    chunksOf: async (id) => chunks.get(id)!,
    original: async (id) => originals.get(id)!,
    ocrPage: async () => undefined,
    model: { name: "embed", sha256: "a".repeat(64), dimensions: DIMS },
    signer: by,
    exportedBy: "key_test",
    appVersion: "0.1.0",
    now: 1_800_000_000,
  });

  async function bundle(encryption: BundleEncryption = { passphrase: PASSPHRASE }, by?: AuditSigner): Promise<Buffer> {
    const { stream, done } = await exportBundle(source(by), encryption);
    const bytes = await collect(stream);
    await done;
    return bytes;
  }

  /** A bundle's tar entries (decrypted), to alter and pack again as a forger would. */
  async function entriesOf(bytes: Buffer): Promise<{ name: string; data: Buffer }[]> {
    const d = new Decrypter();
    d.addPassphrase(PASSPHRASE);
    const plain = await collect(await d.decrypt(webStreamOf(chunksOf(bytes))));
    const extract = tar.extract();
    const out: { name: string; data: Buffer }[] = [];
    const reading = (async () => {
      for await (const entry of extract) out.push({ name: entry.header.name, data: await collect(entry as AsyncIterable<Uint8Array>) });
    })();
    extract.end(plain);
    await reading;
    return out;
  }

  async function repack(entries: { name: string; data: Buffer }[]): Promise<Buffer> {
    const pack = tar.pack();
    for (const e of entries) pack.entry({ name: e.name, size: e.data.length }, e.data);
    pack.finalize();
    const encrypter = new Encrypter();
    encrypter.setPassphrase(PASSPHRASE);
    return collect(await encrypter.encrypt(webStreamOf(pack as AsyncIterable<Uint8Array>)));
  }

  async function refusal(bytes: Buffer, options: { passphrase?: string; identities?: string[]; expectedSigner?: string } = {}): Promise<string> {
    const { expectedSigner, ...decryption } = options;
    try {
      await readBundle(chunksOf(bytes), Object.keys(decryption).length ? decryption : { passphrase: PASSPHRASE }, expectedSigner ? { expectedSigner } : {});
    } catch (error) {
      assert.ok(error instanceof BundleError, `a BundleError, not ${String(error)}`);
      return error.code;
    }
    assert.fail("the bundle was accepted");
  }

  it("writes a corpus and reads it back, verified: every entry in order, parts of bounded size, the signer's key id", async () => {
    const bytes = await bundle();
    const seen: { name: string; bytes: number }[] = [];
    const verified = await readBundle(chunksOf(bytes), { passphrase: PASSPHRASE }, { visit: (name, data) => void seen.push({ name, bytes: data.length }) });
    assert.equal(verified.signer, signer.keyId);
    assert.deepEqual(verified.manifest.counts, { documents: 30, passages: 1200, original_bytes: [...originals.values()].reduce((s, b) => s + b.length, 0) });
    assert.equal(verified.manifest.source.instance, signer.keyId);
    assert.deepEqual(verified.manifest.embedding_model, { name: "embed", sha256: "a".repeat(64), dimensions: DIMS });
    assert.deepEqual(seen.slice(0, 2).map((e) => e.name), ["bundle.json", "corpus.json"]);
    const passageParts = seen.filter((e) => e.name.startsWith("passages/"));
    const vectorParts = seen.filter((e) => e.name.startsWith("vectors/"));
    assert.ok(passageParts.length >= 2, `passages cut into parts (${passageParts.length})`);
    assert.equal(vectorParts.length, passageParts.length);
    assert.ok(passageParts.every((p) => p.bytes < 5 * 1024 * 1024), "no part much beyond 4 MB");
    assert.equal(vectorParts.reduce((s, p) => s + p.bytes, 0), 1200 * DIMS * 4);
    assert.equal(seen.filter((e) => e.name.startsWith("originals/")).length, 30);
    assert.equal(verified.manifest.entries.length, seen.length);
  });

  it("is made for a recipient's X25519 key: that identity opens it, another does not, nor a passphrase", async () => {
    const identity = await generateX25519Identity();
    const stranger = await generateX25519Identity();
    const bytes = await bundle({ recipients: [await identityToRecipient(identity)] });
    const verified = await readBundle(chunksOf(bytes), { identities: [identity] });
    assert.equal(verified.manifest.counts.passages, 1200);
    assert.equal(await refusal(bytes, { identities: [stranger] }), "bundle_key_mismatch");
    assert.equal(await refusal(bytes, { passphrase: PASSPHRASE }), "bundle_key_mismatch");
  });

  it("refuses the wrong passphrase, a flipped byte, a bundle cut short and a foreign file, each with its code", async () => {
    const bytes = await bundle();
    assert.equal(await refusal(bytes, { passphrase: "salah" }), "bundle_key_mismatch");
    const flipped = Buffer.from(bytes);
    flipped[Math.floor(bytes.length / 2)]! ^= 0x01;
    assert.equal(await refusal(flipped), "bundle_tampered");
    assert.equal(await refusal(bytes.subarray(0, Math.floor(bytes.length * 0.7))), "bundle_truncated");
    assert.equal(await refusal(bytes.subarray(0, bytes.length - 1)), "bundle_truncated");
    assert.equal(await refusal(randomBytes(10_000)), "bundle_format_unknown");
    assert.equal(await refusal(Buffer.from("%PDF-1.7\n1 0 obj\n")), "bundle_format_unknown");
    // age-encrypted, but not a bundle: a tar of something else, and not a tar at all.
    assert.equal(await refusal(await repack([{ name: "etc/passwd", data: Buffer.from("root:x:0:0") }])), "bundle_format_unknown");
    const encrypter = new Encrypter();
    encrypter.setPassphrase(PASSPHRASE);
    assert.equal(await refusal(Buffer.from(await encrypter.encrypt("hello, not a tar"))), "bundle_format_unknown");
  });

  it("tells a byte flipped in a small bundle's first chunk from one cut short, however far age has read ahead", async () => {
    // Two age chunks, read from memory in 64 KiB pieces that come at once: age's streams have
    // read the whole input by the time the first chunk fails (the e2e test's bundle; this was
    // reported as "cut short" most of the time when the input's end decided it).
    const entries = await entriesOf(await bundle());
    const pack = tar.pack();
    for (const e of [entries[0]!, { name: "originals/doc_0001", data: randomBytes(90_000) }]) pack.entry({ name: e.name, size: e.data.length }, e.data);
    pack.finalize();
    const encrypter = new Encrypter();
    encrypter.setPassphrase(PASSPHRASE);
    encrypter.setScryptWorkFactor(10); // forty readings: not the default's second of scrypt each
    const small = await collect(await encrypter.encrypt(webStreamOf(pack as AsyncIterable<Uint8Array>)));
    assert.ok(small.length > 65_552 && small.length < 2 * 65_552, `two chunks (${small.length} bytes)`);
    const flipped = Buffer.from(small);
    flipped[2_000]! ^= 0x40;
    const lastFlipped = Buffer.from(small);
    lastFlipped[small.length - 5]! ^= 0x40;
    const codes = { first: new Set<string>(), last: new Set<string>(), cut: new Set<string>() };
    for (let i = 0; i < 15; i++) {
      const read = async (bytes: Buffer) => {
        try {
          await readBundle(chunksOf(bytes, 65_536), { passphrase: PASSPHRASE });
          return "accepted";
        } catch (error) {
          return error instanceof BundleError ? error.code : String(error);
        }
      };
      codes.first.add(await read(flipped));
      codes.last.add(await read(lastFlipped));
      codes.cut.add(await read(small.subarray(0, small.length - 1000)));
    }
    assert.deepEqual([...codes.first], ["bundle_tampered"]);
    assert.deepEqual([...codes.last], ["bundle_truncated"], "a failing last chunk reads as cut short, or its last bytes changed");
    assert.deepEqual([...codes.cut], ["bundle_truncated"]);
  });

  it("refuses content altered by someone who knows the passphrase: an altered entry, a dropped one, an added one", async () => {
    const entries = await entriesOf(await bundle());
    const altered = entries.map((e) => (e.name.startsWith("passages/000002") ? { ...e, data: Buffer.from(e.data.toString("utf8").replace("Passage 3 of", "Passage 9 of")) } : e));
    assert.notDeepEqual(altered, entries);
    assert.equal(await refusal(await repack(altered)), "bundle_tampered");
    assert.equal(await refusal(await repack(entries.filter((e) => !e.name.startsWith("originals/doc_0003")))), "bundle_tampered");
    const manifest = entries.at(-1)!;
    assert.equal(await refusal(await repack([...entries.slice(0, -1), { name: "ocr/doc_0001x.jsonl", data: Buffer.from("{}\n") }, manifest])), "bundle_tampered");
    // The manifest changed without a new signature.
    const forged = JSON.parse(manifest.data.toString("utf8")) as Manifest;
    forged.counts.documents = 31;
    assert.equal(await refusal(await repack([...entries.slice(0, -1), { name: MANIFEST_ENTRY, data: Buffer.from(JSON.stringify(forged)) }])), "bundle_signature_invalid");
    // Entries after the manifest, paths out of the bundle.
    assert.equal(await refusal(await repack([...entries, { name: "corpus.json2", data: Buffer.from("x") }])), "bundle_invalid");
    assert.equal(await refusal(await repack([entries[0]!, { name: "../../etc/cron.d/x", data: Buffer.from("x") }, ...entries.slice(1)])), "bundle_invalid");
  });

  it("tells a bundle re-signed by another key: it verifies as that key's, and is refused where the original signer is expected", async () => {
    const entries = await entriesOf(await bundle());
    const manifest = JSON.parse(entries.at(-1)!.data.toString("utf8")) as Manifest;
    const { signature: _signature, key_id: _keyId, public_key: _publicKey, ...unsigned } = manifest;
    const signed = { ...unsigned, key_id: other.keyId, public_key: other.publicKey };
    const resigned = await repack([...entries.slice(0, -1), { name: MANIFEST_ENTRY, data: Buffer.from(JSON.stringify({ ...signed, signature: other.sign(signed) })) }]);
    const verified = await readBundle(chunksOf(resigned), { passphrase: PASSPHRASE });
    assert.equal(verified.signer, other.keyId);
    assert.notEqual(other.keyId, signer.keyId);
    assert.equal(await refusal(resigned, { passphrase: PASSPHRASE, expectedSigner: signer.keyId }), "bundle_signer_mismatch");
    // The genuine one passes the same check.
    assert.equal((await readBundle(chunksOf(await bundle()), { passphrase: PASSPHRASE }, { expectedSigner: signer.keyId })).signer, signer.keyId);
  });

  it("refuses to export a corpus still being indexed", async () => {
    const busy = { ...documents[0]!, status: "processing" as const };
    const { stream, done } = await exportBundle({ ...source(), documents: async function* () { yield busy; } }, { passphrase: PASSPHRASE });
    await assert.rejects(collect(stream));
    await assert.rejects(done, /indexing has settled/);
  });
});
