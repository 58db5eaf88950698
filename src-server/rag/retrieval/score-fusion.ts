/**
 * Convex combination of min-max normalised scores: each list's scores are scaled to
 * [0, 1] within the list, then `vectorWeight * vector + (1 - vectorWeight) * keyword`
 * (an item missing from a list scores 0 there). On the project's bilingual eval set this
 * beat reciprocal rank fusion, which let middling items found by both lists outrank the
 * better list's best hit (see the closing note of issue 3 and `npm run eval`).
 */
export function convexScoreFusion(
  vector: readonly { id: string; score: number }[],
  keyword: readonly { id: string; score: number }[],
  vectorWeight: number,
): { id: string; score: number }[] {
  const normalize = (list: readonly { id: string; score: number }[]) => {
    const scores = list.map((x) => x.score);
    const max = Math.max(...scores);
    const min = Math.min(...scores);
    return new Map(list.map((x) => [x.id, max > min ? (x.score - min) / (max - min) : 1]));
  };
  const v = normalize(vector);
  const k = normalize(keyword);
  const ids = new Set([...v.keys(), ...k.keys()]);
  return [...ids]
    .map((id) => ({ id, score: vectorWeight * (v.get(id) ?? 0) + (1 - vectorWeight) * (k.get(id) ?? 0) }))
    .sort((a, b) => b.score - a.score || a.id.localeCompare(b.id));
}
