/**
 * The documentation as a reader meets it: the README stays a front door (300 lines at
 * most); every relative link in README.md and docs/*.md reaches a file that exists, and every
 * `#anchor` a heading (or an element id) of its page; every image it shows exists; the
 * configuration reference in docs/operations.md names exactly what the server's
 * configuration accepts, with each default as the server has it.
 */
import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { describe, it } from "node:test";
import { z } from "zod";
import { ConfigSchema } from "../../src-server/config.js";
import { REPO_ROOT } from "../helpers/models.js";

const README = path.join(REPO_ROOT, "README.md");
const DOCS = path.join(REPO_ROOT, "docs");
const pages = [README, ...readdirSync(DOCS).filter((f) => f.endsWith(".md")).map((f) => path.join(DOCS, f))];
const rel = (file: string) => path.relative(REPO_ROOT, file);

/** Markdown with its fenced code blocks blanked (a heading or link inside one is code), line numbers kept. */
function withoutFences(markdown: string): string {
  return markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, (block) => block.replace(/[^\n]/g, " "));
}

/** …and its code spans blanked too: a link written as code is not a link. */
function withoutCode(markdown: string): string {
  return withoutFences(markdown).replace(/(`+)(?!`)[\s\S]*?[^`]\1(?!`)/g, (span) => span.replace(/[^\n]/g, " "));
}

