/**
 * A 1 GB corpus bundle exported and imported (issue 35), each by a server in a process of its
 * own: both stream, so neither process grows with the bundle. The corpus (1 GB of originals in
 * 1,000 documents, 20,000 passages) is written straight into the stores as indexing seals it
 * (test/helpers/seeded-corpus.ts): indexing that much would take hours here. The peak memory
 * each way is reported (the test's diagnostics); `npm run bench:bundles` measures the speed.
 */
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, describe, it } from "node:test";
import { call, exportTo, importFrom, processMemory, seedCorpus, serveProcess, type ServerProcess } from "../helpers/seeded-corpus.js";

const GB = 1024 * 1024 * 1024;
/** What a process may grow by while a bundle streams through it: scrypt alone takes 256 MB (2^18 × 1 KiB). */
const MAX_GROWTH_MB = 640;

describe("a 1 GB corpus bundle", () => {
  const root = mkdtempSync(path.join(os.tmpdir(), "pustaka-bundle-memory-"));
  const servers: ServerProcess[] = [];
  after(async () => {
    for (const s of servers) await s.spawned.stop();
    rmSync(root, { recursive: true, force: true });
  });

  it("is exported and imported with each server's memory bounded, not growing with the bundle", async (t) => {
    const [sourceDir, targetDir, file] = [path.join(root, "source"), path.join(root, "target"), path.join(root, "corpus.pustaka")];
    mkdirSync(sourceDir);
    mkdirSync(targetDir);
    let source = await serveProcess(sourceDir);
    const corpusId = (await call(source, "POST", "/v1/rag/corpora", { name: "Satu gigabait", embedding_model: "embed" })).id;
    await source.spawned.stop();
    await seedCorpus(sourceDir, corpusId, { chunks: 20_000, documents: 1_000, originalBytes: GB });
    source = await serveProcess(sourceDir);
    servers.push(source);

    const exportBefore = processMemory(source.pid);
    const exported = await exportTo(source, corpusId, file);
    const exportPeak = processMemory(source.pid).peak;
    assert.ok(exported.bytes > GB, `the bundle holds the gigabyte (${exported.bytes} bytes)`);

    const target = await serveProcess(targetDir);
    servers.push(target);
    const importBefore = processMemory(target.pid);
    const imported = await importFrom(target, file);
    const importPeak = processMemory(target.pid).peak;
    assert.deepEqual([imported.corpus.chunk_count, imported.corpus.document_counts.total, imported.corpus.status], [20_000, 1_000, "ready"]);

    const mb = exported.bytes / 1024 / 1024;
    t.diagnostic(`bundle ${mb.toFixed(0)} MB; export ${exported.seconds.toFixed(1)} s (${(mb / exported.seconds).toFixed(1)} MB/s), server RSS ${exportBefore.rss.toFixed(0)} MB before, peak ${exportPeak.toFixed(0)} MB`);
    t.diagnostic(`import: verify ${imported.stageSeconds.toFixed(1)} s + write ${imported.commitSeconds.toFixed(1)} s (${(mb / (imported.stageSeconds + imported.commitSeconds)).toFixed(1)} MB/s), server RSS ${importBefore.rss.toFixed(0)} MB before, peak ${importPeak.toFixed(0)} MB`);
    assert.ok(exportPeak - exportBefore.rss < MAX_GROWTH_MB, `export grew the server by ${(exportPeak - exportBefore.rss).toFixed(0)} MB`);
    assert.ok(importPeak - importBefore.rss < MAX_GROWTH_MB, `import grew the server by ${(importPeak - importBefore.rss).toFixed(0)} MB`);
  });
});
