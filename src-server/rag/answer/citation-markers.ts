/**
 * Turns a grounded answer's citation markers (`[1]`, `[2][3]`, `[1, 2]`) into annotations:
 * the marker is taken out of the text and its sources are noted at the place it stood, as
 * OpenAI's `file_citation` annotations point into text that carries no markers. Works on a
 * stream: a delta that ends inside what may be a marker is held back until it is decided.
 */

export interface MarkerAnnotation {
  /** Where the marker stood in the text without markers (UTF-16 units, as JavaScript counts). */
  index: number;
  /** 1-based source number. */
  source: number;
}

/** A whole marker: `[` numbers separated by commas `]`. */
const MARKER = /^\[(\d{1,3}(?:\s*,\s*\d{1,3})*)\]/;
/** What may still become a marker as more text arrives. */
const PARTIAL = /^\[(\d{1,3}(?:\s*,\s*(\d{1,3})?)*)?$/;

export class CitationMarkers {
  private pending = "";
  private emitted = 0;
  readonly annotations: MarkerAnnotation[] = [];

  /** @param sources how many sources there are: numbers outside 1..sources stay in the text as written. */
  constructor(private readonly sources: number) {}

  /** The text of `delta` that can be shown now (markers removed). */
  feed(delta: string): string {
    this.pending += delta;
    return this.drain(false);
  }

  /** What is held back, once the text has ended. */
  flush(): string {
    return this.drain(true);
  }

  private drain(final: boolean): string {
    let out = "";
    for (;;) {
      const open = this.pending.indexOf("[");
      if (open < 0) {
        out += this.pending;
        this.pending = "";
        break;
      }
      out += this.pending.slice(0, open);
      const rest = this.pending.slice(open);
      const whole = MARKER.exec(rest);
      if (whole) {
        const numbers = whole[1]!.split(",").map((n) => Number(n.trim()));
        if (numbers.every((n) => n >= 1 && n <= this.sources)) {
          // A space before the marker goes with it ("… cuti [1]." → "… cuti.", "… [1] and" → "… and").
          const trimmed = out.endsWith(" ") ? out.slice(0, -1) : out;
          const at = this.emitted + trimmed.length;
          for (const source of numbers) this.annotations.push({ index: at, source });
          out = trimmed;
        } else {
          out += whole[0];
        }
        this.pending = rest.slice(whole[0].length);
        continue;
      }
      if (!final && PARTIAL.test(rest)) {
        // Undecided: keep it until more text (or the end) arrives.
        this.pending = rest;
        break;
      }
      out += "[";
      this.pending = rest.slice(1);
    }
    if (!final) {
      // A trailing space may belong to a marker still to come: it waits with the next text.
      const spaces = /[ ]+$/.exec(out)?.[0] ?? "";
      if (spaces) {
        out = out.slice(0, -spaces.length);
        this.pending = spaces + this.pending;
      }
    }
    this.emitted += out.length;
    return out;
  }
}

/** The whole text at once: without markers, and the annotations. */
export function stripCitationMarkers(text: string, sources: number): { text: string; annotations: MarkerAnnotation[] } {
  const markers = new CitationMarkers(sources);
  const out = markers.feed(text) + markers.flush();
  return { text: out, annotations: markers.annotations };
}
