/**
 * @module
 * Rule-based agents behind the engine's `Agent` interface: `policy` in
 * `--agents policy`, with `--honest-policy` and `--byzantine-strategy`.
 */
import { WitnessError } from '../../../core/errors.js';
import type { AgentSeat } from '../../game.js';
import type { Agent, DecideView, Message, Proposal } from '../../types.js';
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

const _values = new WeakMap<readonly Message[], readonly Proposal[]>();

/** The public values of one round's messages, computed once per round for all agents. */
function _valuesOf(messages: readonly Message[] | undefined): readonly Proposal[] | undefined {
  if (!messages) return undefined;
  let values = _values.get(messages);
  if (!values) {
    values = messages.map((m) => m.value);
    _values.set(messages, values);
  }
  return values;
}

function _context(view: DecideView, seat: AgentSeat): PolicyContext {
  const h = view.history;
  return {
    round: view.round,
    rules: view.rules,
    last: _valuesOf(h[h.length - 1]?.messages),
    previous: _valuesOf(h[h.length - 2]?.messages),
    own: view.currentValue,
    initial: view.initialValue,
    rng: seat.rng,
  };
}

/** Builds the rule-based agent for one seat. */
export function createPolicyAgent(seat: AgentSeat, choice: PolicyChoice): Agent {
  if (seat.role === 'honest') {
    const policy = honestPolicy(choice.honestPolicy);
    return {
      decide: (view) => ({ value: policy.propose(_context(view, seat)) }),
      vote: (view) => ({ decision: honestVote({ rules: view.rules, round: view.round, proposals: _valuesOf(view.proposals) ?? [], own: view.currentValue }) }),
    };
  }
  const strategy = byzantineStrategy(choice.byzantineStrategy);
  return {
    decide: (view) => ({ value: strategy.propose(_context(view, seat)) }),
    vote: (view) => ({ decision: strategy.vote({ rules: view.rules, round: view.round, proposals: _valuesOf(view.proposals) ?? [], own: view.currentValue }) }),
  };
}
