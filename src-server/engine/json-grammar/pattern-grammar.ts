/**
 * A JSON Schema `pattern` (ECMA-262 regular expression) as a GBNF expression for the
 * inside of a JSON string: the characters the expression matches, each written as JSON
 * writes it (`"` as `\"`, a backslash as `\\`, a newline as `\n`). Literals, classes,
 * `.`, the `\d\w\s` families, groups, alternation and every quantifier are translated;
 * what a grammar cannot express (lookaround, backreferences, word boundaries, anchors
 * inside the pattern) is refused by name. Without `^`/`$` the pattern may match anywhere
 * in the string, so any characters may come before or after it.
 */
import { classRange, literal } from "./gbnf.js";

export class PatternError extends Error {}

type Range = [number, number];
type Node =
  | { kind: "chars"; ranges: Range[] }
  | { kind: "seq"; items: Node[] }
  | { kind: "alt"; options: Node[] }
  | { kind: "repeat"; node: Node; min: number; max: number };

const MAX_CODE = 0x10ffff;
const DIGIT: Range[] = [[0x30, 0x39]];
const WORD: Range[] = [[0x30, 0x39], [0x41, 0x5a], [0x5f, 0x5f], [0x61, 0x7a]];
const SPACE: Range[] = [[0x09, 0x0d], [0x20, 0x20], [0xa0, 0xa0], [0x1680, 0x1680], [0x2000, 0x200a], [0x2028, 0x2029], [0x202f, 0x202f], [0x205f, 0x205f], [0x3000, 0x3000], [0xfeff, 0xfeff]];
const LINE_TERMINATORS: Range[] = [[0x0a, 0x0a], [0x0d, 0x0d], [0x2028, 0x2029]];

function normalise(ranges: Range[]): Range[] {
  const sorted = [...ranges].sort((a, b) => a[0] - b[0]);
  const out: Range[] = [];
  for (const [a, b] of sorted) {
    const last = out.at(-1);
    if (last && a <= last[1] + 1) last[1] = Math.max(last[1], b);
    else out.push([a, b]);
  }
  return out;
}

function complement(ranges: Range[]): Range[] {
  const out: Range[] = [];
  let next = 0;
  for (const [a, b] of normalise(ranges)) {
    if (a > next) out.push([next, a - 1]);
    next = b + 1;
  }
  if (next <= MAX_CODE) out.push([next, MAX_CODE]);
  return out;
}

class Parser {
  private i = 0;
  constructor(private readonly src: string) {}

  parse(): { node: Node; anchoredStart: boolean; anchoredEnd: boolean } {
    const anchoredStart = this.src.startsWith("^");
    if (anchoredStart) this.i = 1;
    const node = this.alternation(true);
    let anchoredEnd = false;
    if (this.peek() === "$") {
      this.i++;
      anchoredEnd = true;
    }
    if (this.i < this.src.length) throw new PatternError(`unexpected '${this.src[this.i]}' at position ${this.i}`);
    return { node, anchoredStart, anchoredEnd };
  }

  private peek(): string | undefined {
    return this.src[this.i];
  }

  private alternation(top: boolean): Node {
    const options = [this.sequence(top)];
    while (this.peek() === "|") {
      this.i++;
      options.push(this.sequence(top));
    }
    return options.length === 1 ? options[0]! : { kind: "alt", options };
  }

  private sequence(top: boolean): Node {
    const items: Node[] = [];
    for (;;) {
      const c = this.peek();
      if (c === undefined || c === "|" || c === ")") break;
      if (c === "$") {
        // Only the pattern's last character may be `$`.
        if (top && this.i === this.src.length - 1) break;
        throw new PatternError("'$' is supported only at the end of the pattern");
      }
      if (c === "^") throw new PatternError("'^' is supported only at the start of the pattern");
      items.push(this.quantified(this.atom()));
    }
    return items.length === 1 ? items[0]! : { kind: "seq", items };
  }

