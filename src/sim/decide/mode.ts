/**
 * @module
 * Decision modes (consensus.md §8): who ends the game.
 * - `vote` — the paper: agents vote stop; 2N/3 stop votes end it.
 * - `rule:NAME` — agents discuss for `after` rounds (no votes), then the rule decides
 *   on that round's proposals and every honest agent adopts its value.
 * - `hybrid:NAME` — agents vote as in the paper; when the vote has not stopped the
 *   game by round `after`, the rule decides.
 * A circuit breaker (rounds, tokens, seconds) ends a game that runs over budget with
 * the outcome `escalated`: a human or a supervisor must decide, not the loop.
 */
import { WitnessError } from '../../core/errors.js';
import { RULE_NAMES, type RuleName } from './rules.js';

export type DecideMode = { kind: 'vote' } | { kind: 'rule' | 'hybrid'; rule: RuleName };

export interface Budget {
  /** Escalate after this many rounds without a decision (below the game's R). */
  rounds?: number;
  /** Escalate once agents have used this many model tokens. */
  tokens?: number;
  /** Escalate once the game has run this many seconds (wall clock). */
  seconds?: number;
}

export const DECIDE_SPEC_PATTERN = /^(vote|(rule|hybrid):([a-z-]+))$/;

/** Parses `vote`, `rule:NAME` or `hybrid:NAME`. */
export function parseDecideMode(text: string): DecideMode {
  const m = DECIDE_SPEC_PATTERN.exec(text);
  if (!m)
    throw new WitnessError(
      'INVALID_INPUT',
      `decide "${text}" is not vote, rule:NAME or hybrid:NAME (rules: ${RULE_NAMES.join(', ')}).`,
    );
  if (m[1] === 'vote') return { kind: 'vote' };
  const rule = m[3] as RuleName;
  if (!RULE_NAMES.includes(rule))
    throw new WitnessError(
      'INVALID_INPUT',
      `decide "${text}": unknown rule "${rule}"; choose one of: ${RULE_NAMES.join(', ')}.`,
    );
  return { kind: m[2] as 'rule' | 'hybrid', rule };
}

export function formatDecideMode(mode: DecideMode): string {
  return mode.kind === 'vote' ? 'vote' : `${mode.kind}:${mode.rule}`;
}
