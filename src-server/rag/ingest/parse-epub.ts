/**
 * EPUB e-books (2 and 3). The package is found as readers find it (`META-INF/container.xml`
 * → the OPF package document), the chapters are read in spine order, and each chapter
 * (XHTML) goes through the same HTML → Markdown path as web pages. Every chapter becomes a
 * section under a level-1 heading: its title from the book's table of contents (the EPUB 3
 * navigation document, else the EPUB 2 NCX), else its own first heading, so a passage's
 * heading path names its chapter. The chapter's own headings sit below that one.
 *
 * Books whose chapters are encrypted (DRM, listed in `META-INF/encryption.xml`) are refused as
 * encrypted; fonts obfuscated the standard way are not chapters and do not matter.
 */
import { DocumentBuilder } from "./document-builder.js";
import { htmlToMarkdown } from "./html-to-markdown.js";
import { measureHtmlDepth } from "./measure-html-depth.js";
import { MAX_WHOLE_PART_BYTES, OfficeArchive, resolvePart } from "./office-archive.js";
import { attribute, readXmlString, type XmlHandlers } from "./office-xml.js";
import { MAX_HTML_BYTES, MAX_HTML_DEPTH } from "./parse-html.js";
import { splitMarkdown, type MarkdownBlock } from "./split-markdown.js";
import { ParseError, type ParsedDocument } from "./types.js";

/** Most spine items read. */
const MAX_CHAPTERS = 5000;
/** Characters of text the book may grow to. */
const MAX_TEXT_CHARS = 20_000_000;
/** Elements without content or end tag in HTML; every other `<x/>` must be opened and closed for an HTML parser. */
const VOID = new Set(["area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param", "source", "track", "wbr"]);

interface Package {
  /** Where the OPF is (hrefs in it are relative to it). */
  path: string;
  title: string | null;
  /** Manifest: id → part path, media type, properties. */
  items: Map<string, { part: string; mediaType: string; properties: string }>;
  /** Spine: manifest ids in reading order. */
  spine: string[];
  /** The spine's `toc` attribute: the NCX's manifest id (EPUB 2). */
  ncx: string | null;
}

/**
 * Parses an EPUB file. The title is the package's `dc:title`, else the first chapter's title.
 * @throws ParseError `corrupt_document`, `encrypted_document` (DRM), `document_too_large` (zip
 *   bombs, limits), `document_too_complex` (deeply nested chapters), `empty_document`.
 */
export async function parseEpub(bytes: Uint8Array): Promise<ParsedDocument> {
  const archive = OfficeArchive.open(bytes, "EPUB e-book");
  const pkg = await readPackage(archive);
  const chapters = pkg.spine.flatMap((id) => {
    const item = pkg.items.get(id);
    return item && /html/i.test(item.mediaType) && archive.has(item.part) ? [item.part] : [];
  });
  if (chapters.length > MAX_CHAPTERS) throw new ParseError("document_too_large", `The e-book has ${chapters.length.toLocaleString("en")} chapters; the limit is ${MAX_CHAPTERS.toLocaleString("en")}.`);
  await refuseEncrypted(archive, chapters);
  const titles = await chapterTitles(archive, pkg);
  const builder = new DocumentBuilder();
  let firstTitle: string | null = null;
  for (const [index, part] of chapters.entries()) {
    const html = xhtmlForHtmlParser(await archive.text(part, MAX_HTML_BYTES));
    if (measureHtmlDepth(html, MAX_HTML_DEPTH) > MAX_HTML_DEPTH) {
      throw new ParseError("document_too_complex", `A chapter of the e-book (${part}) nests elements more than ${MAX_HTML_DEPTH} levels deep.`);
    }
    const converted = htmlToMarkdown(html);
    const blocks = splitMarkdown(converted.markdown);
    let title = titles.get(part) ?? null;
    const first = blocks[0];
    // The chapter's own first line repeats its title (or is its only title).
    if (first && (title === null ? first.kind === "heading" : same(first.text, title))) {
      blocks.shift();
      title ??= first.text;
    }
    if (blocks.length === 0) continue; // a cover, a title page, the table of contents itself
    title ??= converted.title && converted.title !== pkg.title ? converted.title : `Section ${index + 1}`;
    firstTitle ??= title;
    builder.add({ kind: "heading", level: 1, text: oneLine(title) });
    addChapter(builder, blocks);
    if (builder.length > MAX_TEXT_CHARS) throw new ParseError("document_too_large", `The e-book holds more than ${MAX_TEXT_CHARS.toLocaleString("en")} characters of text.`);
  }
  return builder.build({ format: "epub", title: pkg.title ?? firstTitle });
}

/** A chapter's blocks below its level-1 heading: its own headings moved down so the highest is level 2. */
function addChapter(builder: DocumentBuilder, blocks: MarkdownBlock[]): void {
  const top = Math.min(7, ...blocks.filter((b) => b.kind === "heading").map((b) => b.level ?? 1));
  const shift = Math.max(0, 2 - top);
  for (const block of blocks) builder.add(block.kind === "heading" ? { ...block, level: Math.min(6, (block.level ?? 1) + shift) } : block);
}

