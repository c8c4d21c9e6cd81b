/**
 * Edit distance between two strings, ignoring case: insertions, deletions,
 * substitutions and transpositions of neighbours each count one (the
 * "optimal string alignment" distance, so `reed`→`read` and `wrod`→`word`
 * are both 1).
 */
export function editDistance(left: string, right: string): number {
  const a = left.toLowerCase();
  const b = right.toLowerCase();
  if (a === b) return 0;
  if (a.length === 0) return b.length;
  if (b.length === 0) return a.length;
  // Three rows are enough for the transposition look-back.
  let before = new Array<number>(b.length + 1).fill(0);
  let previous = Array.from({ length: b.length + 1 }, (_, index) => index);
  let current = new Array<number>(b.length + 1).fill(0);
  for (let i = 1; i <= a.length; i++) {
    current[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min((previous[j] as number) + 1, (current[j - 1] as number) + 1, (previous[j - 1] as number) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) best = Math.min(best, (before[j - 2] as number) + 1);
      current[j] = best;
    }
    [before, previous, current] = [previous, current, before];
  }
  return previous[b.length] as number;
}

/** Longest names compared; longer input gets no suggestion (and costs nothing). */
const MAX_COMPARED_LENGTH = 200;

/**
 * The candidates closest to `wanted` (at most `max`, all at the smallest
 * distance found): by edit distance to the whole name or to its trailing
 * dotted segments (so `get-summ` finds `mcp.everything.get-sum` and
 * `fs.read` finds `builtin.fs.read`), within about a third of the length of
 * what was typed.
 */
export function suggestNames(wanted: string, candidates: Iterable<string>, max = 3): string[] {
  if (typeof wanted !== 'string' || wanted.length === 0 || wanted.length > MAX_COMPARED_LENGTH) return [];
  const limit = Math.max(1, Math.floor(wanted.length / 3));
  const scored: { name: string; distance: number }[] = [];
  for (const candidate of new Set(candidates)) {
    // The name is right; what is wrong is elsewhere (its source is off), and another name would mislead.
    if (candidate === wanted) return [];
    if (candidate.length > MAX_COMPARED_LENGTH) continue;
    const segments = candidate.split('.');
    let distance = editDistance(wanted, candidate);
    for (let start = 1; start < segments.length && distance > 0; start++) {
      distance = Math.min(distance, editDistance(wanted, segments.slice(start).join('.')));
    }
    if (distance <= limit) scored.push({ name: candidate, distance });
  }
  scored.sort((left, right) => left.distance - right.distance || left.name.localeCompare(right.name));
  // Only the closest: a typo has one likely fix, and a list of far ones hides it.
  const best = scored[0]?.distance;
  return scored
    .filter((entry) => entry.distance === best)
    .slice(0, max)
    .map((entry) => entry.name);
}

/** `" Did you mean 'a' or 'b'?"`, or `''` when there is nothing close. */
export function didYouMean(wanted: string, candidates: Iterable<string>): string {
  const names = suggestNames(wanted, candidates).map((name) => `'${name}'`);
  if (names.length === 0) return '';
  const list = names.length === 1 ? names[0] : `${names.slice(0, -1).join(', ')} or ${names[names.length - 1]}`;
  return ` Did you mean ${list}?`;
}
