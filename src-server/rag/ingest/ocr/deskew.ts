/**
 * Straightens a page scanned a few degrees askew before OCR. Tesseract copes with a slight
 * tilt in recognising words, but its page layout analysis does not: on a Malay page scanned
 * at 150 DPI and turned 2.5°, it dropped a whole paragraph, which the same page straightened
 * gave back (measured in `deskew.test.ts` and the OCR accuracy test).
 *
 * The angle is found the classic way (projection profiles): on a reduced copy of the page,
 * the dark pixels are projected onto lines at each candidate angle; at the text's true angle
 * the lines of text and the gaps between them line up, so the profile's variance peaks. The
 * page is then turned back by sharp (libvips), and word boxes found on the straightened page
 * are turned back onto the original with `unrotateBox`, so highlights fall on the image shown.
 */
import sharp, { type Sharp } from "sharp";

/** Skew searched, in degrees either way, and the steps of the search. */
const MAX_SKEW = 6;
const COARSE_STEP = 0.5;
const FINE_STEP = 0.1;
/** Below this the page is left as it is (rotating blurs a little and costs time). */
const MIN_CORRECTION = 0.3;
/** Width of the reduced copy the angle is measured on. */
const PROBE_WIDTH = 1000;

/** A page image: encoded (PNG, JPEG, TIFF…), or raw pixels (what a canvas gives). */
export type PageImage = Buffer | { pixels: Buffer; width: number; height: number; channels: 1 | 3 | 4 };

export interface Straightened {
  /** The page to read, in grey, as a binary PGM (a header and the pixels: nothing to encode or decode). */
  image: Buffer;
  /** Degrees the page was turned (clockwise positive, as sharp turns); 0 when it was not. */
  angle: number;
  /** Sizes of the original page and of the straightened one (larger: the corners are kept). */
  original: { width: number; height: number };
  straightened: { width: number; height: number };
}

function open(image: PageImage): Sharp {
  return Buffer.isBuffer(image) ? sharp(image) : sharp(image.pixels, { raw: { width: image.width, height: image.height, channels: image.channels } });
}

/**
 * Measures the page's skew and turns it straight when it is askew enough to matter. The page
 * goes to OCR as grey pixels in a PGM: encoding a 300-DPI page as PNG took longer than
 * rendering it, and the engine would only decode it again.
 */
export async function straighten(image: PageImage): Promise<Straightened> {
  const probe = await open(image).greyscale().resize({ width: PROBE_WIDTH, withoutEnlargement: true }).raw().toBuffer({ resolveWithObject: true });
  const skew = estimateSkew(probe.data, probe.info.width, probe.info.height);
  const angle = Math.abs(skew) < MIN_CORRECTION ? 0 : -skew; // text falling to the right is turned back anticlockwise
  const grey = open(image).greyscale();
  const original = Buffer.isBuffer(image) ? await sharp(image).metadata().then((m) => ({ width: m.width ?? 0, height: m.height ?? 0 })) : { width: image.width, height: image.height };
  const { data, info } = await (angle === 0 ? grey : grey.rotate(angle, { background: "#ffffff" })).raw().toBuffer({ resolveWithObject: true });
  const pgm = Buffer.concat([Buffer.from(`P5\n${info.width} ${info.height}\n255\n`, "latin1"), info.channels === 1 ? data : firstChannel(data, info.channels)]);
  return { image: pgm, angle, original, straightened: { width: info.width, height: info.height } };
}

/** The first channel of interleaved pixels (grey output that kept an alpha channel). */
function firstChannel(data: Buffer, channels: number): Buffer {
  const out = Buffer.alloc(data.length / channels);
  for (let i = 0; i < out.length; i++) out[i] = data[i * channels]!;
  return out;
}

/**
 * The skew of the text lines in degrees (image coordinates, y down): positive when lines
 * fall to the right. `grey` is one byte a pixel, row by row.
 */
