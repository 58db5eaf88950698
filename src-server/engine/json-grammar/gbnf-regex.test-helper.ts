/**
 * Tests only: a GBNF expression made of literals, character classes, groups, alternation
 * and repetition (a regular language, as numeric ranges and patterns compile to) turned
 * into a JavaScript RegExp, so the grammar's language can be checked against the
 * intended one on many inputs.
 */
export function gbnfToRegExp(expression: string): RegExp {
  let out = "";
  let i = 0;
  const hex = (n: number) => {
    const code = parseInt(expression.slice(i, i + n), 16);
    i += n;
    return `\\u{${code.toString(16)}}`;
  };
  const escaped = (inClass: boolean): string => {
    const c = expression[i++]!;
    if (c === "x") return hex(2);
    if (c === "u") return hex(4);
    if (c === "U") return hex(8);
    if (c === "n") return "\\n";
    if (c === "r") return "\\r";
    if (c === "t") return "\\t";
    return inClass ? `\\${c}` : c.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
  };
  while (i < expression.length) {
    const c = expression[i]!;
    if (c === " ") {
      i++;
    } else if (c === '"') {
      i++;
      while (expression[i] !== '"') {
        if (expression[i] === "\\") {
          i++;
          out += escaped(false);
        } else out += expression[i++]!.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
      }
      i++;
    } else if (c === "[") {
      out += "[";
      i++;
      if (expression[i] === "^") out += expression[i++];
      while (expression[i] !== "]") {
        if (expression[i] === "\\") {
          i++;
          out += escaped(true);
        } else out += expression[i++] === "-" ? "-" : expression[i - 1]!.replace(/[[\]\\^]/g, "\\$&");
      }
      out += "]";
      i++;
    } else if ("(){}|*+?,0123456789".includes(c)) {
      out += c;
      i++;
    } else throw new Error(`gbnfToRegExp: unexpected '${c}' at ${i} in ${expression}`);
  }
  return new RegExp(`^(?:${out})$`, "u");
}
