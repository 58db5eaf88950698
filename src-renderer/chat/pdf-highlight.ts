/**
 * Finds a cited passage in a PDF page's text layer. The layer splits text into spans
 * at arbitrary places and the passage was normalised by the parser (Markdown marks,
 * spacing, hyphenation), so both sides are compared without whitespace, case or
 * Markdown punctuation. When the whole passage is not found, its first and last
 * stretches are tried, so a partial match still points at the right place.
 */

const DROP = /[\s#*_`>|\u00ad\u200b]/;

function squash(text: string): string {
  let out = "";
  for (const ch of text.normalize("NFKC")) if (!DROP.test(ch)) out += ch.toLowerCase();
  return out.replace(/[‐‑‒–—]/g, "-").replace(/[‘’]/g, "'").replace(/[“”]/g, '"');
}

/** Indexes of the spans that hold the passage (empty when nothing matches). */
export function findPassageSpans(spans: readonly string[], passage: string): number[] {
  let joined = "";
  const owner: number[] = [];
  spans.forEach((span, i) => {
    const s = squash(span);
    joined += s;
    for (let k = 0; k < s.length; k++) owner.push(i);
  });
  const needle = squash(passage);
  if (!needle || !joined) return [];
  const range = locate(joined, needle);
  if (!range) return [];
  const hit = new Set<number>();
  for (let k = range[0]; k < range[1]; k++) hit.add(owner[k]!);
  return [...hit].sort((a, b) => a - b);
}

function locate(haystack: string, needle: string): [number, number] | null {
  const whole = haystack.indexOf(needle);
  if (whole >= 0) return [whole, whole + needle.length];
  for (const size of [160, 80, 40]) {
    if (needle.length <= size) continue;
    const head = haystack.indexOf(needle.slice(0, size));
    const tail = haystack.indexOf(needle.slice(-size));
    if (head >= 0 && tail >= head) return [head, tail + size];
    if (head >= 0) return [head, Math.min(haystack.length, head + needle.length)];
    if (tail >= 0) return [Math.max(0, tail + size - needle.length), tail + size];
  }
  return null;
}

/** True for documents pdf.js should show (by content type or name). */
export function isPdf(contentType: string | null | undefined, filename: string): boolean {
  return (contentType ?? "").includes("pdf") || /\.pdf$/i.test(filename);
}
