/**
 * @module
 * Bounded problem lists: a file or path broken in thousands of places says what is
 * wrong without repeating it thousands of times.
 */

/** At most `max` items of each code, in their order, then one item per code (made by `rest`) that counts the ones left out. */
export function capPerCode<T extends { code: string }>(items: Iterable<T>, max: number, rest: (code: T['code'], more: number) => T): T[] {
  const counts = new Map<T['code'], number>();
  const out: T[] = [];
  for (const item of items) {
    const n = (counts.get(item.code) ?? 0) + 1;
    counts.set(item.code, n);
    if (n <= max) out.push(item);
  }
  for (const [code, n] of counts) if (n > max) out.push(rest(code, n - max));
  return out;
}
