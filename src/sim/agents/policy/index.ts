/**
 * @module
 * Rule-based agents behind the engine's `Agent` interface: `policy` in
 * `--agents policy`, with `--honest-policy` and `--byzantine-strategy`.
 */
import { WitnessError } from '../../../core/errors.js';
import type { AgentSeat } from '../../game.js';
import type { Agent, DecideView } from '../../types.js';
import { BYZANTINE_STRATEGIES, type ByzantineStrategy, HONEST_POLICIES, type HonestPolicy, honestVote, type PolicyContext } from './policies.js';

export { BYZANTINE_STRATEGIES, HONEST_POLICIES } from './policies.js';
export type { ByzantineStrategy, HonestPolicy, PolicyContext, VoteContext } from './policies.js';

export interface PolicyChoice {
  honestPolicy: string;
  byzantineStrategy: string;
}

export function honestPolicy(name: string): HonestPolicy {
  const policy = HONEST_POLICIES[name];
  if (!policy) throw new WitnessError('NOT_FOUND', `Unknown honest policy "${name}". Choose one of: ${Object.keys(HONEST_POLICIES).join(', ')}.`);
  return policy;
}

export function byzantineStrategy(name: string): ByzantineStrategy {
  const strategy = BYZANTINE_STRATEGIES[name];
  if (!strategy) throw new WitnessError('NOT_FOUND', `Unknown Byzantine strategy "${name}". Choose one of: ${Object.keys(BYZANTINE_STRATEGIES).join(', ')}.`);
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

/** Builds the rule-based agent for one seat. */
export function createPolicyAgent(seat: AgentSeat, choice: PolicyChoice): Agent {
  if (seat.role === 'honest') {
    const policy = honestPolicy(choice.honestPolicy);
    return {
      decide: (view) => ({ value: policy.propose(new _Context(view, seat)) }),
      vote: (view) => ({ decision: honestVote(view) }),
    };
  }
  const strategy = byzantineStrategy(choice.byzantineStrategy);
  return {
    decide: (view) => ({ value: strategy.propose(new _Context(view, seat)) }),
    vote: (view) => ({ decision: strategy.vote(view) }),
  };
}
