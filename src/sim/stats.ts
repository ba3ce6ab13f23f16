/**
 * @module
 * Statistics of a sweep (consensus.md §4): per cell, each outcome's count and rate
 * with a Wilson score interval, and rounds (mean with a normal-approximation interval,
 * median).
 */
import type { Outcome } from './types.js';

export interface Interval {
  low: number;
  high: number;
}

/**
 * Wilson score interval for a binomial proportion (Wilson 1927). Unlike the normal
 * interval it stays inside [0, 1] and is informative at 0 or n successes.
 * @example wilsonInterval(0, 25) // { low: 0, high: 0.133… }
 */
export function wilsonInterval(successes: number, trials: number, confidence = 0.95): Interval {
  if (!Number.isInteger(successes) || !Number.isInteger(trials) || successes < 0 || trials < 0 || successes > trials) {
    throw new RangeError(`wilsonInterval needs whole numbers 0 ≤ successes ≤ trials, got ${successes}/${trials}`);
  }
  if (!(confidence > 0 && confidence < 1)) throw new RangeError(`confidence must be in (0, 1), got ${confidence}`);
  if (trials === 0) return { low: 0, high: 1 };
  const z = normalQuantile(1 - (1 - confidence) / 2);
  const p = successes / trials;
  const z2n = (z * z) / trials;
  const centre = (p + z2n / 2) / (1 + z2n);
  const half = (z / (1 + z2n)) * Math.sqrt((p * (1 - p)) / trials + z2n / (4 * trials));
  // Clamp away floating-point dust so exact 0 and 1 stay exact.
  return { low: successes === 0 ? 0 : Math.max(0, centre - half), high: successes === trials ? 1 : Math.min(1, centre + half) };
}

/** Inverse of the standard normal CDF (Acklam's rational approximation, |error| < 1.2e-9). */
export function normalQuantile(p: number): number {
  if (!(p > 0 && p < 1)) throw new RangeError(`normalQuantile needs 0 < p < 1, got ${p}`);
  const a = [-39.69683028665376, 220.9460984245205, -275.9285104469687, 138.357751867269, -30.66479806614716, 2.506628277459239];
  const b = [-54.47609879822406, 161.5858368580409, -155.6989798598866, 66.80131188771972, -13.28068155288572];
  const c = [-0.007784894002430293, -0.3223964580411365, -2.400758277161838, -2.549732539343734, 4.374664141464968, 2.938163982698783];
  const d = [0.007784695709041462, 0.3224671290700398, 2.445134137142996, 3.754408661907416];
  const tail = (q: number) =>
    (((((c[0]! * q + c[1]!) * q + c[2]!) * q + c[3]!) * q + c[4]!) * q + c[5]!) / ((((d[0]! * q + d[1]!) * q + d[2]!) * q + d[3]!) * q + 1);
  if (p < 0.02425) return tail(Math.sqrt(-2 * Math.log(p)));
  if (p > 1 - 0.02425) return -tail(Math.sqrt(-2 * Math.log(1 - p)));
  const q = p - 0.5;
  const r = q * q;
  return ((((((a[0]! * r + a[1]!) * r + a[2]!) * r + a[3]!) * r + a[4]!) * r + a[5]!) * q) / (((((b[0]! * r + b[1]!) * r + b[2]!) * r + b[3]!) * r + b[4]!) * r + 1);
}

export const OUTCOMES: readonly Outcome[] = ['valid', 'invalid', 'none', 'timeout', 'escalated'];

export interface RateSummary {
  count: number;
  rate: number;
  ci: Interval;
}

export interface CellSummary {
  cell: string;
  runs: number;
  honest: number;
  byzantine: number;
  outcomes: Record<Outcome, RateSummary>;
  rounds: { mean: number; ci: Interval; median: number };
  /** Mean agent decisions per run. */
  decisions: number;
  /** Runs whose honest agents agree on one of their initial values. */
  strictValid: RateSummary;
  /** Runs whose honest agents agree on a value within their initial range. */
  rangeValid: RateSummary;
}

export interface SummaryInput {
  cell: string;
  honest: number;
  byzantine: number;
  outcome: Outcome;
  rounds: number;
  decisions?: number;
  strict_valid?: boolean | null;
  range_valid?: boolean | null;
}

/** One summary per cell, cells in the order they first appear. */
export function summarizeCells(runs: readonly SummaryInput[], confidence = 0.95): CellSummary[] {
  const groups = new Map<string, SummaryInput[]>();
  for (const run of runs) {
    const group = groups.get(run.cell);
    if (group) group.push(run);
    else groups.set(run.cell, [run]);
  }
  return [...groups.entries()].map(([cell, group]) => _summarize(cell, group, confidence));
}

function _summarize(cell: string, group: SummaryInput[], confidence: number): CellSummary {
  const n = group.length;
  const outcomes = {} as Record<Outcome, RateSummary>;
  for (const outcome of OUTCOMES) {
    const count = group.filter((r) => r.outcome === outcome).length;
    outcomes[outcome] = { count, rate: count / n, ci: wilsonInterval(count, n, confidence) };
  }
  const rounds = group.map((r) => r.rounds).sort((a, b) => a - b);
  const mean = rounds.reduce((s, x) => s + x, 0) / n;
  const sd = n > 1 ? Math.sqrt(rounds.reduce((s, x) => s + (x - mean) ** 2, 0) / (n - 1)) : 0;
  const half = normalQuantile(1 - (1 - confidence) / 2) * (sd / Math.sqrt(n));
  const mid = n >> 1;
  const median = n % 2 ? rounds[mid]! : (rounds[mid - 1]! + rounds[mid]!) / 2;
  const first = group[0]!;
  const rate = (count: number): RateSummary => ({ count, rate: count / n, ci: wilsonInterval(count, n, confidence) });
  return {
    cell,
    runs: n,
    honest: first.honest,
    byzantine: first.byzantine,
    outcomes,
    rounds: { mean, ci: { low: mean - half, high: mean + half }, median },
    decisions: group.reduce((s, r) => s + (r.decisions ?? 0), 0) / n,
    strictValid: rate(group.filter((r) => r.strict_valid === true).length),
    rangeValid: rate(group.filter((r) => r.range_valid === true).length),
  };
}
