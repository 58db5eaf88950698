/**
 * Splits Markdown into blocks: ATX and setext headings (with levels), paragraphs,
 * lists, pipe tables, fenced and indented code. Line-based and linear in the
 * input; inline markup is cleaned by `stripInlineMarkdown`.
 */
import { stripInlineMarkdown } from "./strip-inline-markdown.js";
import type { Block } from "./types.js";

export interface MarkdownBlock {
  kind: Block["kind"];
  text: string;
  level?: number;
}

const ATX = /^ {0,3}(#{1,6})(?=[ \t]|$)/;
const FENCE = /^( {0,3})(`{3,}|~{3,})/;
const THEMATIC_BREAK = /^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$/;
const LIST_ITEM = /^ {0,3}(?:[-+*]|\d{1,9}[.)])(?:[ \t]+|$)/;
/** Only these list starts may interrupt a paragraph (CommonMark). */
const INTERRUPTING_LIST_ITEM = /^ {0,3}(?:[-+*]|1[.)])[ \t]+\S/;
const INDENTED_CODE = /^(?: {4}|\t)/;
const BLOCKQUOTE = /^ {0,3}>/;
const BLANK = /^[ \t]*$/;

/** Splits a Markdown document (any line endings) into blocks in document order. */
export function splitMarkdown(markdown: string): MarkdownBlock[] {
  const lines = markdown.replace(/\r\n?/g, "\n").split("\n");
  const blocks: MarkdownBlock[] = [];
  let i = skipFrontMatter(lines);
  const push = (kind: Block["kind"], text: string, level?: number): void => {
    const cleaned = kind === "code" ? text : stripInlineMarkdown(text, { table: kind === "table" });
    if (cleaned.trim() !== "") blocks.push(level === undefined ? { kind, text: cleaned } : { kind, text: cleaned, level });
  };
  while (i < lines.length) {
    const line = lines[i]!;
    if (BLANK.test(line) || THEMATIC_BREAK.test(line)) {
      i++;
      continue;
    }
    const fence = FENCE.exec(line);
    if (fence) {
      const [, indent = "", marker = "```"] = fence;
      const body: string[] = [];
      for (i++; i < lines.length; i++) {
        if (isClosingFence(lines[i]!, marker)) break;
        body.push(lines[i]!.startsWith(indent) ? lines[i]!.slice(indent.length) : lines[i]!.trimStart());
      }
      i++;
      push("code", body.join("\n"));
      continue;
    }
    const atx = ATX.exec(line);
    if (atx) {
      push("heading", atxText(line.slice(atx[0].length)), atx[1]!.length);
      i++;
      continue;
    }
    if (line.includes("|") && i + 1 < lines.length && isTableDelimiter(lines[i + 1]!)) {
      const rows = [line, lines[i + 1]!];
      for (i += 2; i < lines.length && !BLANK.test(lines[i]!) && lines[i]!.includes("|"); i++) rows.push(lines[i]!);
      push("table", rows.map((row) => row.trim()).join("\n"));
      continue;
    }
    if (LIST_ITEM.test(line)) {
      const items: string[] = [];
      for (; i < lines.length; i++) {
        const current = lines[i]!;
        if (BLANK.test(current)) {
          let next = i + 1;
          while (next < lines.length && BLANK.test(lines[next]!)) next++;
          const following = lines[next];
          if (following === undefined || !(LIST_ITEM.test(following) || /^(?: {2,}|\t)/.test(following))) break;
          if (LIST_ITEM.test(following) && /^ {0,1}\S/.test(following) && isOrdered(following) !== isOrdered(items[0] ?? "")) break;
          i = next - 1;
          continue;
        }
        if (items.length > 0 && (ATX.test(current) || FENCE.test(current) || THEMATIC_BREAK.test(current))) break;
        items.push(current.replace(/^([ \t]*)([-+*]|\d{1,9}[.)])[ \t]+/, "$1$2 ").trimEnd());
      }
      push("list", items.join("\n"));
      continue;
    }
    if (INDENTED_CODE.test(line)) {
      const body: string[] = [];
      for (; i < lines.length && (INDENTED_CODE.test(lines[i]!) || BLANK.test(lines[i]!)); i++) body.push(lines[i]!.replace(INDENTED_CODE, ""));
      push("code", body.join("\n"));
      continue;
    }
    if (BLOCKQUOTE.test(line)) {
      const quoted: string[] = [];
      for (; i < lines.length && BLOCKQUOTE.test(lines[i]!); i++) quoted.push(lines[i]!.replace(/^(?:[ \t]{0,3}> ?)+/, ""));
      blocks.push(...splitMarkdown(quoted.join("\n")));
      continue;
    }
    // Paragraph, or a setext heading when an underline follows it.
    const paragraph = [line.trim()];
    for (i++; i < lines.length; i++) {
      const current = lines[i]!;
      const setext = /^ {0,3}(=+|-+)[ \t]*$/.exec(current);
      if (setext) {
        push("heading", paragraph.join(" "), setext[1]!.startsWith("=") ? 1 : 2);
        paragraph.length = 0;
        i++;
        break;
      }
      if (BLANK.test(current) || ATX.test(current) || FENCE.test(current) || THEMATIC_BREAK.test(current) || BLOCKQUOTE.test(current) || INTERRUPTING_LIST_ITEM.test(current)) break;
      paragraph.push(current.trim());
    }
    if (paragraph.length > 0) push("paragraph", paragraph.join("\n"));
  }
  return blocks;
}

/** A fence of the same character, at least as long as the opening one, with nothing after it. */
function isClosingFence(line: string, marker: string): boolean {
  const close = FENCE.exec(line);
  const fence = close?.[2];
  return close !== null && fence !== undefined && fence[0] === marker[0] && fence.length >= marker.length && BLANK.test(line.slice(close[0].length));
}

/** An ordered (`1.`) rather than a bullet (`-`) list item: a change of kind starts another list. */
function isOrdered(item: string): boolean {
  return /^\s*\d/.test(item);
}

/** Heading text after the `#`s, without an optional closing sequence (`## Title ##`). */
function atxText(rest: string): string {
  const text = rest.trim();
  let end = text.length;
  while (end > 0 && text[end - 1] === "#") end--;
  if (end === 0) return "";
  return end === text.length || text[end - 1] === " " || text[end - 1] === "\t" ? text.slice(0, end).trimEnd() : text;
}

/** A pipe table's delimiter row: `| --- | :-: |` (cells of dashes with optional colons). */
function isTableDelimiter(line: string): boolean {
  const row = line.trim().replace(/^\|/, "").replace(/\|$/, "");
  return row.includes("-") && row.split("|").every((cell) => /^:?-+:?$/.test(cell.trim()));
}

/** YAML front matter (`---` … `---` at the very top) is metadata, not text. */
function skipFrontMatter(lines: string[]): number {
  if (lines[0]?.trimEnd() !== "---") return 0;
  const end = lines.findIndex((l, i) => i > 0 && i < 200 && /^(?:---|\.\.\.)\s*$/.test(l));
  return end > 0 ? end + 1 : 0;
}