export function estimateSkew(grey: Uint8Array, width: number, height: number): number {
  const threshold = otsu(grey);
  const xs: number[] = [];
  const ys: number[] = [];
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      if (grey[y * width + x]! < threshold) {
        xs.push(x);
        ys.push(y);
      }
    }
  }
  // A blank page, or one that is all ink, has no lines to find.
  if (xs.length < 200 || xs.length > width * height * 0.5) return 0;
  const score = (degrees: number) => profileVariance(xs, ys, height, width, degrees);
  let best = 0;
  let bestScore = score(0);
  for (let a = -MAX_SKEW; a <= MAX_SKEW + 1e-9; a += COARSE_STEP) {
    const s = score(a);
    if (s > bestScore) [best, bestScore] = [a, s];
  }
  const centre = best;
  for (let a = centre - COARSE_STEP; a <= centre + COARSE_STEP + 1e-9; a += FINE_STEP) {
    const s = score(a);
    if (s > bestScore) [best, bestScore] = [a, s];
  }
  return Math.round(best * 100) / 100;
}

/** Variance of the count of dark pixels per line, lines sloping `degrees`. */
function profileVariance(xs: number[], ys: number[], height: number, width: number, degrees: number): number {
  const slope = Math.tan((degrees * Math.PI) / 180);
  const offset = Math.ceil(Math.abs(slope) * width) + 1;
  const bins = new Float64Array(height + 2 * offset);
  for (let i = 0; i < xs.length; i++) {
    const row = Math.round(ys[i]! - xs[i]! * slope) + offset;
    bins[row]! += 1;
  }
  let sum = 0;
  let squares = 0;
  for (const b of bins) {
    sum += b;
    squares += b * b;
  }
  const mean = sum / bins.length;
  return squares / bins.length - mean * mean;
}

/** Otsu's threshold between ink and paper. */
function otsu(grey: Uint8Array): number {
  const histogram = new Float64Array(256);
  for (const v of grey) histogram[v]! += 1;
  const total = grey.length;
  let sumAll = 0;
  for (let i = 0; i < 256; i++) sumAll += i * histogram[i]!;
  let background = 0;
  let sumBackground = 0;
  let best = 128;
  let bestVariance = -1;
  for (let t = 0; t < 256; t++) {
    background += histogram[t]!;
    if (background === 0) continue;
    const foreground = total - background;
    if (foreground === 0) break;
    sumBackground += t * histogram[t]!;
    const meanBackground = sumBackground / background;
    const meanForeground = (sumAll - sumBackground) / foreground;
    const variance = background * foreground * (meanBackground - meanForeground) ** 2;
    if (variance > bestVariance) [best, bestVariance] = [t + 1, variance];
  }
  return best;
}

/**
 * A box found on the straightened page, as it lies on the original: its corners turned back
 * about the pages' centres, and the box around them.
 */
export function unrotateBox(box: [number, number, number, number], page: Pick<Straightened, "angle" | "original" | "straightened">): [number, number, number, number] {
  if (page.angle === 0) return box;
  const [left, top, w, h] = box;
  const radians = (-page.angle * Math.PI) / 180;
  const cos = Math.cos(radians);
  const sin = Math.sin(radians);
  const cx = page.straightened.width / 2;
  const cy = page.straightened.height / 2;
  const ox = page.original.width / 2;
  const oy = page.original.height / 2;
  const corners = [
    [left, top],
    [left + w, top],
    [left, top + h],
    [left + w, top + h],
  ].map(([x, y]) => {
    const dx = x! - cx;
    const dy = y! - cy;
    return [ox + dx * cos - dy * sin, oy + dx * sin + dy * cos] as const;
  });
  const x0 = Math.max(0, Math.min(...corners.map((c) => c[0])));
  const y0 = Math.max(0, Math.min(...corners.map((c) => c[1])));
  const x1 = Math.min(page.original.width, Math.max(...corners.map((c) => c[0])));
  const y1 = Math.min(page.original.height, Math.max(...corners.map((c) => c[1])));
  return [Math.round(x0), Math.round(y0), Math.max(0, Math.round(x1 - x0)), Math.max(0, Math.round(y1 - y0))];
}
