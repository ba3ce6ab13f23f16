/**
 * @module
 * Rates as people read them: whole percentages, with as many decimals as it takes for
 * rounding not to hide a number. With 2,000 runs and none of them invalid the 95% upper
 * bound is 0.19%: shown as `0 (0–0.2)`, not `0 (0–0)`, and one run in 2,000 is not `0`.
 */

export interface RateLike {
  rate: number;
  ci: { low: number; high: number };
}

/** Decimals needed for the triple (in %) to show what it is, at most 3. */
function _decimals(values: readonly number[]): number {
  const [low, , high] = values as [number, number, number];
  for (let d = 0; d < 3; d++) {
    const shown = values.map((x) => Number(x.toFixed(d)));
    const hides = values.some((x, i) => (x > 0 && shown[i] === 0) || (x < 100 && shown[i] === 100));
    if (!hides && !(low < high && shown[0] === shown[2])) return d;
  }
  return 3;
}

/** One percentage: exact 0 and 100 without decimals, anything else with `decimals`. */
function _percent(x: number, decimals: number): string {
  return x === 0 || x === 100 ? String(x) : x.toFixed(decimals);
}

/** `40 (17–69)`: rate and 95% interval in %, without the % sign (the table says so once). */
export function formatRate(r: RateLike): string {
  const values = [r.ci.low * 100, r.rate * 100, r.ci.high * 100];
  const d = _decimals(values);
  const [low, rate, high] = values.map((x) => _percent(x, d)) as [string, string, string];
  return `${rate} (${low}–${high})`;
}

/** A single percentage with the % sign, with a decimal where rounding would hide it. */
export function formatPercent(x: number): string {
  const v = x * 100;
  return `${_percent(v, _decimals([v, v, v]))}%`;
}
