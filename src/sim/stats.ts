/**
 * @module
 * Statistics of a sweep (consensus.md §4): for a cell, or any group of runs pooled
 * across cells, each outcome's count and rate with a Wilson score interval, "no
 * consensus" (none + timeout), rounds (mean with a normal-approximation interval,
 * median) and convergence (the first round at which all honest agents hold the same
 * valid value, as the reference computes it). One accumulator computes all of it
 * from runs given one at a time, in memory bounded by the number of groups.
 */
import { type Interval, normalQuantile, wilsonInterval } from './interval.js';
import type { Outcome, Proposal, Role } from './types.js';

export { normalQuantile, wilsonInterval } from './interval.js';
export type { Interval } from './interval.js';

export const OUTCOMES: readonly Outcome[] = ['valid', 'invalid', 'none', 'timeout', 'escalated'];

export interface RateSummary {
  count: number;
  rate: number;
  ci: Interval;
}

/** Runs that converged (count, rate, Wilson interval) and the round at which they did. */
export interface ConvergenceSummary extends RateSummary {
  /** Mean of the first converged round over the runs that converged; null when none did. */
  mean_round: number | null;
  median_round: number | null;
  /**
   * Mean of the first converged round over the valid runs only: what the reference's
   * own summaries average (Q2_analysis.json gives it beside `valid_runs_count`).
   */
  valid_mean_round: number | null;
}

/** The summary of a set of runs. Multi-word keys are snake_case, like the results file: it is printed as JSON. */
export interface RunsSummary {
  runs: number;
  /** h and b when every run has the same; null when the pooled runs differ. */
  honest: number | null;
  byzantine: number | null;
  outcomes: Record<Outcome, RateSummary>;
  /** The paper's "no consensus": none + timeout. */
  no_consensus: RateSummary;
  rounds: { mean: number; ci: Interval; median: number };
  convergence: ConvergenceSummary;
  /** Mean agent decisions per run. */
  decisions: number;
  /** Runs whose honest agents agree on one of their initial values. */
  strict_valid: RateSummary;
  /** Runs whose honest agents agree on a value within their initial range. */
  range_valid: RateSummary;
}

export interface CellSummary extends RunsSummary {
  cell: string;
}

/** What convergence is computed from: roles, honest initial values and each round's proposals. */
export interface ConvergenceInput {
  roles: readonly Role[];
  initial: Readonly<Record<string, number>>;
  trajectory: readonly { round: number; values: readonly Proposal[] }[];
}

/** What a summary reads of a run besides the rounds its convergence is computed from. */
export interface RunScalars {
  honest: number;
  byzantine: number;
  outcome: Outcome;
  rounds: number;
  decisions?: number;
  strict_valid?: boolean | null;
  range_valid?: boolean | null;
}

export interface SummaryInput extends RunScalars, ConvergenceInput {}

/**
 * A run whose convergence round (`convergenceRound`) is known already: computed where
 * the run was played, so a sweep on worker threads hands its tables a few numbers per
 * run instead of the run's trajectory.
 */
export interface TalliedRun extends RunScalars {
  readonly converged: number | null;
}

/**
 * The first round at which every honest agent holds the same value and that value is
 * one of the honest agents' initial values; null if no round did. This is the
 * reference's `convergence_speed` (byzantine_consensus.py `get_statistics`: the first
 * round whose `check_consensus` holds): Byzantine values are left out, an honest agent
 * without a value is left out (the reference skips `None`), agreement on a value no
 * honest agent started with does not count, and a run that agrees and then drifts
 * apart again keeps its first round.
 */
export function convergenceRound(run: ConvergenceInput): number | null {
  const { roles } = run;
  // Read only once some round agrees: a sweep tallies every run, and most agree late or never.
  let valid: number[] | undefined;
  for (const row of run.trajectory) {
    const { values } = row;
    let agreed: number | undefined;
    let unanimous = true;
    for (let i = 0; i < roles.length; i++) {
      const value = values[i];
      if (roles[i] !== 'honest' || typeof value !== 'number') continue;
      if (agreed === undefined) agreed = value;
      else if (value !== agreed) {
        unanimous = false;
        break;
      }
    }
    if (!unanimous || agreed === undefined) continue;
    valid ??= Object.values(run.initial);
    if (valid.includes(agreed)) return row.round;
  }
  return null;
}

/** Counts of small whole numbers (rounds): exact mean, spread and median in memory bounded by their range. */
class _Histogram {
  readonly counts = new Map<number, number>();
  n = 0;
  sum = 0;

  add(x: number): void {
    this.counts.set(x, (this.counts.get(x) ?? 0) + 1);
    this.n++;
    this.sum += x;
  }

  mean(): number {
    return this.sum / this.n;
  }

  sd(): number {
    if (this.n < 2) return 0;
    const mean = this.mean();
    let squares = 0;
    for (const [x, c] of this.counts) squares += c * (x - mean) ** 2;
    return Math.sqrt(squares / (this.n - 1));
  }

