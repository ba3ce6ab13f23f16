/**
 * @module
 * Rule-based agents behind the engine's `Agent` interface: `policy` in
 * `--agents policy`, with `--honest-policy` and `--byzantine-strategy`.
 */
import { WitnessError } from '../../../core/errors.js';
import type { AgentSeat } from '../../game.js';
import type { Agent, DecideView } from '../../types.js';
import {
  BYZANTINE_STRATEGIES,
  type ByzantineStrategy,
  HONEST_POLICIES,
  type HonestPolicy,
  honestVote,
  type PolicyContext,
} from './policies.js';

export { BYZANTINE_STRATEGIES, HONEST_POLICIES } from './policies.js';
export type { ByzantineStrategy, HonestPolicy, PolicyContext, VoteContext } from './policies.js';

export interface PolicyChoice {
  honestPolicy: string;
  byzantineStrategy: string;
}

export function honestPolicy(name: string): HonestPolicy {
  const policy = HONEST_POLICIES[name];
  if (!policy)
    throw new WitnessError(
      'NOT_FOUND',
      `Unknown honest policy "${name}". Choose one of: ${Object.keys(HONEST_POLICIES).join(', ')}.`,
    );
  return policy;
}

export function byzantineStrategy(name: string): ByzantineStrategy {
  const strategy = BYZANTINE_STRATEGIES[name];
  if (!strategy)
    throw new WitnessError(
      'NOT_FOUND',
      `Unknown Byzantine strategy "${name}". Choose one of: ${Object.keys(BYZANTINE_STRATEGIES).join(', ')}.`,
    );
  return strategy;
}

/**
 * A policy's view of a decision. A class with `rng` on its prototype, so the agent's
 * random stream is derived only by policies that draw from it.
 */
class _Context implements PolicyContext {
  readonly round: number;
  readonly rules: PolicyContext['rules'];
  readonly last: PolicyContext['last'];
  readonly previous: PolicyContext['previous'];
  readonly own: PolicyContext['own'];
  readonly initial: PolicyContext['initial'];
  private readonly seat: AgentSeat;

  constructor(view: DecideView, seat: AgentSeat) {
    const h = view.history;
    this.round = view.round;
    this.rules = view.rules;
    this.last = h[h.length - 1]?.values;
    this.previous = h[h.length - 2]?.values;
    this.own = view.currentValue;
    this.initial = view.initialValue;
    this.seat = seat;
  }

  get rng() {
    return this.seat.rng;
  }
}

/**
 * Builds the rule-based agent for one seat. When the confidence rule is on, honest
 * agents report the share of the last round that proposed their value (honest doubt);
 * Byzantine agents always claim full confidence (the confident liar).
 */
export function createPolicyAgent(seat: AgentSeat, choice: PolicyChoice): Agent {
  const withConfidence = seat.rules.confidence === true;
  if (seat.role === 'honest') {
    const policy = honestPolicy(choice.honestPolicy);
    return {
      decide: (view) => {
        const value = policy.propose(new _Context(view, seat));
        return withConfidence ? { value, confidence: _support(view, value) } : { value };
      },
      vote: (view) => ({ decision: honestVote(view) }),
    };
  }
  const strategy = byzantineStrategy(choice.byzantineStrategy);
  return {
    decide: (view) =>
      withConfidence
        ? { value: strategy.propose(new _Context(view, seat)), confidence: 1 }
        : { value: strategy.propose(new _Context(view, seat)) },
    vote: (view) => ({ decision: strategy.vote(view) }),
  };
}

/** Share of the last round's proposals equal to `value` (0.5 in round 1, when nothing is known). */
function _support(view: DecideView, value: number): number {
  const last = view.history[view.history.length - 1]?.values;
  if (!last || last.length === 0) return 0.5;
  let same = 0;
  for (const v of last) if (v === value) same++;
  return same / last.length;
}
