/**
 * Grammars for JSON numbers within bounds, as plain digit patterns: an integer range is
 * split into runs of equal length and each run into digit-by-digit alternatives, so
 * `minimum`/`maximum` (inclusive or exclusive) hold for every number the model can write.
 * Numbers with a fraction are bounded the same way on their integer part, with the
 * fraction constrained where the integer part meets a bound.
 */

/** A bound as JSON Schema gives it. */
export interface Bound {
  value: number;
  inclusive: boolean;
}

/** Digits of the longest integer written without bounds (as llama.cpp's converter). */
export const MAX_DIGITS = 16;
/** Bounds beyond this cannot be written exactly as doubles. */
const LARGEST = 10 ** 15;

export class NumericRangeError extends Error {}

const FRACTION = `("." [0-9]{1,${MAX_DIGITS - 1}})?`;
const ZERO_FRACTION = `("." "0"{1,${MAX_DIGITS - 1}})?`;
const NONZERO_FRACTION = `"." "0"{0,${MAX_DIGITS - 2}} [1-9] [0-9]{0,${MAX_DIGITS - 2}}`;

const allOf = (s: string, d: string) => [...s].every((c) => c === d);

/** Digit strings of `x.length` between `x` and `y` (same length, leading zeros allowed). */
function digitsBetween(x: string, y: string): string {
  const n = x.length;
  if (n === 0) return '""';
  if (x === y) return `"${x}"`;
  const [x0, y0] = [Number(x[0]), Number(y[0])];
  const [xs, ys] = [x.slice(1), y.slice(1)];
  const tail = (k: number) => (k > 0 ? ` [0-9]{${k}}` : "");
  if (allOf(xs, "0") && allOf(ys, "9")) return `${x0 === y0 ? `"${x0}"` : `[${x0}-${y0}]`}${tail(n - 1)}`;
  if (x0 === y0) return `"${x0}" (${digitsBetween(xs, ys)})`;
  const alternatives = [`"${x0}" (${digitsBetween(xs, "9".repeat(n - 1))})`];
  if (x0 + 1 <= y0 - 1) alternatives.push(`${x0 + 1 === y0 - 1 ? `"${x0 + 1}"` : `[${x0 + 1}-${y0 - 1}]`}${tail(n - 1)}`);
  alternatives.push(`"${y0}" (${digitsBetween("0".repeat(n - 1), ys)})`);
  return alternatives.join(" | ");
}

/** Canonical decimal integers in [lo, hi] (0 ≤ lo; hi may be Infinity), as one parenthesised expression. */
export function naturalRange(lo: number, hi: number): string {
  if (lo > hi) throw new NumericRangeError("empty range");
  const from = String(lo);
  const alternatives: string[] = [];
  const lastLength = Number.isFinite(hi) ? String(hi).length : MAX_DIGITS;
  for (let length = from.length; length <= lastLength; length++) {
    if (!Number.isFinite(hi) && length > from.length) {
      // Every longer number: one alternative for all the remaining lengths.
      alternatives.push(`[1-9] [0-9]{${length - 1},${MAX_DIGITS - 1}}`);
      break;
    }
    const a = length === from.length ? from : `1${"0".repeat(length - 1)}`;
    const b = Number.isFinite(hi) && length === lastLength ? String(hi) : "9".repeat(length);
    alternatives.push(digitsBetween(a, b));
  }
  return `(${alternatives.join(" | ")})`;
}

function checkBound(bound: Bound | undefined, what: string, whole: boolean): void {
  if (!bound) return;
  if (!Number.isFinite(bound.value) || Math.abs(bound.value) > LARGEST) throw new NumericRangeError(`${what} ${bound.value} is beyond ±10^15`);
  if (whole && !Number.isInteger(bound.value)) throw new NumericRangeError(`${what} ${bound.value} on a number: only whole-number bounds can be enforced on numbers with fractions`);
}

/** Integers within the bounds (either may be absent). */
export function integerGrammar(lo: Bound | undefined, hi: Bound | undefined): string {
  checkBound(lo, "the lower bound", false);
  checkBound(hi, "the upper bound", false);
  const min = lo ? (lo.inclusive ? Math.ceil(lo.value) : Math.floor(lo.value) + 1) : -Infinity;
  const max = hi ? (hi.inclusive ? Math.floor(hi.value) : Math.ceil(hi.value) - 1) : Infinity;
  if (min > max) throw new NumericRangeError(`no integer lies between ${lo?.value} and ${hi?.value}`);
  const alternatives: string[] = [];
  if (min < 0) alternatives.push(`"-" ${naturalRange(Math.max(1, -Math.min(max, -1)), -min)}`);
  if (max >= 0) alternatives.push(naturalRange(Math.max(0, min), max));
  return alternatives.length === 1 ? alternatives[0]! : `(${alternatives.join(" | ")})`;
}

/** Non-negative decimals y with ⟨a, b⟩ (a, b whole, 0 ≤ a ≤ b, b may be Infinity). */
function nonNegativeDecimals(a: number, aInclusive: boolean, b: number, bInclusive: boolean): string[] {
  if (a === b) return aInclusive && bInclusive ? [`"${a}" ${ZERO_FRACTION}`] : [];
  const alternatives = [`"${a}" ${aInclusive ? FRACTION : NONZERO_FRACTION}`];
  if (a + 1 <= b - 1) alternatives.push(`${naturalRange(a + 1, b - 1)} ${FRACTION}`);
  if (Number.isFinite(b) && bInclusive) alternatives.push(`"${b}" ${ZERO_FRACTION}`);
  return alternatives;
}

/** Numbers (with an optional fraction, no exponent) within whole-number bounds. */
export function numberGrammar(lo: Bound | undefined, hi: Bound | undefined): string {
  checkBound(lo, "the lower bound", true);
  checkBound(hi, "the upper bound", true);
  const low = lo ?? { value: -Infinity, inclusive: false };
  const high = hi ?? { value: Infinity, inclusive: false };
  if (low.value > high.value || (low.value === high.value && !(low.inclusive && high.inclusive))) {
    throw new NumericRangeError(`no number lies between ${lo?.value} and ${hi?.value}`);
  }
  const alternatives: string[] = [];
  if (low.value < 0) {
    // x = -y: the negative side mirrored (0 itself belongs to the non-negative side).
    const near = high.value >= 0 ? { value: 0, inclusive: false } : { value: -high.value, inclusive: high.inclusive };
    for (const y of nonNegativeDecimals(near.value, near.inclusive, -low.value, low.inclusive)) alternatives.push(`"-" ${y}`);
  }
  if (high.value >= 0) {
    const from = low.value >= 0 ? low : { value: 0, inclusive: true };
    alternatives.push(...nonNegativeDecimals(from.value, from.inclusive, high.value, high.inclusive));
  }
  if (alternatives.length === 0) throw new NumericRangeError(`no number lies between ${lo?.value} and ${hi?.value}`);
  return `(${alternatives.join(" | ")})`;
}
