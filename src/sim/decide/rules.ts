/**
 * @module
 * Deterministic decision rules (consensus.md §8): functions of one round's broadcast
 * values. Every agent receives the same multiset (the network forbids
 * equivocation), and every rule ignores order, so all honest agents that apply a rule
 * reach the same value — agreement by construction, not by chat.
 *
 * Rules are configured for the largest fault count the group tolerates,
 * f = ⌊(N−1)/3⌋, because a deployment knows N but not how many peers are faulty.
 * Guarantees (checked by property tests in test/sim/decide.test.ts):
 * - `plurality`: the most common value if it has ≥ f+1 supporters (so at least one
 *   honest agent proposed it: strict validity while b ≤ f), else the median.
 * - `median`: the lower median; within the honest range while honest agents are a
 *   majority (b < N/2).
 * - `trimmed-mean` (MSR, Dolev et al. 1986): drop the f lowest and f highest values,
 *   round the mean of the rest; within the honest range while b ≤ f, i.e. N > 3b.
 * - `confidence`: the value with the largest summed self-reported confidence (ties to
 *   the smallest). No validity guarantee: a confident liar wins; it is here to measure
 *   exactly that.
 */
import type { Proposal } from '../types.js';

export const RULE_NAMES = ['plurality', 'median', 'trimmed-mean', 'confidence'] as const;
export type RuleName = (typeof RULE_NAMES)[number];

export const RULE_DESCRIPTIONS: Readonly<Record<RuleName, string>> = {
  plurality: 'The most common value when at least f+1 agents back it (so an honest agent does), otherwise the median.',
  median: 'The lower median of the proposals: inside the honest range while honest agents are a majority.',
  'trimmed-mean':
    'Drops the f lowest and f highest proposals and rounds the mean of the rest (MSR): inside the honest range while N > 3b.',
  confidence: 'The value with the largest total self-reported confidence: no guarantee, a confident liar wins.',
};

/** The largest number of Byzantine agents a group of N tolerates: ⌊(N−1)/3⌋. */
export function toleratedFaults(totalAgents: number): number {
  return Math.max(0, Math.floor((totalAgents - 1) / 3));
}

export interface RuleInput {
  values: readonly Proposal[];
  /** Self-reported confidence per agent (same order as `values`), for `confidence`. */
  confidences?: readonly (number | null | undefined)[];
  totalAgents: number;
}

/** The rule's decision, or undefined when no agent proposed a number. */
export function applyRule(rule: RuleName, input: RuleInput): number | undefined {
  const numbers = _numbers(input.values);
  if (numbers.length === 0) return undefined;
  const f = toleratedFaults(input.totalAgents);
  switch (rule) {
    case 'plurality':
      return _plurality(numbers, f);
    case 'median':
      return numbers[(numbers.length - 1) >> 1];
    case 'trimmed-mean':
      return _trimmedMean(numbers, f);
    case 'confidence':
      return _confidence(input);
  }
}

function _numbers(values: readonly Proposal[]): number[] {
  const out: number[] = [];
  for (const v of values) if (typeof v === 'number') out.push(v);
  return out.sort((a, b) => a - b);
}

function _plurality(sorted: number[], f: number): number {
  let best = sorted[0]!;
  let bestCount = 0;
  for (let i = 0; i < sorted.length; ) {
    let j = i;
    while (j < sorted.length && sorted[j] === sorted[i]) j++;
    if (j - i > bestCount) {
      best = sorted[i]!;
      bestCount = j - i;
    }
    i = j;
  }
  return bestCount >= f + 1 ? best : sorted[(sorted.length - 1) >> 1]!;
}

function _trimmedMean(sorted: number[], f: number): number {
  // Trim f from each end, but never everything: keep at least the middle value(s).
  const trim = Math.min(f, (sorted.length - 1) >> 1);
  const kept = sorted.slice(trim, sorted.length - trim);
  return Math.round(kept.reduce((s, x) => s + x, 0) / kept.length);
}

function _confidence({ values, confidences }: RuleInput): number | undefined {
  const weight = new Map<number, number>();
  values.forEach((v, i) => {
    if (typeof v !== 'number') return;
    const c = confidences?.[i];
    weight.set(v, (weight.get(v) ?? 0) + (typeof c === 'number' && c >= 0 && c <= 1 ? c : 1));
  });
  let best: number | undefined;
  let bestWeight = -1;
  for (const [v, w] of [...weight.entries()].sort((a, b) => a[0] - b[0])) {
    if (w > bestWeight) {
      best = v;
      bestWeight = w;
    }
  }
  return best;
}