/** The OPF package: found through `META-INF/container.xml` (its first rootfile). */
async function readPackage(archive: OfficeArchive): Promise<Package> {
  if (!archive.has("META-INF/container.xml")) throw new ParseError("corrupt_document", "The file is not a readable EPUB: it has no META-INF/container.xml.");
  let path: string | null = null;
  await archive.readXml("META-INF/container.xml", {
    open(name, attributes) {
      if (name === "rootfile" && path === null && attributes["full-path"]) path = resolvePart("", attributes["full-path"]);
    },
  });
  if (path === null || !archive.has(path)) throw new ParseError("corrupt_document", "The EPUB is damaged: its container names no package document that it holds.");
  const pkg: Package = { path, title: null, items: new Map(), spine: [], ncx: null };
  let inTitle = false;
  let title = "";
  await archive.readXml(path, {
    open(name, attributes) {
      if (name === "title" && pkg.title === null) inTitle = true;
      else if (name === "item" && attributes.id && attributes.href) {
        const part = resolvePart(pkg.path, attributes.href);
        if (part) pkg.items.set(attributes.id, { part, mediaType: attributes["media-type"] ?? "", properties: attributes.properties ?? "" });
      } else if (name === "itemref" && attributes.idref) pkg.spine.push(attributes.idref);
      else if (name === "spine") pkg.ncx = attributes.toc ?? null;
    },
    text: (text) => void (inTitle && (title += text)),
    close(name) {
      if (name === "title" && inTitle) {
        inTitle = false;
        pkg.title = oneLine(title) || null;
      }
    },
  });
  return pkg;
}

/** Refuses a book whose chapters are encrypted (DRM); obfuscated fonts are fine. */
async function refuseEncrypted(archive: OfficeArchive, chapters: string[]): Promise<void> {
  if (!archive.has("META-INF/encryption.xml")) return;
  const encrypted = new Set<string>();
  await archive.readXml("META-INF/encryption.xml", {
    open(name, attributes) {
      const part = name === "CipherReference" && attributes.URI ? resolvePart("", attributes.URI) : null;
      if (part) encrypted.add(part);
    },
  });
  if (chapters.some((part) => encrypted.has(part))) {
    throw new ParseError("encrypted_document", "The e-book is protected (DRM): its chapters are encrypted. Index a copy without DRM.");
  }
}

/** Chapter titles by part, from the EPUB 3 navigation document, else the EPUB 2 NCX; empty when neither is readable. */
async function chapterTitles(archive: OfficeArchive, pkg: Package): Promise<Map<string, string>> {
  const items = [...pkg.items.values()];
  const nav = items.find((item) => item.properties.split(/\s+/).includes("nav"));
  const ncx = (pkg.ncx ? pkg.items.get(pkg.ncx) : undefined) ?? items.find((item) => item.mediaType === "application/x-dtbncx+xml");
  for (const source of [nav ? { part: nav.part, read: navTitles } : null, ncx ? { part: ncx.part, read: ncxTitles } : null]) {
    if (!source || !archive.has(source.part)) continue;
    try {
      const titles = new Map<string, string>();
      readXmlString(await archive.text(source.part, MAX_WHOLE_PART_BYTES), source.read(source.part, titles), `EPUB table of contents (${source.part})`);
      if (titles.size > 0) return titles;
    } catch (error) {
      // A table of contents that is not well-formed XML (HTML entities) only costs the titles.
      if (!(error instanceof ParseError) || error.code !== "corrupt_document") throw error;
    }
  }
  return new Map();
}

/** `<nav epub:type="toc">`: each link's text, by the part it points to (the first link to a part wins). */
function navTitles(from: string, titles: Map<string, string>): XmlHandlers {
  let navDepth = 0;
  let inToc = false;
  let href: string | null = null;
  let label = "";
  return {
    open(name, attributes) {
      if (name === "nav") {
        navDepth++;
        if (navDepth === 1) inToc = (attribute(attributes, "type") ?? "").split(/\s+/).includes("toc");
      } else if (name === "a" && inToc) {
        href = attributes.href ? resolvePart(from, attributes.href) : null;
        label = "";
      }
    },
    text: (text) => void (href !== null && (label += text)),
    close(name) {
      if (name === "nav" && --navDepth === 0) inToc = false;
      else if (name === "a" && href !== null) {
        if (oneLine(label) && !titles.has(href)) titles.set(href, oneLine(label));
        href = null;
      }
    },
  };
}

/** NCX `navPoint`s: each label, by the part its content points to (the first to a part wins). */
function ncxTitles(from: string, titles: Map<string, string>): XmlHandlers {
  const labels: string[] = [];
  let inLabel = false;
  return {
    open(name, attributes) {
      if (name === "navPoint") labels.push("");
      else if (name === "navLabel") inLabel = true;
      else if (name === "content" && attributes.src && labels.length > 0) {
        const part = resolvePart(from, attributes.src);
        const label = oneLine(labels.at(-1)!);
        if (part && label && !titles.has(part)) titles.set(part, label);
      }
    },
    text(text) {
      if (inLabel && labels.length > 0) labels[labels.length - 1] += text;
    },
    close(name) {
      if (name === "navLabel") inLabel = false;
      else if (name === "navPoint") labels.pop();
    },
  };
}

/**
 * XHTML made safe for an HTML parser: `<title/>` or `<div/>` self-closed, as XML allows, would
 * open an element that swallows the rest of the chapter.
 */
function xhtmlForHtmlParser(xhtml: string): string {
  return xhtml.replace(/<([a-zA-Z][\w:.-]*)(\s[^<>]*?)?\/>/g, (tag, name: string, attributes: string | undefined) => (VOID.has(name.toLowerCase()) ? tag : `<${name}${attributes ?? ""}></${name}>`));
}

function same(a: string, b: string): boolean {
  return oneLine(a).toLowerCase() === oneLine(b).toLowerCase();
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, " ").trim();
}
