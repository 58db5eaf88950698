/**
 * IEEE 754 half precision, the form vectors take in a corpus's in-memory index: half the
 * memory of float32, and ranking unchanged to within the rounding of 11 significant bits
 * (a cosine moves by about 1e-4 at most; see float16.test.ts and `bench/rag-scale.ts`).
 * Node 20 has no Float16Array, and apache-arrow's `float64ToUint16` got 1,715 of 20 million
 * embedding values wrong in a probe (LanceDB then found NaN in a column it wrote). So: round
 * to nearest, ties to even, here.
 */

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);

/** The half-precision bits nearest to `value` (ties to even; overflow to infinity; NaN kept). */
export function toFloat16Bits(value: number): number {
  f32[0] = value;
  const bits = u32[0]!;
  const sign = (bits >>> 16) & 0x8000;
  const exponent = (bits >>> 23) & 0xff;
  let mantissa = bits & 0x7fffff;
  if (exponent === 0xff) return sign | 0x7c00 | (mantissa !== 0 ? 0x200 : 0);
  // Rebias from 127 to 15.
  const e = exponent - 112;
  if (e >= 0x1f) return sign | 0x7c00;
  if (e <= 0) {
    // Subnormal in half precision (or zero).
    if (e < -10) return sign;
    mantissa |= 0x800000;
    const shift = 14 - e;
    let half = mantissa >>> shift;
    const rest = mantissa & ((1 << shift) - 1);
    const midway = 1 << (shift - 1);
    if (rest > midway || (rest === midway && (half & 1) === 1)) half++;
    return sign | half;
  }
  let half = (e << 10) | (mantissa >>> 13);
  const rest = mantissa & 0x1fff;
  // A carry out of the mantissa raises the exponent, as it should (up to infinity).
  if (rest > 0x1000 || (rest === 0x1000 && (half & 1) === 1)) half++;
  return sign | half;
}

let table: Float32Array | null = null;

/** Every half-precision value, by its bits, as float32 (256 KB, made on first use). */
export function float16Values(): Float32Array {
  if (table) return table;
  table = new Float32Array(65536);
  for (let h = 0; h < 65536; h++) {
    const sign = h & 0x8000 ? -1 : 1;
    const exponent = (h >>> 10) & 0x1f;
    const mantissa = h & 0x3ff;
    table[h] = exponent === 0 ? sign * mantissa * 2 ** -24 : exponent === 0x1f ? (mantissa ? NaN : sign * Infinity) : sign * (1 + mantissa / 1024) * 2 ** (exponent - 15);
  }
  return table;
}

/** Writes `source` as half precision into `target` from `offset`. */
export function writeFloat16(source: ArrayLike<number>, target: Uint16Array, offset = 0): void {
  for (let i = 0; i < source.length; i++) target[offset + i] = toFloat16Bits(source[i]!);
}