  private quantified(node: Node): Node {
    const c = this.peek();
    let min: number;
    let max: number;
    if (c === "*") [min, max] = [0, Infinity];
    else if (c === "+") [min, max] = [1, Infinity];
    else if (c === "?") [min, max] = [0, 1];
    else if (c === "{") {
      const m = /^\{(\d+)(,(\d*))?\}/.exec(this.src.slice(this.i));
      if (!m) return node; // a literal '{', as in JavaScript
      min = Number(m[1]);
      max = m[2] === undefined ? min : m[3] === "" ? Infinity : Number(m[3]);
      if (max < min) throw new PatternError(`the quantifier ${m[0]} has its numbers out of order`);
      if (min > 1000 || (Number.isFinite(max) && max > 1000)) throw new PatternError(`the quantifier ${m[0]} repeats more than 1000 times`);
      this.i += m[0].length - 1;
    } else return node;
    this.i++;
    if (this.peek() === "?") this.i++; // lazy or greedy: the same language
    if (this.peek() === "*" || this.peek() === "+" || this.peek() === "?") throw new PatternError("nested quantifiers are not supported");
    return { kind: "repeat", node, min, max };
  }

  private atom(): Node {
    const c = this.src[this.i]!;
    this.i++;
    if (c === "(") {
      if (this.src.startsWith("?:", this.i)) this.i += 2;
      else if (/^\?<[A-Za-z_$][\w$]*>/.test(this.src.slice(this.i))) this.i = this.src.indexOf(">", this.i) + 1;
      else if (this.peek() === "?") throw new PatternError("lookahead and lookbehind ('(?=', '(?!', '(?<=', '(?<!') cannot be expressed by a grammar");
      const inner = this.alternation(false);
      if (this.peek() !== ")") throw new PatternError("an unclosed '(' ");
      this.i++;
      return inner;
    }
    if (c === "[") return this.characterClass();
    if (c === ".") return { kind: "chars", ranges: complement(LINE_TERMINATORS) };
    if (c === "\\") return { kind: "chars", ranges: this.escape(false) };
    if (c === ")") throw new PatternError("an unmatched ')'");
    if (c === "*" || c === "+" || c === "?") throw new PatternError(`'${c}' has nothing to repeat`);
    const code = this.src.codePointAt(this.i - 1)!;
    if (code > 0xffff) this.i++;
    return { kind: "chars", ranges: [[code, code]] };
  }

  /** After a backslash: the characters it stands for. */
  private escape(inClass: boolean): Range[] {
    const c = this.src[this.i];
    if (c === undefined) throw new PatternError("the pattern ends with a lone backslash");
    this.i++;
    switch (c) {
      case "d":
        return DIGIT;
      case "D":
        return complement(DIGIT);
      case "w":
        return WORD;
      case "W":
        return complement(WORD);
      case "s":
        return SPACE;
      case "S":
        return complement(SPACE);
      case "n":
        return [[0x0a, 0x0a]];
      case "r":
        return [[0x0d, 0x0d]];
      case "t":
        return [[0x09, 0x09]];
      case "f":
        return [[0x0c, 0x0c]];
      case "v":
        return [[0x0b, 0x0b]];
      case "0":
        return [[0, 0]];
      case "b":
        if (inClass) return [[0x08, 0x08]];
        throw new PatternError("word boundaries ('\\b') cannot be expressed by a grammar");
      case "B":
        throw new PatternError("'\\B' cannot be expressed by a grammar");
      case "x": {
        const m = /^[0-9a-fA-F]{2}/.exec(this.src.slice(this.i));
        if (!m) throw new PatternError("'\\x' needs two hex digits");
        this.i += 2;
        const code = parseInt(m[0], 16);
        return [[code, code]];
      }
      case "u": {
        const m = /^(\{[0-9a-fA-F]{1,6}\}|[0-9a-fA-F]{4})/.exec(this.src.slice(this.i));
        if (!m) throw new PatternError("'\\u' needs four hex digits or {hex}");
        this.i += m[0].length;
        const code = parseInt(m[0].replace(/[{}]/g, ""), 16);
        if (code > MAX_CODE) throw new PatternError(`'\\u${m[0]}' is beyond Unicode`);
        return [[code, code]];
      }
      default:
        if (/[1-9]/.test(c) || c === "k") throw new PatternError("backreferences cannot be expressed by a grammar");
        if (/[A-Za-z]/.test(c)) throw new PatternError(`the escape '\\${c}' is not supported`);
        return [[c.codePointAt(0)!, c.codePointAt(0)!]];
    }
  }

