/**
 * @module
 * The runs a results file already holds, against the plan: one bit per planned `seq`
 * (a shard's seqs are a stride of them), so resuming 2 million runs holds 250 KB of
 * bits, not 2 million ids. Filled by the plain resume (sink.ts) and
 * the signed one (transcript/writer.ts) as they read the file, with the outcomes of the
 * runs marked, so a resumed sweep's tally counts what its table shows (#18 item 16).
 */
import type { Outcome } from '../types.js';
import type { Plan, PlannedRun } from './plan.js';

export class FinishedRuns {
  readonly #bits: Uint8Array;
  readonly #end: number;
  #count = 0;
  /** Lines whose run is not this experiment's (another grid, seed or budget, or an older version's run order). */
  foreign = 0;
  /** Lines of this experiment's runs that another shard plays. */
  otherShard = 0;
  /** Lines of this experiment's runs past its `runs` (the file was written with a larger --runs); `lastBeyond`: the largest such seq. */
  beyond = 0;
  lastBeyond = -1;
  /** Lines whose id is one of this plan's runs but whose seed is not (written by a version that seeded runs otherwise). */
  staleSeed = 0;
  /** Outcomes of the marked runs. */
  readonly outcomes: Record<Outcome, number> = { valid: 0, invalid: 0, none: 0, timeout: 0, escalated: 0 };

  constructor(plan: Pick<Plan, 'end'>) {
    this.#end = plan.end;
    this.#bits = new Uint8Array((plan.end + 7) >> 3);
  }

  /** Planned runs marked. */
  get count(): number {
    return this.#count;
  }

  has(run: Pick<PlannedRun, 'seq'>): boolean {
    return this.#isSet(run.seq);
  }

  /**
   * Marks the planned run at `seq` (the caller has checked the line is that run) and
   * counts its outcome; false when it was marked already (a repeated line counts once).
   */
  mark(seq: number, outcome: unknown): boolean {
    if (!Number.isInteger(seq) || seq < 0 || seq >= this.#end || this.#isSet(seq)) return false;
    this.#bits[seq >> 3]! |= 1 << (seq & 7);
    this.#count++;
    if (typeof outcome === 'string' && Object.hasOwn(this.outcomes, outcome)) this.outcomes[outcome as Outcome]++;
    return true;
  }

  #isSet(seq: number): boolean {
    return seq >= 0 && seq < this.#end && (this.#bits[seq >> 3]! & (1 << (seq & 7))) !== 0;
  }
}
