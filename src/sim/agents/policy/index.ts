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
 * A policy's view of a decision, read from the engine's view as the policy asks. One per
 * agent, pointed at each new view (`at`): policies are pure functions of it and keep
 * nothing, so a sweep builds no context per decision. `rng` is a getter, so the agent's
 * random stream is derived only by policies that draw from it.
 */
class _Context implements PolicyContext {
  private view!: DecideView;
  constructor(private readonly seat: AgentSeat) {}

  at(view: DecideView): this {
    this.view = view;
    return this;
  }

  get round() {
    return this.view.round;
  }
  get rules() {
    return this.view.rules;
  }
  get last() {
    const h = this.view.history;
    return h[h.length - 1]?.values;
  }
  get previous() {
    const h = this.view.history;
    return h[h.length - 2]?.values;
  }
  get own() {
    return this.view.currentValue;
  }
  get initial() {
    return this.view.initialValue;
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
  const context = new _Context(seat);
  if (seat.role === 'honest') {
    const policy = honestPolicy(choice.honestPolicy);
    return {
      decide: (view) => {
        const value = policy.propose(context.at(view));
        return withConfidence ? { value, confidence: _support(view, value) } : { value };
      },
      vote: (view) => ({ decision: honestVote(view) }),
    };
  }
  const strategy = byzantineStrategy(choice.byzantineStrategy);
  return {
    decide: (view) =>
      withConfidence
        ? { value: strategy.propose(context.at(view)), confidence: 1 }
        : { value: strategy.propose(context.at(view)) },
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
