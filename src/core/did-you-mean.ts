/**
 * @module
 * "Did you mean …?" for a misspelt name (a key, a runtime, a preset): the closest
 * candidate by edit distance, when it is close enough to be a typo rather than a
 * different word (at most a third of the name's length, and at least one edit).
 */

/** The candidate closest to `word`, or undefined when none is plausibly meant. */
export function closestName(word: string, candidates: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Math.max(1, Math.floor(word.length / 3));
  for (const candidate of candidates) {
    const d = _distance(word.toLowerCase(), candidate.toLowerCase());
    if (d <= bestDistance && (best === undefined || d < _distance(word.toLowerCase(), best.toLowerCase()))) {
      best = candidate;
      bestDistance = d;
    }
  }
  return best;
}

/** ` Did you mean "x"?`, or '' — to append to a message. */
export function didYouMean(word: string, candidates: readonly string[]): string {
  const name = closestName(word, candidates);
  return name === undefined || name === word ? '' : ` Did you mean "${name}"?`;
}

function _distance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++)
      current[j] = Math.min(
        (previous[j] as number) + 1,
        (current[j - 1] as number) + 1,
        (previous[j - 1] as number) + (a[i - 1] === b[j - 1] ? 0 : 1),
      );
    previous = current;
  }
  return previous[b.length] as number;
}
