/**
 * @module
 * Bounded problem lists: a file or path broken in thousands of places says what is
 * wrong without repeating it thousands of times.
 */

/** At most `max` items of each code, in their order, then one item per code (made by `rest`) that counts the ones left out. */
export function capPerCode<T extends { code: string }>(
  items: Iterable<T>,
  max: number,
  rest: (code: T['code'], more: number) => T,
): T[] {
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

/**
 * `capPerCode` of the items sorted by line (a stable sort: items of one line keep
 * their order), without holding them all: it keeps the `max` lowest-lined items of
 * each code and counts the rest, so a verifier reading a file broken on every one of
 * its 2 million lines holds 20 problems per code, not 2 million.
 * An item without a line sorts after every line. `items()` gives exactly what
 * `capPerCode(stableSortByLine(all), max, rest)` gives.
 */
export class LowestLinesPerCode<T extends { code: string; line?: number }> {
  readonly #kept = new Map<T['code'], Array<{ item: T; at: number; order: number }>>();
  readonly #counts = new Map<T['code'], number>();
  #pushed = 0;

  constructor(
    private readonly max: number,
    private readonly rest: (code: T['code'], more: number) => T,
  ) {}

  /** How many items were pushed in all. */
  get size(): number {
    return this.#pushed;
  }

  push(...items: T[]): number {
    for (const item of items) this.#add(item);
    return this.#pushed;
  }

  #add(item: T): void {
    const entry = { item, at: item.line ?? Number.MAX_SAFE_INTEGER, order: this.#pushed++ };
    this.#counts.set(item.code, (this.#counts.get(item.code) ?? 0) + 1);
    const kept = this.#kept.get(item.code) ?? [];
    this.#kept.set(item.code, kept);
    if (kept.length === this.max && entry.at >= kept[kept.length - 1]!.at) return;
    // After every kept item of the same line: a later push of one line sorts after an earlier one.
    let i = kept.length;
    while (i > 0 && kept[i - 1]!.at > entry.at) i--;
    kept.splice(i, 0, entry);
    if (kept.length > this.max) kept.pop();
  }

  items(): T[] {
    const kept = [...this.#kept.values()].flat().sort((a, b) => a.at - b.at || a.order - b.order);
    const out = kept.map((k) => k.item);
    const codes = [...new Set(out.map((item) => item.code))];
    for (const code of codes) {
      const more = (this.#counts.get(code) ?? 0) - this.max;
      if (more > 0) out.push(this.rest(code, more));
    }
    return out;
  }
}
