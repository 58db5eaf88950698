import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, it } from "node:test";
import { acceptedExtensions, acceptedTypesSentence, FORMATS, formatOfExtension } from "./formats.js";

describe("the formats catalog", () => {
  it("names each extension once, and finds a format by any of its extensions in any case", () => {
    const all = Object.values(FORMATS).flatMap((f) => f.extensions);
    assert.equal(new Set(all).size, all.length, "no extension belongs to two formats");
    assert.equal(formatOfExtension("PPTX"), "pptx");
    assert.equal(formatOfExtension(".jpg"), "jpeg");
    assert.equal(formatOfExtension("tif"), "tiff");
    assert.equal(formatOfExtension("exe"), null);
  });

  it("tells a refused file every type read", () => {
    const sentence = acceptedTypesSentence();
    for (const info of Object.values(FORMATS)) assert.ok(sentence.includes(info.extensions[0]!.toUpperCase()), `${info.label} is named`);
    assert.match(sentence, /^upload PDF, DOCX, .* or PPT$/);
  });

  it("is what the batch-upload example picks from a folder", () => {
    const example = readFileSync(path.resolve(import.meta.dirname, "../../../examples/batch-upload.mjs"), "utf8");
    const wanted = new RegExp(/const wanted = \/(.+)\/i;/.exec(example)![1]!, "i");
    for (const extension of acceptedExtensions()) assert.ok(wanted.test(`report${extension}`), `${extension} is uploaded by the example`);
    assert.ok(!wanted.test("setup.exe"));
  });
});
