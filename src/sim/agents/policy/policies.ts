/**
 * @module
 * Rule-based agents (consensus.md §7): honest policies and Byzantine strategies with
 * no model, for baselines, tests and million-step sweeps. Each is a pure function of
 * what the agent may see (the last rounds' public values, its own value) and its own
 * random stream. The one-sentence descriptions are the documentation users see.
 */
import type { Rng } from '../../../core/rng.js';
import type { GameRules, Proposal, VoteChoice } from '../../types.js';
import { supermajorityOn, tally, unanimous } from './tally.js';

export interface PolicyContext {
  round: number;
  rules: GameRules;
  /** Public values of the last round (undefined in round 1). */
  last: readonly Proposal[] | undefined;
  /** Public values of the round before the last (undefined before round 3). */
  previous: readonly Proposal[] | undefined;
  own: Proposal | null;
  initial: number | null;
  rng: Rng;
}

/** What a vote looks at; an engine `VoteView` is one, so it is passed as it is. */
export interface VoteContext {
  readonly rules: GameRules;
  readonly round: number;
  /** This round's public values, in agent-id order. */
  readonly proposalValues: readonly Proposal[];
  /** The voter's own value this round. */
  readonly currentValue: Proposal | null;
}

export interface HonestPolicy {
  readonly description: string;
  propose(ctx: PolicyContext): number;
}

export interface ByzantineStrategy {
  readonly description: string;
  propose(ctx: PolicyContext): Proposal;
  vote(ctx: VoteContext): VoteChoice;
}

/**
 * Honest vote (consensus.md §3): with `none_exist`, stop when every proposal is the
 * same; with `may_exist`, stop when the agent's own value is proposed by at least
 * 2N/3 of all agents (it cannot tell honest peers apart, so a supermajority stands in
 * for "all honest agents agree").
 */
export function honestVote(ctx: VoteContext): VoteChoice {
  if (ctx.rules.awareness === 'none_exist') return unanimous(ctx.proposalValues) ? 'stop' : 'continue';
  return supermajorityOn(ctx.proposalValues, ctx.currentValue, ctx.rules.totalAgents) ? 'stop' : 'continue';
}

const _ownNumber = (ctx: PolicyContext): number =>
  typeof ctx.own === 'number' ? ctx.own : (ctx.initial ?? ctx.rules.range[0]);

export const HONEST_POLICIES: Readonly<Record<string, HonestPolicy>> = {
  plurality: {
    description:
      'Adopts the most common value of the last round (ties go to the smallest), so honest agents converge in one step.',
    propose: (ctx) => {
      const last = ctx.last;
      return last ? (tally(last).plurality ?? _ownNumber(ctx)) : _ownNumber(ctx);
    },
  },
  median: {
    description:
      "Adopts the lower median of the last round's values, which a minority of outliers cannot drag outside the honest range.",
    propose: (ctx) => {
      const last = ctx.last;
      return last ? (tally(last).median ?? _ownNumber(ctx)) : _ownNumber(ctx);
    },
  },
  'follow-recent': {
    description:
      'Adopts the value of the lowest-numbered peer that changed its proposal in the last round, or the plurality when nobody changed.',
    propose: (ctx) => {
      if (!ctx.last) return _ownNumber(ctx);
      if (ctx.previous) {
        for (let i = 0; i < ctx.last.length; i++) {
          const v = ctx.last[i];
          if (typeof v === 'number' && v !== ctx.previous[i]) return v;
        }
      }
      return tally(ctx.last).plurality ?? _ownNumber(ctx);
    },
  },
  stubborn: {
    description: 'Always proposes its own initial value and never moves, the worst case for liveness.',
    propose: (ctx) => ctx.initial ?? _ownNumber(ctx),
  },
};

const _alwaysContinue = (): VoteChoice => 'continue';
const _farthestEnd = (ctx: PolicyContext): number => {
  const [lo, hi] = ctx.rules.range;
  const centre = ctx.last ? tally(ctx.last).median : undefined;
  if (centre === undefined) return hi;
  return centre - lo >= hi - centre ? lo : hi;
};

export const BYZANTINE_STRATEGIES: Readonly<Record<string, ByzantineStrategy>> = {
  random: {
    description: 'Proposes a uniformly random value in range every round and always votes continue.',
    propose: (ctx) => ctx.rng.int(ctx.rules.range[0], ctx.rules.range[1]),
    vote: _alwaysContinue,
  },
  extreme: {
    description:
      "Proposes the end of the range farthest from the last round's median to drag averages away, and always votes continue.",
    propose: _farthestEnd,
    vote: _alwaysContinue,
  },
  split: {
    description:
      "Backs the last round's second most common value to keep a rival camp alive, and always votes continue.",
    propose: (ctx) => (ctx.last ? (tally(ctx.last).runnerUp ?? _farthestEnd(ctx)) : _farthestEnd(ctx)),
    vote: _alwaysContinue,
  },
  'mimic-defect': {
    description:
      'Copies the plurality value and votes like an honest agent until the last fifth of the rounds, then proposes the farthest extreme and votes continue.',
    propose: (ctx) => (_defecting(ctx.round, ctx.rules) ? _farthestEnd(ctx) : _blendIn(ctx)),
    vote: (ctx) => (_defecting(ctx.round, ctx.rules) ? 'continue' : honestVote(ctx)),
  },
  stall: {
    description: 'Blends in by proposing the plurality value but always votes continue, attacking liveness only.',
    propose: _blendIn,
    vote: _alwaysContinue,
  },
  abstain: {
    description:
      'Abstains from every proposal and every vote, the silent saboteur that still counts in the 2N/3 denominator.',
    propose: () => 'abstain',
    vote: () => 'abstain',
  },
};

/** The plurality value; in round 1, with nothing to copy, a random value in range. */
function _blendIn(ctx: PolicyContext): number {
  const plurality = ctx.last ? tally(ctx.last).plurality : undefined;
  return plurality ?? ctx.rng.int(ctx.rules.range[0], ctx.rules.range[1]);
}

function _defecting(round: number, rules: GameRules): boolean {
  return round > Math.ceil(rules.maxRounds * 0.8);
}
