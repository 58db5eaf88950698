/**
 * Character and word error rates for OCR: the edit distance (Levenshtein: insertions,
 * deletions and substitutions, each costing 1) between what OCR read and the reference
 * text, divided by the reference's length. Both texts are normalised first — Unicode NFC,
 * every run of whitespace made one space, trimmed — so line breaks and layout spacing,
 * which OCR and a PDF's text layer place differently, are not counted as errors.
 */

/** NFC, whitespace runs collapsed to one space, trimmed. */
export function normaliseText(text: string): string {
  return text.normalize("NFC").replace(/\s+/gu, " ").trim();
}

/** Levenshtein distance between two sequences (code points or words), in O(min) memory. */
export function editDistance<T>(a: readonly T[], b: readonly T[]): number {
  if (a.length < b.length) [a, b] = [b, a];
  if (b.length === 0) return a.length;
  let previous = Array.from({ length: b.length + 1 }, (_, i) => i);
  let current = new Array<number>(b.length + 1);
  for (let i = 1; i <= a.length; i++) {
    current[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const substitution = previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1);
      current[j] = Math.min(substitution, previous[j]! + 1, current[j - 1]! + 1);
    }
    [previous, current] = [current, previous];
  }
  return previous[b.length]!;
}

/** Ratio of errors to reference units; an empty reference gives 0 when the hypothesis is empty too, else 1. */
function rate(reference: readonly string[], hypothesis: readonly string[]): number {
  if (reference.length === 0) return hypothesis.length === 0 ? 0 : 1;
  return editDistance(reference, hypothesis) / reference.length;
}

/**
 * Character error rate: edits over code points of the normalised texts, divided by the
 * reference's code points. 0 is perfect; it can exceed 1 when OCR invents a lot.
 */
export function characterErrorRate(reference: string, hypothesis: string): number {
  return rate(Array.from(normaliseText(reference)), Array.from(normaliseText(hypothesis)));
}

/** Word error rate: the same over words (split at whitespace after normalising). */
export function wordErrorRate(reference: string, hypothesis: string): number {
  const words = (text: string) => {
    const normal = normaliseText(text);
    return normal === "" ? [] : normal.split(" ");
  };
  return rate(words(reference), words(hypothesis));
}

/** What the OCR fixtures say, as rendered (test/fixtures/ocr): the reference their CER is measured against. */
export const OCR_FIXTURE_TEXT = {
  "notis-air-klang.png": `NOTIS GANGGUAN BEKALAN AIR
Bekalan air di Klang akan terganggu pada 14 Mac 2024 dari jam 9.00 pagi hingga 6.00 petang kerana kerja penyelenggaraan paip utama.
Water supply in Klang will be interrupted on 14 March 2024 from 9.00 am to 6.00 pm for maintenance of the main pipe.
Pengurus Besar, Syarikat Air Selangor`,
} as const;
