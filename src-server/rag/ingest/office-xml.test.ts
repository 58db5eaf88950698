import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { attribute, readXmlString } from "./office-xml.js";
import { ParseError, type ParseErrorCode } from "./types.js";

const failsWith = (code: ParseErrorCode, message?: RegExp) => (e: unknown) => e instanceof ParseError && e.code === code && (!message || message.test(e.message));

describe("readXmlString", () => {
  it("refuses entity declarations and undeclared entities, and bounds nesting", () => {
    const laughs = '<?xml version="1.0"?><!DOCTYPE x [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;">]><x>&b;</x>';
    assert.throws(() => readXmlString(laughs, {}, "test"), failsWith("corrupt_document", /entities/));
    assert.throws(() => readXmlString('<!DOCTYPE x [<!ENTITY s SYSTEM "file:///etc/passwd">]><x>&s;</x>', {}, "test"), failsWith("corrupt_document", /entities/));
    assert.throws(() => readXmlString("<x>&undeclared;</x>", {}, "test"), failsWith("corrupt_document", /malformed/));
    assert.throws(() => readXmlString("<x>".repeat(100_000), {}, "test"), failsWith("document_too_complex"));
    assert.throws(() => readXmlString("<x><y></x>", {}, "test"), failsWith("corrupt_document"));
    // An external DTD without declarations (EPUB 2's NCX has one) is harmless and read.
    const texts: string[] = [];
    readXmlString('<!DOCTYPE ncx PUBLIC "-//NISO//DTD ncx 2005-1//EN" "http://www.daisy.org/z3986/2005/ncx-2005-1.dtd"><ncx>ok &amp; fine</ncx>', { text: (t) => texts.push(t) }, "test");
    assert.equal(texts.join(""), "ok & fine");
  });

  it("hands over local names, and finds attributes by local name", () => {
    const seen: string[] = [];
    readXmlString('<p:sldId xmlns:p="urn:p" xmlns:r="urn:r" id="256" r:id="rId2"/>', { open: (name, attributes) => seen.push(name, attribute(attributes, "id")!, attribute(attributes, "id", true)!) }, "test");
    assert.deepEqual(seen, ["sldId", "256", "rId2"]);
  });
});
