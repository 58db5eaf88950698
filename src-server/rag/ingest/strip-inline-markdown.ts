/**
 * Removes inline Markdown markup so block text reads as prose: links keep their
 * text, images their alt text, emphasis and code spans lose their markers, and
 * backslash escapes are resolved. Every pattern bounds how far it looks, so the
 * cost stays linear on hostile input.
 */

export interface StripOptions {
  /** Table rows: keep `\|` escaped so cells stay apart. */
  table?: boolean;
}

/** Private-use range standing in for escaped ASCII punctuation while patterns run. */
const ESCAPE_BASE = 0xe000;
const ESCAPED = /\\([!-/:-@[-`{-~])/g;
const PROTECTED = /[\uE000-\uE07F]/g;

const RULES: [RegExp, string][] = [
  [/!\[([^\]\n]{0,1000})\]\([^)\n]{0,2000}\)/g, "$1"], // image → alt text
  [/\[([^\][\n]{1,1000})\]\([^)\s]{0,2000}(?:[ \t]+"[^"\n]{0,500}")?\)/g, "$1"], // inline link → text
  [/\[([^\][\n]{1,1000})\]\[[^\]\n]{0,200}\]/g, "$1"], // reference link → text
  [/<((?:https?|mailto):[^>\s]{1,2000})>/g, "$1"], // autolink
  [/`([^`\n]{1,2000})`/g, "$1"], // code span
  [/(\*\*|__)(?=[^\s*_])([^\n]{0,2000}?[^\s\\])\1/g, "$2"], // strong
  [/~~(?=\S)([^~\n]{0,2000}?\S)~~/g, "$1"], // strikethrough
  [/(^|[^\w*])\*(?=[^\s*])([^*\n]{0,1000}?[^\s*])\*(?![\w*])/g, "$1$2"], // emphasis with *
  [/(^|[^\w_])_(?=[^\s_])([^_\n]{0,1000}?[^\s_])_(?![\w_])/g, "$1$2"], // emphasis with _
  [/\\\n/g, "\n"], // hard line break
];

/** Strips inline Markdown from one block's text; line structure is kept. */
export function stripInlineMarkdown(text: string, options: StripOptions = {}): string {
  let result = text.replace(PROTECTED, "").replace(ESCAPED, (whole, char: string) =>
    options.table && char === "|" ? whole : String.fromCharCode(ESCAPE_BASE + char.charCodeAt(0)),
  );
  for (const [pattern, replacement] of RULES) result = result.replace(pattern, replacement);
  return result
    .replace(PROTECTED, (char) => String.fromCharCode(char.charCodeAt(0) - ESCAPE_BASE))
    .split("\n")
    .map((line) => line.trimEnd())
    .join("\n");
}
