import { describe, expect, it } from "vitest";
// A test may read the server's catalogue (components may not): the two lists must not drift apart.
// eslint-disable-next-line import-x/no-restricted-paths
import { FORMATS } from "../../src-server/rag/ingest/formats.js";
import { ACCEPT_ATTRIBUTE, ACCEPTED_FORMATS, extensionsOf, FORMAT_GROUPS, isImageDocument } from "./accepted-formats.js";

describe("accepted formats", () => {
  it("are the server's formats, with the same extensions, media types and needs", () => {
    const server = Object.fromEntries(Object.entries(FORMATS).map(([format, f]) => [format, { extensions: f.extensions, contentType: f.contentType, needs: f.needs }]));
    const renderer = Object.fromEntries(Object.entries(ACCEPTED_FORMATS).map(([format, f]) => [format, { extensions: f.extensions, contentType: f.contentType, needs: f.needs }]));
    expect(renderer).toEqual(server);
  });

  it("offer every extension and media type to the file picker", () => {
    const accept = ACCEPT_ATTRIBUTE.split(",");
    for (const f of Object.values(FORMATS)) {
      for (const e of f.extensions) expect(accept).toContain(`.${e}`);
      expect(accept).toContain(f.contentType);
    }
    expect(new Set(accept).size).toBe(accept.length);
  });

  it("put every format in a group people recognise, each group naming its files", () => {
    expect(FORMAT_GROUPS.map((g) => g.group)).toEqual(["documents", "sheets", "email", "scans"]);
    expect(extensionsOf("documents")).toEqual(["PDF", "DOCX", "DOC", "ODT", "EPUB", "HTML", "MD", "TXT"]);
    expect(extensionsOf("sheets")).toEqual(["XLSX", "XLS", "ODS", "CSV", "TSV", "PPTX", "PPT"]);
    expect(extensionsOf("email")).toEqual(["EML", "MSG", "MBOX"]);
    expect(extensionsOf("scans")).toEqual(["PNG", "JPG", "TIFF"]);
  });

  it("know image documents by their media type", () => {
    expect(isImageDocument("image/png")).toBe(true);
    expect(isImageDocument("image/tiff")).toBe(true);
    expect(isImageDocument("application/pdf")).toBe(false);
    expect(isImageDocument(null)).toBe(false);
  });
});
