/**
 * @module
 * Counting helpers the rule-based agents share. Results are cached per round's
 * (frozen) value list, so N agents reading the same round count it once.
 */
import type { Proposal } from '../../types.js';

export interface Tally {
  /** The most common numeric value (ties → the smallest), or undefined if none. */
  plurality: number | undefined;
  pluralityCount: number;
  /** The second most common value (ties → the largest), or undefined. */
  runnerUp: number | undefined;
  /** Lower median of the numeric values, or undefined if none. */
  median: number | undefined;
  /** Numeric values sorted ascending. */
  sorted: readonly number[];
}

const _cache = new WeakMap<readonly Proposal[], Tally>();

export function tally(values: readonly Proposal[]): Tally {
  let t = _cache.get(values);
  if (!t) {
    t = _compute(values);
    _cache.set(values, t);
  }
  return t;
}

function _compute(values: readonly Proposal[]): Tally {
  const sorted: number[] = [];
  for (const v of values) if (v !== 'abstain') sorted.push(v);
  sorted.sort((a, b) => a - b);
  let plurality: number | undefined;
  let pluralityCount = 0;
  let runnerUp: number | undefined;
  let runnerUpCount = 0;
  // Runs of equal values in sorted order; strict > keeps the smallest on ties.
  for (let i = 0; i < sorted.length; ) {
    let j = i;
    while (j < sorted.length && sorted[j] === sorted[i]) j++;
    const value = sorted[i] as number;
    const count = j - i;
    if (count > pluralityCount) {
      runnerUp = plurality;
      runnerUpCount = pluralityCount;
      plurality = value;
      pluralityCount = count;
    } else if (count >= runnerUpCount) {
      runnerUp = value;
      runnerUpCount = count;
    }
    i = j;
  }
  const median = sorted.length ? sorted[(sorted.length - 1) >> 1] : undefined;
  return { plurality, pluralityCount, runnerUp, median, sorted };
}

/** True when at least 2N/3 of all agents proposed `value` this round. */
export function supermajorityOn(values: readonly Proposal[], value: Proposal | null, totalAgents: number): boolean {
  if (typeof value !== 'number') return false;
  let c = 0;
  for (const v of values) if (v === value) c++;
  return 3 * c >= 2 * totalAgents;
}

/** True when every agent proposed the same number this round. */
export function unanimous(values: readonly Proposal[]): boolean {
  const first = values[0];
  if (typeof first !== 'number') return false;
  for (const v of values) if (v !== first) return false;
  return true;
}
