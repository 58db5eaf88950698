/**
 * Writing GBNF (llama.cpp's grammar format): literals and character classes escaped, and
 * a rule set that names rules once and reuses a rule for an identical body.
 */

/** `"…"`: a GBNF literal matching `text` exactly. */
export function literal(text: string): string {
  let out = '"';
  for (const ch of text) out += escapeChar(ch, '"');
  return `${out}"`;
}

/** One character inside a literal (`quote` = '"') or a character class (`quote` = ']'). */
export function escapeChar(ch: string, quote: '"' | "]"): string {
  const code = ch.codePointAt(0)!;
  if (ch === "\\") return "\\\\";
  if (ch === quote) return `\\${ch}`;
  if (quote === "]" && (ch === "^" || ch === "-" || ch === "[")) return `\\${ch}`;
  if (ch === "\n") return "\\n";
  if (ch === "\r") return "\\r";
  if (ch === "\t") return "\\t";
  if (code < 0x20 || code === 0x7f) return `\\x${code.toString(16).padStart(2, "0")}`;
  // Outside ASCII only in classes (range ends such as U+10FFFF are not printable).
  if (quote === "]" && code > 0x7f) return code > 0xffff ? `\\U${code.toString(16).padStart(8, "0")}` : `\\u${code.toString(16).padStart(4, "0")}`;
  return ch;
}

/** A character range or single character for a class: `a-z`, `x`, `\x00-\x1f`. */
export function classRange(from: number, to: number): string {
  const a = escapeChar(String.fromCodePoint(from), "]");
  return from === to ? a : `${a}-${escapeChar(String.fromCodePoint(to), "]")}`;
}

/** Rules by name; `add` returns the name under which `body` is defined. */
export class RuleSet {
  private readonly rules = new Map<string, string>();
  private readonly byBody = new Map<string, string>();
  private bytes = 0;

  constructor(private readonly maxBytes: number) {}

  /** Defines `body` under `hint` (made unique); a body already defined keeps its first name. */
  add(hint: string, body: string): string {
    const known = this.byBody.get(body);
    if (known) return known;
    const name = this.reserve(hint);
    this.define(name, body);
    return name;
  }

  /** A fresh name for a rule defined later (recursive references). */
  reserve(hint: string): string {
    const base = hint.replace(/[^A-Za-z0-9-]+/g, "-").replace(/^-+|-+$/g, "").toLowerCase() || "r";
    let name = base;
    for (let i = 1; this.rules.has(name); i++) name = `${base}-${i}`;
    this.rules.set(name, "");
    return name;
  }

  define(name: string, body: string): void {
    this.rules.set(name, body);
    if (!this.byBody.has(body)) this.byBody.set(body, name);
    this.bytes += name.length + body.length + 6;
    if (this.bytes > this.maxBytes) throw new GrammarTooLarge(this.maxBytes);
  }

  has(name: string): boolean {
    return this.rules.has(name);
  }

  /** The grammar text, `root` first. */
  toString(): string {
    const names = [...this.rules.keys()].sort((a, b) => (a === "root" ? -1 : b === "root" ? 1 : 0));
    return names.map((name) => `${name} ::= ${this.rules.get(name)}`).join("\n") + "\n";
  }
}

export class GrammarTooLarge extends Error {
  constructor(readonly maxBytes: number) {
    super(`the grammar for this schema would exceed ${maxBytes} bytes`);
  }
}
