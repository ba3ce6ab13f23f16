/**
 * @module
 * The stop rule and the four outcomes (consensus.md §1 and §4, ref `check_consensus`).
 */
import type { Outcome } from './types.js';

/**
 * True when stop votes reach 2N/3 of ALL agents (Byzantine ones and abstainers stay
 * in the denominator). Integer arithmetic: 3·stop ≥ 2·N, so N = 9 stops at 6 and
 * N = 10 needs 7.
 */
export function shouldStop(stopVotes: number, totalAgents: number): boolean {
  return 3 * stopVotes >= 2 * totalAgents;
}

export interface OutcomeInput {
  /** Honest agents' initial values. */
  honestInitial: readonly number[];
  /** Honest agents' final values. */
  honestFinal: readonly number[];
  stoppedByVote: boolean;
}

/**
 * `timeout` when no stop vote passed (even if honest agents agree); else `none` when
 * honest final values differ; else `valid` when the common value is some honest
 * agent's initial value, `invalid` otherwise.
 */
export function classifyOutcome({ honestInitial, honestFinal, stoppedByVote }: OutcomeInput): Outcome {
  if (!stoppedByVote) return 'timeout';
  const first = honestFinal[0];
  if (first === undefined || honestFinal.some((v) => v !== first)) return 'none';
  return honestInitial.includes(first) ? 'valid' : 'invalid';
}
