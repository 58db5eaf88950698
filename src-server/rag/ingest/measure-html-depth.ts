/**
 * Estimates how deeply an HTML document nests elements with a single linear scan
 * of its tags, before any DOM is built: a page of 100 000 nested `<div>`s would
 * otherwise make the tree builder and the recursive Markdown converter run out of
 * stack or time.
 */

/** Elements with no content and no end tag. */
const VOID = new Set(["area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param", "source", "track", "wbr", "keygen", "frame"]);
/** Elements whose content is raw text: tags inside them are not tags. */
const RAW_TEXT = new Set(["script", "style", "textarea", "title", "xmp", "iframe", "noembed", "noframes", "noscript", "plaintext"]);
/** Elements whose end tag is optional: opening another one closes the open one (within its container). */
const OPTIONAL_END = new Set(["p", "li", "dt", "dd", "tr", "td", "th", "option", "optgroup", "thead", "tbody", "tfoot", "colgroup", "caption", "rb", "rt", "rp"]);
/** Containers an implied end tag does not reach past. */
const SCOPE = new Set(["table", "ul", "ol", "dl", "select", "div", "body", "html", "section", "article", "td", "th", "li", "blockquote"]);
const DOCUMENT = new Set(["html", "head", "body"]);

/**
 * The deepest element nesting found, scanning at most until it exceeds `limit`
 * (then `limit + 1` is returned). Comments, doctypes and raw-text content are skipped;
 * unmatched end tags are ignored, as browsers do.
 */
export function measureHtmlDepth(html: string, limit: number): number {
  const lower = html.toLowerCase(); // searched for raw-text end tags, lower-cased once to stay linear
  const stack: string[] = [];
  let max = 0;
  let at = html.indexOf("<");
  while (at !== -1 && at < html.length) {
    if (html.startsWith("<!--", at)) {
      at = next(html, html.indexOf("-->", at + 4), 3);
      continue;
    }
    const tag = /^<(\/?)([a-zA-Z][a-zA-Z0-9:-]*)/.exec(html.slice(at, at + 64));
    const close = html.indexOf(">", at + 1);
    if (!tag || close === -1) {
      at = next(html, close === -1 ? -1 : at + 1, 0);
      continue;
    }
    const name = tag[2]!.toLowerCase();
    const selfClosing = html[close - 1] === "/";
    if (tag[1]) {
      const open = stack.lastIndexOf(name);
      if (open !== -1) stack.length = open;
    } else if (!VOID.has(name) && !selfClosing && !DOCUMENT.has(name)) {
      if (OPTIONAL_END.has(name)) closeImplied(stack, name);
      stack.push(name);
      max = Math.max(max, stack.length);
      if (max > limit) return limit + 1;
      if (RAW_TEXT.has(name)) {
        stack.pop();
        const end = lower.indexOf(`</${name}`, close + 1);
        at = next(html, end, 0);
        continue;
      }
    }
    at = html.indexOf("<", close + 1);
  }
  return max;
}

const CELLS = ["td", "th"];
const DEFINITIONS = ["dt", "dd"];

/** `<li>` after an open `<li>` in the same list closes it, `<tr>` closes the open row and its cell, and so on. */
function closeImplied(stack: string[], name: string): void {
  const closes = CELLS.includes(name) ? CELLS : DEFINITIONS.includes(name) ? DEFINITIONS : [name];
  for (let i = stack.length - 1; i >= 0; i--) {
    const open = stack[i]!;
    if (closes.includes(open)) {
      stack.length = i;
      return;
    }
    if (SCOPE.has(open) && !(name === "tr" && CELLS.includes(open))) return;
  }
}

/** The next `<` at or after `from + skip`, or -1 when `from` is -1 (nothing left to scan). */
function next(html: string, from: number, skip: number): number {
  return from === -1 ? -1 : html.indexOf("<", from + skip);
}
