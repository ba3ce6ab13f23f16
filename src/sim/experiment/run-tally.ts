/**
 * @module
 * What a sweep's tables and progress read of one run: its record without the per-agent
 * and per-round detail, plus its convergence round. A worker thread computes it beside
 * the run's results line and sends it as six numbers, so the main thread of a parallel
 * sweep never rebuilds a record (parsing a line costs about a third of playing its
 * game); in one thread it is read off the record, the convergence round only if asked.
 */
import { convergenceRound, OUTCOMES, type TalliedRun } from '../stats.js';
import type { Outcome } from '../types.js';
import type { Cell, PlannedRun } from './plan.js';
import { plannedFields, type RunRecord } from './record.js';

/** A run as the outcome tables count it (stats.ts `CellSummaries`, paired.ts `PairedRuns`). */
export interface RunTally extends TalliedRun {
  readonly seq: number;
  readonly cell: string;
  readonly index: number;
  readonly seed: number;
  readonly config: Cell;
  readonly honest: number;
  readonly byzantine: number;
  readonly outcome: Outcome;
  readonly rounds: number;
  readonly decisions: number;
  readonly strict_valid: boolean | null;
  readonly range_valid: boolean | null;
}

/** The tally of a record: a view of it whose convergence round is computed on first read. */
export function tallyOfRecord(record: RunRecord): RunTally {
  return new _RecordTally(record);
}

class _RecordTally implements RunTally {
  #converged: number | null | undefined;
  constructor(private readonly record: RunRecord) {}
  get seq() {
    return this.record.seq;
  }
  get cell() {
    return this.record.cell;
  }
  get index() {
    return this.record.index;
  }
  get seed() {
    return this.record.seed;
  }
  get config() {
    return this.record.config;
  }
  get honest() {
    return this.record.honest;
  }
  get byzantine() {
    return this.record.byzantine;
  }
  get outcome() {
    return this.record.outcome;
  }
  get rounds() {
    return this.record.rounds;
  }
  get decisions() {
    return this.record.decisions;
  }
  get strict_valid() {
    return this.record.strict_valid;
  }
  get range_valid() {
    return this.record.range_valid;
  }
  get converged() {
    if (this.#converged === undefined) this.#converged = convergenceRound(this.record);
    return this.#converged;
  }
}

/** Numbers per run in a worker's reply. */
export const TALLY_WIDTH = 6;
/** null, false, true as numbers (a validity is null when the honest agents disagree). */
const _flag = (b: boolean | null) => (b === null ? -1 : b ? 1 : 0);
const _unflag = (x: number) => (x < 0 ? null : x === 1);

/** Writes the tally of `record` at run `k` of `out` (worker side). */
export function encodeTally(record: RunRecord, out: Float64Array, k: number): void {
  const at = k * TALLY_WIDTH;
  out[at] = OUTCOMES.indexOf(record.outcome);
  out[at + 1] = record.rounds;
  out[at + 2] = record.decisions;
  out[at + 3] = _flag(record.strict_valid);
  out[at + 4] = _flag(record.range_valid);
  out[at + 5] = convergenceRound(record) ?? -1;
}

/** The tally of run `k` of a reply, with what the plan says of the run (main side). */
export function decodeTally(run: PlannedRun, tallies: Float64Array, k: number): RunTally {
  const at = k * TALLY_WIDTH;
  const converged = tallies[at + 5] as number;
  return {
    seq: run.seq,
    ...plannedFields(run),
    outcome: OUTCOMES[tallies[at] as number] as Outcome,
    rounds: tallies[at + 1] as number,
    decisions: tallies[at + 2] as number,
    strict_valid: _unflag(tallies[at + 3] as number),
    range_valid: _unflag(tallies[at + 4] as number),
    converged: converged < 0 ? null : converged,
  };
}
