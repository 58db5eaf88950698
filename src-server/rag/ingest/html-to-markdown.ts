/**
 * HTML → Markdown with turndown (its DOM in Node is domino), keeping what a
 * reader would call the content: page chrome (navigation, page header and footer,
 * asides), scripts, styles, forms, embedded frames and graphics are dropped; links
 * keep their text, images their alt text, tables become pipe tables.
 */
import TurndownService from "turndown";

export interface HtmlMarkdown {
  markdown: string;
  /** Text of the first `<title>`, if any. */
  title: string | null;
}

/** The slice of the DOM the rules read (domino implements it; the DOM lib is not loaded here). */
interface DomElement {
  nodeName: string;
  parentNode: DomElement | null;
  getAttribute(name: string): string | null;
  hasAttribute(name: string): boolean;
}

const DROPPED = ["script", "style", "nav", "aside", "form", "noscript", "iframe", "svg", "template", "button", "select", "textarea", "canvas", "object", "embed", "audio", "video", "map", "dialog", "link", "meta"];
const CHROME_ROLES = new Set(["navigation", "banner", "contentinfo", "complementary", "search", "menu", "menubar", "toolbar"]);
/** A `<header>`/`<footer>` inside these belongs to the content (an article's title, a section's notes). */
const CONTENT_CONTAINERS = new Set(["ARTICLE", "MAIN", "SECTION"]);

/** Converts an HTML string to Markdown and reports its `<title>`. Synchronous and CPU-bound. */
export function htmlToMarkdown(html: string): HtmlMarkdown {
  let title: string | null = null;
  const service = new TurndownService({ headingStyle: "atx", codeBlockStyle: "fenced", bulletListMarker: "-", emDelimiter: "*", strongDelimiter: "**" });
  service.remove(DROPPED as TurndownService.TagName[]);
  service.addRule("chrome", { filter: (node) => isChrome(asElement(node)), replacement: () => "" });
  service.addRule("title", {
    filter: "title" as TurndownService.TagName,
    replacement: (content) => {
      title ??= content.replace(/\s+/g, " ").trim() || null;
      return "";
    },
  });
  service.addRule("link", { filter: "a" as TurndownService.TagName, replacement: (content) => content });
  service.addRule("image", { filter: "img" as TurndownService.TagName, replacement: (_content, node) => (asElement(node).getAttribute("alt") ?? "").trim() });
  service.addRule("tableSection", { filter: ["thead", "tbody", "tfoot"] as TurndownService.TagName[], replacement: (content) => content });
  service.addRule("tableCell", {
    filter: ["th", "td"] as TurndownService.TagName[],
    replacement: (content) => ` ${content.replace(/\s*\n\s*/g, " ").replace(/(?<!\\)\|/g, "\\|").trim()} |`,
  });
  service.addRule("tableRow", { filter: "tr" as TurndownService.TagName, replacement: (content) => `\n|${content}\n` });
  service.addRule("table", { filter: "table" as TurndownService.TagName, replacement: (content) => `\n\n${pipeTable(content)}\n\n` });
  return { markdown: service.turndown(html), title };
}

function asElement(node: unknown): DomElement {
  return node as DomElement;
}

function isChrome(element: DomElement): boolean {
  if (element.hasAttribute("hidden") || element.getAttribute("aria-hidden") === "true") return true;
  if (CHROME_ROLES.has((element.getAttribute("role") ?? "").toLowerCase())) return true;
  if (element.nodeName !== "HEADER" && element.nodeName !== "FOOTER") return false;
  for (let parent = element.parentNode; parent; parent = parent.parentNode) {
    if (CONTENT_CONTAINERS.has(parent.nodeName)) return false;
  }
  return true;
}

/**
 * Rows (lines starting with `|`) become a pipe table whose first row is the header;
 * anything else the table held (a caption) goes before it as its own paragraph.
 */
function pipeTable(content: string): string {
  const lines = content.split("\n").map((line) => line.trim()).filter((line) => line !== "");
  const rows = lines.filter((line) => line.startsWith("|"));
  const other = lines.filter((line) => !line.startsWith("|"));
  if (rows.length === 0) return other.join("\n\n");
  const columns = rows.reduce((most, row) => Math.max(most, (row.match(/(?<!\\)\|/g)?.length ?? 2) - 1), 1);
  const delimiter = `|${" --- |".repeat(columns)}`;
  const table = [rows[0]!, delimiter, ...rows.slice(1)].join("\n");
  return other.length > 0 ? `${other.join("\n\n")}\n\n${table}` : table;
}
