/**
 * Test support for the chunking unit tests (not used by the service): hand-built parsed
 * documents with exact offsets, a deterministic tokenizer and a deterministic embedder.
 */
import assert from "node:assert/strict";
import type { Block, DocumentFormat, ParsedDocument } from "../../src-server/rag/ingest/types.js";
import { assertChunkInvariants } from "../../src-server/rag/chunking/chunk-invariants.js";
import type { ChunkDraft, ChunkerDeps, ChunkOptions } from "../../src-server/rag/chunking/types.js";

/** A block before offsets are known. */
export type BlockSpec = Omit<Block, "start" | "end" | "page"> & { page?: number | null };

/** A heading block spec. */
export const h = (level: number, text: string, page: number | null = null): BlockSpec => ({ kind: "heading", level, text, page });
/** A paragraph block spec. */
export const p = (text: string, page: number | null = null): BlockSpec => ({ kind: "paragraph", text, page });
/** A list block spec (items one per line). */
export const list = (items: string[], page: number | null = null): BlockSpec => ({ kind: "list", text: items.map((i) => `- ${i}`).join("\n"), page });
/** A table block spec (Markdown rows). */
export const table = (rows: string[][], page: number | null = null): BlockSpec => ({ kind: "table", text: rows.map((r) => `| ${r.join(" | ")} |`).join("\n"), page });

/** A parsed document whose text is the blocks' texts joined with "\n\n", offsets exact. */
export function makeDocument(specs: BlockSpec[], format: DocumentFormat = "md"): ParsedDocument {
  const blocks: Block[] = [];
  let offset = 0;
  for (const spec of specs) {
    blocks.push({ ...spec, page: spec.page ?? null, start: offset, end: offset + spec.text.length });
    offset += spec.text.length + 2;
  }
  const pages = blocks.map((b) => b.page).filter((n): n is number => n !== null);
  return {
    format,
    text: specs.map((s) => s.text).join("\n\n"),
    blocks,
    pageCount: format === "pdf" ? Math.max(1, ...pages) : null,
    title: null,
    warnings: [],
  };
}

/** Words (letters/digits runs) plus each punctuation mark; whitespace is free. Exactly additive. */
export function fakeCountTokens(text: string): number {
  return text.match(/[\p{L}\p{N}]+|[^\s\p{L}\p{N}]/gu)?.length ?? 0;
}

const STOP = new Set(
  ("the a an of in on and or is are was were to for with by at from as it its this that these those be has have had will would after before " +
    "di yang dan ini itu untuk pada dengan ke dari oleh akan telah sudah juga adalah ialah serta bagi dalam para lebih tidak masih").split(" "),
);
const DIMENSIONS = 256;

/** Bag-of-words vectors: content words hashed (FNV-1a) into 256 buckets, unit length. */
export function fakeEmbed(texts: string[]): Promise<Float32Array[]> {
  return Promise.resolve(
    texts.map((text) => {
      const v = new Float32Array(DIMENSIONS);
      for (const word of text.toLowerCase().match(/\p{L}{3,}/gu) ?? []) {
        if (STOP.has(word)) continue;
        let hash = 0x811c9dc5;
        for (let i = 0; i < word.length; i++) hash = Math.imul(hash ^ word.charCodeAt(i), 0x01000193) >>> 0;
        v[hash % DIMENSIONS] = v[hash % DIMENSIONS]! + 1;
      }
      const norm = Math.hypot(...v);
      return norm === 0 ? v : v.map((x) => x / norm);
    }),
  );
}

/** Deps over the fake tokenizer and embedder, counting calls and characters tokenized. */
export function fakeDeps(): ChunkerDeps & { embedCalls: number; countCalls: number; countedChars: number } {
  const deps = {
    embedCalls: 0,
    countCalls: 0,
    countedChars: 0,
    countTokens(text: string): number {
      deps.countCalls++;
      deps.countedChars += text.length;
      return fakeCountTokens(text);
    },
    embed(texts: string[]): Promise<Float32Array[]> {
      deps.embedCalls++;
      return fakeEmbed(texts);
    },
  };
  return deps;
}

/** Options with the given strategy and test-sized limits. */
export function options(strategy: ChunkOptions["strategy"], overrides: Partial<ChunkOptions> = {}): ChunkOptions {
  return { strategy, maxTokens: 120, targetTokens: 80, overlapTokens: 16, ...overrides };
}

/** The shared contract plus exact token counts, recounted with the fake tokenizer. */
export function assertValidChunks(doc: ParsedDocument, chunks: ChunkDraft[], opts: ChunkOptions): void {
  assertChunkInvariants(doc, chunks, { maxTokens: opts.maxTokens, allowOverlap: opts.strategy === "fixed" });
  for (const chunk of chunks) assert.equal(chunk.tokenCount, fakeCountTokens(chunk.text), `tokenCount of chunk ${chunk.index}`);
  assert.ok(chunks.length > 0 || !/\S/u.test(doc.text), "a non-blank document has chunks");
}