  private characterClass(): Node {
    let negated = false;
    if (this.peek() === "^") {
      negated = true;
      this.i++;
    }
    const ranges: Range[] = [];
    let first = true;
    for (;;) {
      const c = this.peek();
      if (c === undefined) throw new PatternError("an unclosed '['");
      if (c === "]" && !first) break;
      first = false;
      const start = this.classAtom();
      if (this.peek() === "-" && this.src[this.i + 1] !== "]" && this.src[this.i + 1] !== undefined) {
        this.i++;
        const end = this.classAtom();
        if (start.length !== 1 || end.length !== 1 || start[0]![0] !== start[0]![1] || end[0]![0] !== end[0]![1]) throw new PatternError("a class range needs single characters at both ends");
        if (end[0]![0] < start[0]![0]) throw new PatternError("a class range is out of order");
        ranges.push([start[0]![0], end[0]![0]]);
      } else ranges.push(...start);
    }
    this.i++;
    return { kind: "chars", ranges: negated ? complement(ranges) : normalise(ranges) };
  }

  private classAtom(): Range[] {
    const c = this.src[this.i]!;
    this.i++;
    if (c === "\\") return this.escape(true);
    const code = this.src.codePointAt(this.i - 1)!;
    if (code > 0xffff) this.i++;
    return [[code, code]];
  }
}

/** JSON's escapes for the characters a string may not hold raw. */
const JSON_ESCAPED: Record<number, string> = { 0x22: '\\"', 0x5c: "\\\\", 0x0a: "\\n", 0x0d: "\\r", 0x09: "\\t", 0x08: "\\b", 0x0c: "\\f" };

/** A set of characters as JSON string content: raw where JSON allows, escaped where it must be. */
function charsToGbnf(ranges: Range[]): string {
  const raw: Range[] = [];
  const escaped: string[] = [];
  for (const [a, b] of normalise(ranges)) {
    for (let special = a; special <= Math.min(b, 0x1f); special++) {
      const escape = JSON_ESCAPED[special];
      if (escape) escaped.push(literal(escape));
    }
    for (const cut of [0x22, 0x5c]) if (a <= cut && cut <= b) escaped.push(literal(JSON_ESCAPED[cut]!));
    // Raw: everything but control characters, '"' and '\'.
    for (const [x, y] of [[Math.max(a, 0x20), Math.min(b, 0x21)], [Math.max(a, 0x23), Math.min(b, 0x5b)], [Math.max(a, 0x5d), b]] as Range[]) {
      if (x <= y) raw.push([x, y]);
    }
  }
  const alternatives = [...(raw.length ? [`[${raw.map(([x, y]) => classRange(x, y)).join("")}]`] : []), ...escaped];
  if (alternatives.length === 0) throw new PatternError("a character class that matches no character a JSON string can hold");
  return alternatives.length === 1 ? alternatives[0]! : `(${alternatives.join(" | ")})`;
}

function toGbnf(node: Node): string {
  switch (node.kind) {
    case "chars":
      return charsToGbnf(node.ranges);
    case "seq":
      return node.items.length === 0 ? '""' : `(${node.items.map(toGbnf).join(" ")})`;
    case "alt":
      return `(${node.options.map(toGbnf).join(" | ")})`;
    case "repeat": {
      const inner = toGbnf(node.node);
      if (node.min === 0 && node.max === Infinity) return `${inner}*`;
      if (node.min === 1 && node.max === Infinity) return `${inner}+`;
      if (node.min === 0 && node.max === 1) return `${inner}?`;
      return `${inner}{${node.min},${Number.isFinite(node.max) ? node.max : ""}}`;
    }
  }
}

/**
 * The GBNF expression for the content of a JSON string matching `pattern`;
 * `anyChar` is the expression for one arbitrary character of string content.
 */
export function patternToGbnf(pattern: string, anyChar: string): string {
  try {
    new RegExp(pattern);
  } catch (error) {
    throw new PatternError(`it is not a valid regular expression: ${(error as Error).message}`);
  }
  const parsed = new Parser(pattern).parse();
  const body = toGbnf(parsed.node);
  return `${parsed.anchoredStart ? "" : `${anyChar}* `}${body}${parsed.anchoredEnd ? "" : ` ${anyChar}*`}`;
}
