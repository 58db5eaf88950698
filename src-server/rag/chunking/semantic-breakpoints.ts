/**
 * The numbers behind semantic chunking: how far apart in meaning two neighbouring runs of
 * sentences are (cosine distance of their mean embeddings), and the document-relative
 * threshold above which a distance counts as a topic shift.
 */

/**
 * Distance at each gap of a sequence of units: `out[i]` is between unit i-1 and unit i
 * (`out[0]` is always null). Each side is the mean of up to `window` consecutive vectors
 * next to the gap, so one odd sentence does not make a breakpoint. Null where either
 * neighbour has no vector (headings, units not embedded); windows do not reach past one.
 */
export function gapDistances(vectors: readonly (Float32Array | SparseVector | null)[], window: number): (number | null)[] {
  const out: (number | null)[] = [null];
  for (let i = 1; i < vectors.length; i++) {
    if (vectors[i - 1] === null || vectors[i] === null) {
      out.push(null);
      continue;
    }
    const left = meanOf(vectors, i - 1, -1, window);
    const right = meanOf(vectors, i, 1, window);
    out.push(1 - cosine(left, right));
  }
  return out;
}

/**
 * The `p`-th percentile (0–100) of `values`, interpolating linearly between ranks;
 * `Infinity` for no values, so nothing exceeds it.
 */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.POSITIVE_INFINITY;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = (Math.min(100, Math.max(0, p)) / 100) * (sorted.length - 1);
  const below = Math.floor(rank);
  const above = Math.min(sorted.length - 1, below + 1);
  return sorted[below]! + (sorted[above]! - sorted[below]!) * (rank - below);
}

/** Cosine similarity of two vectors of equal length; 0 when either is all zeros. */
export function cosine(a: Float32Array, b: Float32Array): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    const x = a[i]!;
    const y = b[i]!;
    dot += x * y;
    na += x * x;
    nb += y * y;
  }
  return na === 0 || nb === 0 ? 0 : dot / Math.sqrt(na * nb);
}

/**
 * A vector of `length` dimensions that are mostly zero: the others' positions (ascending)
 * and values. Summed, it gives exactly what its dense form gives (adding zero changes nothing).
 */
export interface SparseVector {
  readonly length: number;
  readonly indexes: Uint32Array;
  readonly values: Float32Array;
}

/** The dense form of a sparse vector. */
export function toDense(vector: SparseVector): Float32Array {
  const dense = new Float32Array(vector.length);
  for (let j = 0; j < vector.indexes.length; j++) dense[vector.indexes[j]!] = vector.values[j]!;
  return dense;
}

/** Sum (direction of the mean) of up to `window` non-null vectors from `from`, stepping by `step`. */
function meanOf(vectors: readonly (Float32Array | SparseVector | null)[], from: number, step: 1 | -1, window: number): Float32Array {
  const first = vectors[from]!;
  const sum = new Float32Array(first.length);
  for (let k = 0, i = from; k < window && i >= 0 && i < vectors.length; k++, i += step) {
    const v = vectors[i];
    if (v === null || v === undefined) break;
    if (v instanceof Float32Array) for (let d = 0; d < sum.length; d++) sum[d] = sum[d]! + v[d]!;
    else for (let j = 0; j < v.indexes.length; j++) sum[v.indexes[j]!] = sum[v.indexes[j]!]! + v.values[j]!;
  }
  return sum;
}
