/**
 * What keeping the KEK in an HSM costs when a corpus is opened: the data key is unwrapped
 * once per corpus open (then its cipher stays in memory). `BENCH_UNWRAPS` (200) opens
 * through the real keyring with a SoftHSM2 token and with the local key file, taking
 * turns, so both see the same machine load; p50 and p95 per provider and the ratio of
 * medians, and the same for wrapping (corpus creation). Prints Markdown and writes it to
 * bench/results/.
 *
 *   node --import tsx bench/hsm-unwrap.ts
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { DataKeyring } from "../src-server/security/data-keyring.js";
import type { KeyProvider } from "../src-server/security/key-provider.js";
import { LocalKeyFileProvider } from "../src-server/security/local-key-file-provider.js";
import { Pkcs11KeyProvider } from "../src-server/security/pkcs11-key-provider.js";
import { createSoftHsmToken } from "../test/helpers/softhsm.js";
import { median, percentile } from "./lib.js";

const ROOT = path.resolve(import.meta.dirname, "..");
const N = Number(process.env.BENCH_UNWRAPS ?? 200);

const token = createSoftHsmToken();
const dir = mkdtempSync(path.join(os.tmpdir(), "pustaka-bench-kek-"));
const hsm = await Pkcs11KeyProvider.open(token.settings(), { create: true });
const file = new LocalKeyFileProvider(path.join(dir, "kek.bin"));

interface Subject {
  name: string;
  provider: KeyProvider;
  wrapped: Buffer;
  open: number[];
  wrap: number[];
}

async function subject(name: string, provider: KeyProvider): Promise<Subject> {
  const ring = new DataKeyring(provider, () => undefined);
  const { wrappedKey } = await ring.create("corp_bench");
  return { name, provider, wrapped: wrappedKey, open: [], wrap: [] };
}

const subjects = [await subject("PKCS#11 (SoftHSM2)", hsm), await subject("local key file", file)];
const ms = (start: bigint) => Number(process.hrtime.bigint() - start) / 1e6;

// Warm-up, then alternate: each iteration opens the corpus through a fresh keyring per provider.
for (let i = 0; i < N + 10; i++) {
  for (const s of i % 2 === 0 ? subjects : [...subjects].reverse()) {
    const ring = new DataKeyring(s.provider, () => s.wrapped);
    let t = process.hrtime.bigint();
    await ring.cipher("corp_bench");
    if (i >= 10) s.open.push(ms(t));
    t = process.hrtime.bigint();
    await s.provider.wrapKey(Buffer.alloc(32, i));
    if (i >= 10) s.wrap.push(ms(t));
  }
}

const f = (x: number) => x.toFixed(3);
const [h, l] = subjects as [Subject, Subject];
const lines = [
  `## KEK unwrap per corpus open (${N} opens each, alternating; ${os.cpus().length} CPUs)`,
  "",
  "| Provider | open p50 ms | open p95 ms | wrap p50 ms | wrap p95 ms |",
  "|---|---|---|---|---|",
  ...subjects.map((s) => `| ${s.name} | ${f(median(s.open))} | ${f(percentile(s.open, 95))} | ${f(median(s.wrap))} | ${f(percentile(s.wrap, 95))} |`),
  "",
  `HSM / key file, median open: ${(median(h.open) / median(l.open)).toFixed(1)}×; the HSM adds ${f(median(h.open) - median(l.open))} ms per corpus open.`,
];
process.stdout.write(`${lines.join("\n")}\n`);
mkdirSync(path.join(ROOT, "bench", "results"), { recursive: true });
writeFileSync(path.join(ROOT, "bench", "results", `hsm-unwrap-${Date.now()}.md`), `${lines.join("\n")}\n`);

await hsm.close();
rmSync(dir, { recursive: true, force: true });
