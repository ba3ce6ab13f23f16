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
  /** True when the game's decision procedure ended it: the stop vote, or a decision rule. */
  stoppedByVote: boolean;
  /** True when the circuit breaker ended the game over budget. */
  escalated?: boolean;
}

/**
 * `escalated` when the circuit breaker ended the game; `timeout` when nothing decided
 * (even if honest agents agree); else `none` when honest final values differ; else
 * `valid` when the common value is some honest agent's initial value, `invalid`
 * otherwise.
 */
export function classifyOutcome({ honestInitial, honestFinal, stoppedByVote, escalated }: OutcomeInput): Outcome {
  if (escalated) return 'escalated';
  if (!stoppedByVote) return 'timeout';
  const first = honestFinal[0];
  if (first === undefined || honestFinal.some((v) => v !== first)) return 'none';
  return honestInitial.includes(first) ? 'valid' : 'invalid';
}

/** Strict and range validity of the honest agents' common final value (null when they differ). */
export function validity(
  honestInitial: readonly number[],
  honestFinal: readonly number[],
): { strict: boolean | null; range: boolean | null } {
  const first = honestFinal[0];
  if (first === undefined || honestFinal.some((v) => v !== first)) return { strict: null, range: null };
  return {
    strict: honestInitial.includes(first),
    range: first >= Math.min(...honestInitial) && first <= Math.max(...honestInitial),
  };
}
