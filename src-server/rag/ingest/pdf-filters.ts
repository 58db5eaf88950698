/**
 * The PDF stream filters besides Flate that pdf.js undoes while reading text, as plain
 * decoders with an output cap: LZW (expands up to about 2700 times), RunLength (128
 * times), and the ASCII encodings that may wrap a compressed stream. Used to measure
 * what a stream expands to before pdf.js does it; zlib does Flate.
 */

/** Thrown when a decoder's output would pass its cap. */
export class OutputCapExceeded extends Error {
  override name = "OutputCapExceeded";
}

/** Collects output in pieces, refusing to pass `cap` bytes. */
class CappedOutput {
  private readonly chunks: Buffer[] = [];
  private current = Buffer.alloc(64 * 1024);
  private position = 0;
  private total = 0;

  constructor(private readonly cap: number) {}

  push(byte: number): void {
    if (++this.total > this.cap) throw new OutputCapExceeded(`output passes ${this.cap} bytes`);
    if (this.position === this.current.length) {
      this.chunks.push(this.current);
      this.current = Buffer.alloc(this.current.length);
      this.position = 0;
    }
    this.current[this.position++] = byte;
  }

  result(): Buffer {
    return Buffer.concat([...this.chunks, this.current.subarray(0, this.position)]);
  }
}

/** `/ASCIIHexDecode`: hex digits up to `>`, whitespace ignored, an odd last digit padded with 0. */
export function asciiHexDecode(data: Uint8Array): Buffer {
  const text = Buffer.from(data).toString("latin1");
  const end = text.indexOf(">");
  const hex = (end === -1 ? text : text.slice(0, end)).replace(/[^0-9A-Fa-f]/g, "");
  return Buffer.from(hex.length % 2 ? `${hex}0` : hex, "hex");
}

/** `/ASCII85Decode`: base-85 groups up to `~>`, `z` for four zero bytes. */
export function ascii85Decode(data: Uint8Array): Buffer {
  const text = Buffer.from(data).toString("latin1");
  const end = text.indexOf("~>");
  const body = (end === -1 ? text : text.slice(0, end)).replace(/\s+/g, "").replace(/^<~/, "");
  const out: number[] = [];
  let group: number[] = [];
  const flush = (length: number): void => {
    while (group.length < 5) group.push(84);
    let value = 0;
    for (const digit of group) value = value * 85 + digit;
    for (let i = 3; i >= 4 - length; i--) out.push((value >>> (i * 8)) & 0xff);
    group = [];
  };
  for (const char of body) {
    if (char === "z" && group.length === 0) {
      out.push(0, 0, 0, 0);
      continue;
    }
    const digit = char.charCodeAt(0) - 33;
    if (digit < 0 || digit > 84) continue;
    group.push(digit);
    if (group.length === 5) flush(4);
  }
  if (group.length > 1) flush(group.length - 1);
  return Buffer.from(out);
}

/** `/RunLengthDecode`. */
export function runLengthDecode(data: Uint8Array, cap: number): Buffer {
  const out = new CappedOutput(cap);
  for (let i = 0; i < data.length; ) {
    const length = data[i++]!;
    if (length === 128) break;
    if (length < 128) {
      for (let n = 0; n <= length && i < data.length; n++) out.push(data[i++]!);
    } else {
      const byte = data[i++] ?? 0;
      for (let n = 0; n < 257 - length; n++) out.push(byte);
    }
  }
  return out.result();
}

/** `/LZWDecode` (variable-width codes from 9 to 12 bits, clear 256, end 257), `earlyChange` 1 by default. */
export function lzwDecode(data: Uint8Array, cap: number, earlyChange = 1): Buffer {
  const out = new CappedOutput(cap);
  const prefix = new Int16Array(4096).fill(-1);
  const suffix = new Uint8Array(4096);
  const lengths = new Uint16Array(4096);
  for (let i = 0; i < 256; i++) {
    suffix[i] = i;
    lengths[i] = 1;
  }
  const scratch = new Uint8Array(4096);
  let next = 258;
  let width = 9;
  let previous = -1;
  let bits = 0;
  let bitCount = 0;
  let at = 0;
  /** Writes entry `code` and returns its first byte. */
  const emit = (code: number): number => {
    const length = lengths[code]!;
    for (let i = length - 1, c = code; i >= 0; i--, c = prefix[c]!) scratch[i] = suffix[c]!;
    for (let i = 0; i < length; i++) out.push(scratch[i]!);
    return scratch[0]!;
  };
  for (;;) {
    while (bitCount < width) {
      if (at >= data.length) return out.result();
      bits = ((bits << 8) | data[at++]!) >>> 0;
      bitCount += 8;
    }
    const code = (bits >>> (bitCount - width)) & ((1 << width) - 1);
    bitCount -= width;
    bits &= (1 << bitCount) - 1;
    if (code === 256) {
      next = 258;
      width = 9;
      previous = -1;
      continue;
    }
    if (code === 257) return out.result();
    let first: number;
    if (code < next && (code < 256 || lengths[code]! > 0)) {
      first = emit(code);
    } else if (code === next && previous >= 0) {
      first = emit(previous);
      out.push(first);
    } else {
      return out.result(); // an invalid code ends the data, as in readers
    }
    if (previous >= 0 && next < 4096) {
      prefix[next] = previous;
      suffix[next] = first;
      lengths[next] = lengths[previous]! + 1;
      next++;
    }
    if (next + earlyChange >= 1 << width && width < 12) width++;
    previous = code;
  }
}
