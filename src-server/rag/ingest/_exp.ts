import { buildZipBomb } from "../../../test/fixtures/documents/build-zip-bomb.js";
import { buildDocx } from "../../../test/fixtures/documents/build-docx.js";
import { inflateRawSync } from "node:zlib";
import { readZipDirectory, entryDataOffset } from "./read-zip-directory.js";
import { parseDocx } from "./parse-docx.js";
import { detectFormat } from "./detect-format.js";
let t = Date.now();
const small = buildZipBomb({ inflatedBytes: 3 * 1024 * 1024, declare: "honest" });
const e = readZipDirectory(small)!; const d = e[1]!; const off = entryDataOffset(small, d)!;
console.log(e, inflateRawSync(small.subarray(off, off + d.compressedSize)).length);
const big = buildZipBomb({ inflatedBytes: 1100 * 1024 * 1024, declare: "honest" });
console.log("bomb bytes", big.length, Date.now() - t, "ms", detectFormat(big, "x.docx"));
for (const declare of ["honest", "lying"] as const) {
  t = Date.now();
  try { await parseDocx(buildZipBomb({ inflatedBytes: 1100 * 1024 * 1024, declare })); } catch (err) { console.log(declare, (err as Error).name, (err as any).code, (err as Error).message, Date.now() - t, "ms"); }
}
const docx = await buildDocx([{ heading: 1, text: "Laporan Tahunan" }, { paragraph: "Intro with **bold** text & more." }, { heading: 2, text: "Items" }, { list: "bullet", items: ["alpha", "beta"] }, { list: "number", items: ["one", "two"] }, { table: [["Region", "Revenue"], ["North", "1,200"]] }], { title: "Annual <Report>" });
console.log("docx bytes", docx.length);
const doc = await parseDocx(docx);
console.log(doc.title, doc.warnings); console.log(doc.text); console.log(doc.blocks.map(b => [b.kind, b.level]));
