/** Longest name compared by edit distance; longer ones only match by their last segment or as a part. */
const LONGEST_COMPARED = 200;

/**
 * Up to `limit` names from `candidates` close to `wanted`, best first, for a
 * "did you mean" hint: names that end with `.<wanted>` (the namespace was
 * left out), then names within an edit distance of about a quarter of the
 * name's length (typos: `builtin.fs.reed`, `get-summ`), then names that
 * contain it; of those, only the ones as close as the closest. Empty when
 * nothing is close.
 *
 * @throws Never.
 */
export function closestNames(wanted: string, candidates: Iterable<string>, limit = 3): string[] {
  if (typeof wanted !== 'string' || wanted.length === 0) return [];
  const lowered = wanted.toLowerCase();
  const budget = Math.max(1, Math.floor(lowered.length / 4));
  const scored: { name: string; score: number }[] = [];
  for (const name of candidates) {
    const candidate = name.toLowerCase();
    let score: number | undefined;
    if (candidate.endsWith(`.${lowered}`)) score = 0;
    else {
      const tail = candidate.slice(candidate.lastIndexOf('.') + 1);
      const distance = Math.min(
        editDistance(lowered, candidate, budget),
        lowered.includes('.') ? Number.POSITIVE_INFINITY : editDistance(lowered, tail, budget),
      );
      if (distance <= budget) score = 1 + distance;
      else if (candidate.includes(lowered) && lowered.length >= 3) score = 1 + budget + 1;
    }
    if (score !== undefined) scored.push({ name, score });
  }
  scored.sort((a, b) => a.score - b.score || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  // Only the closest: a typo of one name should not drag in its siblings.
  const best = scored[0]?.score;
  return scored
    .filter((entry) => entry.score === best)
    .slice(0, limit)
    .map((entry) => entry.name);
}

/** Levenshtein distance, giving up (returning `limit + 1`) as soon as it must exceed `limit`. */
function editDistance(left: string, right: string, limit: number): number {
  if (Math.abs(left.length - right.length) > limit || left.length > LONGEST_COMPARED || right.length > LONGEST_COMPARED) return limit + 1;
  let previous = Int32Array.from({ length: right.length + 1 }, (_, index) => index);
  let current = new Int32Array(right.length + 1);
  for (let row = 1; row <= left.length; row++) {
    current[0] = row;
    let best = row;
    for (let column = 1; column <= right.length; column++) {
      const cost = left.charCodeAt(row - 1) === right.charCodeAt(column - 1) ? 0 : 1;
      const value = Math.min((previous[column] as number) + 1, (current[column - 1] as number) + 1, (previous[column - 1] as number) + cost);
      current[column] = value;
      if (value < best) best = value;
    }
    if (best > limit) return limit + 1;
    [previous, current] = [current, previous];
  }
  return previous[right.length] as number;
}
