/**
 * A remark plugin that turns `[n]` markers in an answer's text into citation nodes
 * (rendered as `<sup data-cite="n">`, which the Markdown component draws as a button),
 * but only for indexes the answer's citations know. Code spans and code blocks are
 * left alone (they are not text nodes).
 */

interface MdNode {
  type: string;
  value?: string;
  children?: MdNode[];
  data?: Record<string, unknown>;
}

const MARKER = /\[(\d{1,3}(?:\s*,\s*\d{1,3})*)\]/g;

/** Splits text into plain pieces and citation indexes (`[1]`, `[1, 2]`); unknown indexes stay text. */
export function splitCitations(text: string, known: ReadonlySet<number>): (string | number)[] {
  const parts: (string | number)[] = [];
  let last = 0;
  for (const match of text.matchAll(MARKER)) {
    const indexes = match[1]!.split(",").map((n) => Number(n.trim()));
    if (!indexes.every((n) => known.has(n))) continue;
    if (match.index > last) parts.push(text.slice(last, match.index));
    parts.push(...indexes);
    last = match.index + match[0].length;
  }
  if (last < text.length) parts.push(text.slice(last));
  return parts;
}

function citationNode(index: number): MdNode {
  return { type: "citationRef", data: { hName: "sup", hProperties: { dataCite: String(index) }, hChildren: [{ type: "text", value: `[${index}]` }] } };
}

function transform(node: MdNode, known: ReadonlySet<number>): void {
  if (!node.children) return;
  const next: MdNode[] = [];
  for (const child of node.children) {
    if (child.type === "text" && typeof child.value === "string" && child.value.includes("[")) {
      for (const part of splitCitations(child.value, known)) next.push(typeof part === "number" ? citationNode(part) : { type: "text", value: part });
    } else {
      if (child.type !== "link" && child.type !== "linkReference") transform(child, known);
      next.push(child);
    }
  }
  node.children = next;
}

/** `remarkPlugins={[[remarkCitations, { indexes: [1, 2] }]]}` */
export function remarkCitations(options: { indexes: readonly number[] }) {
  const known = new Set(options.indexes);
  return (tree: MdNode) => {
    if (known.size > 0) transform(tree, known);
  };
}