/** GitHub's anchor for a heading: lower case, punctuation dropped (word characters, spaces and hyphens kept), spaces to hyphens. */
function headingSlug(heading: string): string {
  const text = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, "$1")
    .replace(/<[^>]+>/g, "")
    .replace(/`/g, "")
    .trim()
    .toLowerCase();
  return text.replace(/[^\p{L}\p{M}\p{N}\p{Pc}\- ]/gu, "").replace(/ /g, "-");
}

/** Every anchor a page offers: its headings' (numbered -1, -2 … when repeated, as GitHub does) and its elements' ids. */
function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const [, heading] of withoutFences(markdown).matchAll(/^#{1,6}[ \t]+(.+?)[ \t#]*$/gm)) {
    const slug = headingSlug(heading!);
    const n = seen.get(slug) ?? 0;
    anchors.add(n === 0 ? slug : `${slug}-${n}`);
    seen.set(slug, n + 1);
  }
  for (const [, id] of markdown.matchAll(/\s(?:id|name)="([^"]+)"/g)) anchors.add(id!);
  return anchors;
}

/** The targets a page links to or shows: Markdown links and images, and HTML href, src and srcset; with their line numbers. */
function linksOf(markdown: string): { target: string; line: number }[] {
  const text = withoutCode(markdown);
  const lineAt = (index: number) => text.slice(0, index).split("\n").length;
  const links: { target: string; line: number }[] = [];
  for (const m of text.matchAll(/!?\[(?:[^\]\\]|\\.)*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) links.push({ target: m[1]!, line: lineAt(m.index) });
  for (const m of text.matchAll(/\s(?:href|src)="([^"]+)"/g)) links.push({ target: m[1]!, line: lineAt(m.index) });
  for (const m of text.matchAll(/\ssrcset="([^"]+)"/g)) for (const candidate of m[1]!.split(",")) links.push({ target: candidate.trim().split(/\s+/)[0]!, line: lineAt(m.index) });
  return links;
}

/** The configuration's names, dotted, with their defaults (records and lists are leaves; functions set by the loader are left out). */
function configNames(): Map<string, { hasDefault: boolean; value: unknown }> {
  const schema = z.toJSONSchema(ConfigSchema, { io: "input", unrepresentable: "any" }) as Record<string, any>;
  const names = new Map<string, { hasDefault: boolean; value: unknown }>();
  const walk = (node: Record<string, any>, prefix: string) => {
    for (const [key, child] of Object.entries<Record<string, any>>(node.properties ?? {})) {
      const name = prefix ? `${prefix}.${key}` : key;
      if (child.type === "object" && child.properties && Object.keys(child.properties).length > 0) walk(child, name);
      else if (Object.keys(child).length > 0) names.set(name, { hasDefault: "default" in child, value: child.default });
    }
  };
  walk(schema, "");
  return names;
}

describe("the documentation", () => {
  it("keeps the README a front door: 300 lines at most, with the workbench's screenshot and the two commands", () => {
    const readme = readFileSync(README, "utf8");
    const lines = readme.replace(/\n$/, "").split("\n").length;
    assert.ok(lines <= 300, `README.md has ${lines} lines`);
    assert.match(readme, /!\[[^\]]*\]\(docs\/images\/[^)]+\.png\)|<img src="docs\/images\/[^"]+\.png"/, "a screenshot of the workbench");
    assert.match(readme, /```sh\nnpm install && npm start\n```/);
    assert.match(readme, /```sh\nnpm test\n```/);
    assert.doesNotMatch(readme, /on the way/i, "nothing promised as coming that is there");
  });

  it("reads links, anchors and images the way GitHub does", () => {
    assert.equal(headingSlug("Keys in an HSM (PKCS#11)"), "keys-in-an-hsm-pkcs11");
    assert.equal(headingSlug("The llama.cpp build"), "the-llamacpp-build");
    assert.equal(headingSlug("Not in the corpus — the relevance gate"), "not-in-the-corpus--the-relevance-gate");
    assert.equal(headingSlug("Attribution (`npm run eval:attribution`)"), "attribution-npm-run-evalattribution");
    assert.equal(headingSlug("Use your team's GPU server"), "use-your-teams-gpu-server");
    assert.deepEqual([...anchorsOf("# A\n\n## B `c`\n\n```\n# not a heading\n```\n\n## B `c`\n<a id=\"x\"></a>")], ["a", "b-c", "b-c-1", "x"]);
    assert.deepEqual(
      linksOf('[a](b.md#c) `[no](code.md)` ![i](images/x.png "t")\n<img src="y.png"> <source srcset="z.png 1x, w.png 2x">\n```\n[no](block.md)\n```').map((l) => l.target),
      ["b.md#c", "images/x.png", "y.png", "z.png", "w.png"],
    );
  });

  it("links only to files that exist and to anchors that exist, in README.md and docs/*.md", () => {
    const anchors = new Map<string, Set<string>>();
    const anchorsIn = (file: string) => {
      if (!anchors.has(file)) anchors.set(file, anchorsOf(readFileSync(file, "utf8")));
      return anchors.get(file)!;
    };
    const broken: string[] = [];
    let checked = 0;
    for (const page of pages) {
      for (const { target, line } of linksOf(readFileSync(page, "utf8"))) {
        if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith("//")) continue; // http(s), mailto: not ours to check here
        if (target.startsWith("/")) {
          broken.push(`${rel(page)}:${line}: ${target} is a server path, not a link a reader of the files can follow`);
          continue;
        }
        checked++;
        const [file, anchor] = target.split("#") as [string, string | undefined];
        const resolved = file ? path.resolve(path.dirname(page), decodeURIComponent(file.split("?")[0]!)) : page;
        if (!resolved.startsWith(REPO_ROOT) || !existsSync(resolved)) {
          broken.push(`${rel(page)}:${line}: ${target} (no ${rel(resolved)})`);
          continue;
        }
        if (anchor === undefined) continue;
        if (!resolved.endsWith(".md") || statSync(resolved).isDirectory()) {
          broken.push(`${rel(page)}:${line}: ${target} has an anchor into a file that is not Markdown`);
          continue;
        }
        if (!anchorsIn(resolved).has(anchor)) broken.push(`${rel(page)}:${line}: ${target} (no heading #${anchor} in ${rel(resolved)})`);
      }
    }
    assert.deepEqual(broken, []);
    assert.ok(checked > 150, `only ${checked} links checked`);
  });

  it("shows only images the end-to-end tests write, and each exists", () => {
    const images = pages.flatMap((page) => linksOf(readFileSync(page, "utf8")).filter((l) => /\.png$/.test(l.target)).map((l) => path.resolve(path.dirname(page), l.target)));
    assert.ok(images.length >= 10, `${images.length} images`);
    for (const image of images) {
      assert.equal(path.dirname(image), path.join(DOCS, "images"), `${rel(image)} is outside docs/images`);
      assert.ok(existsSync(image), `${rel(image)} is missing: run the end-to-end tests (docs/development.md#screenshots)`);
      // A real PNG, at the size the tests take them.
      const head = readFileSync(image).subarray(0, 24);
      assert.equal(head.subarray(1, 4).toString("latin1"), "PNG", rel(image));
      assert.deepEqual([head.readUInt32BE(16), head.readUInt32BE(20)], [1280, 800], `${rel(image)} is 1280×800`);
    }
  });

  it("documents every configuration name in docs/operations.md, with the server's defaults", () => {
    const operations = readFileSync(path.join(DOCS, "operations.md"), "utf8");
    const section = /^## Configuration reference\n([\s\S]*?)(?=^## )/m.exec(operations)?.[1];
    assert.ok(section, "docs/operations.md has a '## Configuration reference' section");
    const documented = new Map<string, string>();
    for (const row of section.split("\n").filter((l) => /^\| `/.test(l))) {
      const cells = row.split(/(?<!\\)\|/).map((c) => c.trim().replace(/\\\|/g, "|"));
      const [, names = "", fallback = ""] = cells;
      for (const [, name] of names.matchAll(/`([^`]+)`/g)) {
        assert.ok(!documented.has(name!), `${name} is documented twice`);
        documented.set(name!, fallback);
      }
    }
    const names = configNames();
    assert.ok(names.size >= 80, `${names.size} configuration names`);
    assert.deepEqual([...documented.keys()].filter((n) => !names.has(n)), [], "documented but not a configuration name");
    assert.deepEqual([...names.keys()].filter((n) => !documented.has(n)), [], "configuration names missing from the reference");
    for (const [name, { hasDefault, value }] of names) {
      if (!hasDefault) continue;
      const cell = documented.get(name)!;
      const written = /^`([^`]+)`$/.exec(cell)?.[1];
      assert.ok(written !== undefined, `${name}: the default ${JSON.stringify(value)} is written as code, not '${cell}'`);
      assert.deepEqual(JSON.parse(written), value, `${name}'s default`);
    }
  });
});
