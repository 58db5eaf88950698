import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { float16Values, toFloat16Bits, writeFloat16 } from "./float16.js";

describe("float16: how vectors are held in memory", () => {
  const values = float16Values();

  it("maps every half-precision value back to its own bits", () => {
    for (let h = 0; h < 65536; h++) {
      const v = values[h]!;
      if (Number.isNaN(v)) {
        assert.ok(Number.isNaN(values[toFloat16Bits(v)]!), `NaN stays NaN (0x${h.toString(16)})`);
        continue;
      }
      assert.equal(toFloat16Bits(v), h, `0x${h.toString(16)} = ${v}`);
    }
    assert.equal(values[0x3c00], 1);
    assert.equal(values[0xc000], -2);
    assert.equal(values[0x7bff], 65504);
    assert.equal(values[0x0001], 2 ** -24);
  });

  it("rounds every float32 to the nearest half, ties to even (checked against the two neighbours)", () => {
    // The positive halves in order, to find a value's two neighbours.
    const finite = Array.from({ length: 0x7c01 }, (_, h) => values[h]!);
    let random = 42;
    const next = () => ((random = (random * 1103515245 + 12345) % 2147483648) / 2147483648);
    const samples: number[] = [];
    for (let i = 0; i < 200_000; i++) samples.push(Math.fround((next() - 0.5) * 2 ** Math.floor(next() * 40 - 28)));
    // Exactly midway between neighbours: ties go to the even mantissa.
    for (let h = 0x0400; h < 0x7bff; h += 97) samples.push((values[h]! + values[h + 1]!) / 2, -(values[h]! + values[h + 1]!) / 2);
    for (const x of samples) {
      const a = Math.abs(x);
      let lo = 0;
      let hi = finite.length - 1;
      while (hi - lo > 1) {
        const mid = (lo + hi) >> 1;
        if (finite[mid]! <= a) lo = mid;
        else hi = mid;
      }
      const below = a - finite[lo]!;
      const above = finite[hi]! - a;
      const want = below < above ? lo : above < below ? hi : lo % 2 === 0 ? lo : hi;
      assert.equal(toFloat16Bits(x), want | (x < 0 || Object.is(x, -0) ? 0x8000 : 0), `${x}`);
    }
  });

  it("saturates to infinity, keeps signed zeros, and flushes what is below the smallest subnormal", () => {
    assert.equal(toFloat16Bits(1e6), 0x7c00);
    assert.equal(toFloat16Bits(-1e6), 0xfc00);
    assert.equal(toFloat16Bits(65520), 0x7c00, "halfway to the next power rounds up to infinity");
    assert.equal(toFloat16Bits(65519), 0x7bff);
    assert.equal(toFloat16Bits(-0), 0x8000);
    assert.equal(toFloat16Bits(2 ** -26), 0);
    assert.ok(Number.isNaN(values[toFloat16Bits(NaN)]!));
  });

  it("keeps an embedding's cosine similarities to within 1e-3", () => {
    const dims = 1024;
    const unit = (seed: number) => {
      const v = Float32Array.from({ length: dims }, (_, i) => Math.sin(seed * 7919 + i * 31.7));
      const n = Math.hypot(...v);
      return v.map((x) => x / n);
    };
    const query = unit(1);
    for (let s = 2; s < 50; s++) {
      const v = unit(s);
      const half = new Uint16Array(dims);
      writeFloat16(v, half);
      let exact = 0;
      let approx = 0;
      let norm = 0;
      for (let i = 0; i < dims; i++) {
        exact += query[i]! * v[i]!;
        const x = values[half[i]!]!;
        approx += query[i]! * x;
        norm += x * x;
      }
      assert.ok(Math.abs(exact - approx / Math.sqrt(norm)) < 1e-3, `${exact} vs ${approx / Math.sqrt(norm)}`);
    }
  });
});