  median(): number {
    const sorted = [...this.counts.entries()].sort((a, b) => a[0] - b[0]);
    const at = (k: number) => {
      let seen = 0;
      for (const [x, c] of sorted) {
        seen += c;
        if (seen > k) return x;
      }
      throw new RangeError('median of an empty histogram');
    };
    const mid = this.n >> 1;
    return this.n % 2 ? at(mid) : (at(mid - 1) + at(mid)) / 2;
  }
}

/**
 * Summarises runs added one at a time: the one summary for cells and for groups
 * pooled across cells.
 * @example const acc = new SummaryAccumulator(); for (const r of records) acc.add(r); acc.finish()
 */
export class SummaryAccumulator {
  private readonly _outcomes = Object.fromEntries(OUTCOMES.map((o) => [o, 0])) as Record<Outcome, number>;
  private readonly _rounds = new _Histogram();
  private readonly _converged = new _Histogram();
  private readonly _convergedValid = new _Histogram();
  private _decisions = 0;
  private _strict = 0;
  private _range = 0;
  private _honest: number | null | undefined;
  private _byzantine: number | null | undefined;

  add(run: SummaryInput | TalliedRun): void {
    this._outcomes[run.outcome]++;
    this._rounds.add(run.rounds);
    const converged = 'converged' in run ? run.converged : convergenceRound(run);
    if (converged !== null) this._converged.add(converged);
    if (converged !== null && run.outcome === 'valid') this._convergedValid.add(converged);
    this._decisions += run.decisions ?? 0;
    if (run.strict_valid === true) this._strict++;
    if (run.range_valid === true) this._range++;
    this._honest = this._honest === undefined || this._honest === run.honest ? run.honest : null;
    this._byzantine = this._byzantine === undefined || this._byzantine === run.byzantine ? run.byzantine : null;
  }

  get runs(): number {
    return this._rounds.n;
  }

  finish(confidence = 0.95): RunsSummary {
    const n = this.runs;
    if (n === 0) throw new RangeError('no runs to summarise');
    const rate = (count: number): RateSummary => ({ count, rate: count / n, ci: wilsonInterval(count, n, confidence) });
    const outcomes = Object.fromEntries(OUTCOMES.map((o) => [o, rate(this._outcomes[o])])) as Record<
      Outcome,
      RateSummary
    >;
    const mean = this._rounds.mean();
    const half = normalQuantile(1 - (1 - confidence) / 2) * (this._rounds.sd() / Math.sqrt(n));
    const converged = this._converged.n;
    return {
      runs: n,
      honest: this._honest ?? null,
      byzantine: this._byzantine ?? null,
      outcomes,
      no_consensus: rate(this._outcomes.none + this._outcomes.timeout),
      rounds: { mean, ci: { low: mean - half, high: mean + half }, median: this._rounds.median() },
      convergence: {
        ...rate(converged),
        mean_round: converged ? this._converged.mean() : null,
        median_round: converged ? this._converged.median() : null,
        valid_mean_round: this._convergedValid.n ? this._convergedValid.mean() : null,
      },
      decisions: this._decisions / n,
      strict_valid: rate(this._strict),
      range_valid: rate(this._range),
    };
  }
}

/** Runs grouped by a key, added one at a time (a results file can be streamed through it). */
export class GroupedSummaries<T extends SummaryInput | TalliedRun> {
  private readonly _groups = new Map<string, SummaryAccumulator>();

  constructor(private readonly _keyOf: (run: T) => string) {}

  add(run: T): void {
    const key = this._keyOf(run);
    let acc = this._groups.get(key);
    if (!acc) {
      acc = new SummaryAccumulator();
      this._groups.set(key, acc);
    }
    acc.add(run);
  }

  /** One summary per key, in the order the keys first appeared. */
  finish(confidence = 0.95): Map<string, RunsSummary> {
    return new Map([...this._groups].map(([key, acc]) => [key, acc.finish(confidence)]));
  }
}

/** Summaries of runs grouped by a key, groups in the order they first appear. */
export function summarizeGroups<T extends SummaryInput>(
  runs: Iterable<T>,
  keyOf: (run: T) => string,
  confidence = 0.95,
): Map<string, RunsSummary> {
  const groups = new GroupedSummaries(keyOf);
  for (const run of runs) groups.add(run);
  return groups.finish(confidence);
}

/** One summary per cell of runs added one at a time, cells in the order they first appear (a sweep's table, tallied as it runs). */
export class CellSummaries extends GroupedSummaries<(SummaryInput | TalliedRun) & { cell: string }> {
  constructor() {
    super((r) => r.cell);
  }

  cells(confidence = 0.95): CellSummary[] {
    return [...this.finish(confidence)].map(([cell, summary]) => ({ cell, ...summary }));
  }
}

/** One summary per cell, cells in the order they first appear. */
export function summarizeCells(runs: Iterable<SummaryInput & { cell: string }>, confidence = 0.95): CellSummary[] {
  const cells = new CellSummaries();
  for (const run of runs) cells.add(run);
  return cells.cells(confidence);
}
