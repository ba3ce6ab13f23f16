/**
 * @module
 * Built-in experiments (consensus.md §9). `paper-benign` and `paper-byzantine` are the
 * grids of the ETH Zurich study (25 runs per cell, R = 50, values 0..50); `smoke` is a
 * seconds-long sweep that still shows every kind of outcome.
 */
import { WitnessError } from '../../core/errors.js';
import type { ExperimentInput } from './schema.js';

export const PRESETS: Readonly<Record<string, ExperimentInput & { description: string }>> = {
  smoke: {
    name: 'smoke',
    description: 'A quick look: 6 honest agents, with and without 2 vote-splitting Byzantine agents, cooperative and stubborn honest policies, 10 runs per cell.',
    seed: 1,
    runs: 10,
    grid: { honestPolicy: ['plurality', 'stubborn'], honest: 6, byzantine: [0, 2], byzantineStrategy: 'split', rounds: 20 },
  },
  'paper-benign': {
    name: 'paper-benign',
    description: 'The study\'s benign grid: N ∈ {4, 8, 16}, no Byzantine agents, both awareness variants, 25 runs per cell.',
    seed: 1,
    runs: 25,
    grid: { honest: [4, 8, 16], byzantine: 0, awareness: ['may_exist', 'none_exist'], rounds: 50 },
  },
  'paper-byzantine': {
    name: 'paper-byzantine',
    description: 'The study\'s Byzantine grid: 8 honest agents plus b ∈ {0, 1, 2, 3, 4} Byzantine agents, 25 runs per cell.',
    seed: 1,
    runs: 25,
    grid: { honest: 8, byzantine: [0, 1, 2, 3, 4], byzantineStrategy: 'split', awareness: 'may_exist', rounds: 50 },
  },
  remedy: {
    name: 'remedy',
    description: 'Decision layers side by side: 7 agents (f = 2) under vote, each rule and hybrid, against every Byzantine strategy, b from 0 to f + 1 = 3, 25 runs.',
    seed: 1,
    runs: 25,
    budget: { rounds: 30 },
    grid: {
      total: 7,
      byzantine: [0, 1, 2, 3],
      byzantineStrategy: ['random', 'extreme', 'split', 'mimic-defect', 'stall', 'abstain'],
      honestPolicy: 'plurality',
      decide: ['vote', 'rule:plurality', 'rule:median', 'rule:trimmed-mean', 'rule:confidence', 'hybrid:trimmed-mean'],
      after: 1,
      rounds: 50,
    },
  },
};

export function preset(name: string): ExperimentInput {
  const found = PRESETS[name];
  if (!found) throw new WitnessError('NOT_FOUND', `Unknown preset "${name}". Choose one of: ${Object.keys(PRESETS).join(', ')}.`);
  return structuredClone(found);
}