/** Six English sentences about floods in Kelantan, then six about palm oil prices. */
export const TWO_TOPICS_EN = [
  "Heavy monsoon rain caused severe floods across Kelantan this week.",
  "The floods in Kelantan forced thousands of villagers to leave their homes.",
  "Rivers in Kota Bharu overflowed after days of monsoon rain and floods.",
  "Flood victims were moved to relief centres set up in schools across Kelantan.",
  "Rescue teams used boats to reach villages cut off by the rising flood water.",
  "Officials warned that more monsoon rain could worsen the floods in Kelantan.",
  "Palm oil prices rose sharply on the Bursa Malaysia derivatives exchange.",
  "Crude palm oil futures reached their highest price in three months.",
  "Traders said strong export demand from India lifted palm oil prices.",
  "Palm oil exports from Malaysia increased by eight percent in March.",
  "Analysts expect palm oil prices to stay high while export demand holds.",
  "Higher palm oil prices benefit plantation companies and smallholders.",
];

/** The same two topics in Bahasa Melayu, with abbreviations that must not split sentences. */
export const TWO_TOPICS_MS = [
  "Hujan lebat monsun menyebabkan banjir besar di seluruh Kelantan minggu ini.",
  "Banjir di Kelantan memaksa ribuan penduduk kampung meninggalkan rumah mereka.",
  "Menurut Dr. Ahmad bin Hj. Ali, sungai di Kota Bharu melimpah selepas hujan lebat monsun.",
  "Mangsa banjir dipindahkan ke pusat pemindahan di sekolah seluruh Kelantan.",
  "Bot penyelamat dari No. 5, Jln. Sultan sampai ke kampung yang terputus akibat banjir.",
  "Pegawai memberi amaran hujan lebat monsun boleh memburukkan lagi banjir di Kelantan.",
  "Harga minyak sawit mentah meningkat dengan ketara di Bursa Malaysia hari ini.",
  "Niaga hadapan minyak sawit mentah mencapai harga tertinggi dalam tiga bulan.",
  "Pedagang Sawit Emas Sdn. Bhd. berkata permintaan eksport menaikkan harga minyak sawit.",
  "Eksport minyak sawit Malaysia meningkat lapan peratus pada bulan Mac.",
  "Penganalisis menjangka harga minyak sawit kekal tinggi selagi permintaan eksport kukuh.",
  "Harga minyak sawit yang tinggi menguntungkan syarikat perladangan dan pekebun kecil.",
];

/** An English report with a heading tree, a list and a table (Markdown, no pages). */
export function englishReport(): ParsedDocument {
  return makeDocument([
    h(1, "# Annual Report 2023"),
    p("This report describes the work of the cooperative during the year. It covers operations, finance and the outlook for the coming year."),
    h(2, "## Operations"),
    p(TWO_TOPICS_EN.slice(0, 6).join(" ")),
    p("Mr. Tan, the operations manager, said the new warehouse opened in May. It stores rice, cooking oil and other supplies for members."),
    h(2, "## Finance"),
    h(3, "### Revenue"),
    p(TWO_TOPICS_EN.slice(6).join(" ")),
    list(["Sales of palm oil rose by twelve percent.", "Rubber sales fell slightly.", "Members received a dividend of five percent."]),
    table([["Item", "2022", "2023"], ["Revenue", "1.2m", "1.4m"], ["Costs", "0.9m", "1.0m"]]),
    h(3, "### Costs"),
    p("Costs grew more slowly than revenue. Transport became cheaper after the new road to Kuala Krai was finished."),
  ]);
}

/** A Malay report laid out over three PDF pages. */
export function malayReport(): ParsedDocument {
  return makeDocument(
    [
      h(1, "Laporan Banjir dan Ekonomi Kelantan", 1),
      p("Laporan ini disediakan oleh Jabatan Perancangan Negeri. Ia menerangkan kesan banjir dan keadaan ekonomi negeri pada tahun ini.", 1),
      h(2, "Kesan banjir", 1),
      p(TWO_TOPICS_MS.slice(0, 3).join(" "), 1),
      p(TWO_TOPICS_MS.slice(3, 6).join(" "), 2),
      list(["Jumlah mangsa: 12,000 orang.", "Pusat pemindahan dibuka: 85 buah.", "Jalan ditutup: 40 batang."], 2),
      h(2, "Harga minyak sawit", 3),
      p(TWO_TOPICS_MS.slice(6).join(" "), 3),
      table([["Bulan", "Harga (RM/tan)"], ["Januari", "3,900"], ["Mac", "4,250"]], 3),
    ],
    "pdf",
  );
}
