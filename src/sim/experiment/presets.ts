/**
 * @module
 * Built-in experiments (consensus.md §9). `paper-benign` and `paper-byzantine` are the
 * grids of the ETH Zurich study, checked against the reference's run script
 * (`byzantine_consensus_game/run_batch.py`, commit 5b3d6f8 of
 * leorugli/byzantine-consensus-llm-agents): N ∈ {4, 8, 16} with b = 0, and 8 honest
 * plus b ∈ {1, 2, 3, 4}, 25 runs per cell (5 batches of 5), values 0..50. The models
 * are the paper's (Qwen3-8B and -14B; -14B for the Byzantine grid); they apply only
 * when model-backed agents play. R = 50, as the reference's later config.py sets for
 * its cluster experiments; that run script passed 15 (docs/llm.md).
 * `smoke` is a seconds-long sweep that still shows every kind of outcome.
 */
import { didYouMean } from '../../core/did-you-mean.js';
import { WitnessError } from '../../core/errors.js';
import type { ExperimentInput } from './schema.js';

export const PRESETS: Readonly<Record<string, ExperimentInput & { description: string }>> = {
  smoke: {
    name: 'smoke',
    description:
      'A quick look: 6 honest agents, with and without 2 vote-splitting Byzantine agents, cooperative and stubborn honest policies, 10 runs per cell.',
    seed: 1,
    runs: 10,
    grid: {
      honestPolicy: ['plurality', 'stubborn'],
      honest: 6,
      byzantine: [0, 2],
      byzantineStrategy: 'split',
      rounds: 20,
    },
  },
  'paper-benign': {
    name: 'paper-benign',
    description:
      "The study's benign grid: N ∈ {4, 8, 16}, no Byzantine agents, both awareness variants, 25 runs per cell; with model-backed agents, Qwen3-8B and Qwen3-14B.",
    seed: 1,
    runs: 25,
    grid: {
      honest: [4, 8, 16],
      byzantine: 0,
      awareness: ['may_exist', 'none_exist'],
      rounds: 50,
      model: ['Qwen/Qwen3-8B', 'Qwen/Qwen3-14B'],
    },
  },
  'paper-byzantine': {
    name: 'paper-byzantine',
    description:
      "The study's Byzantine grid: 8 honest agents plus b ∈ {1, 2, 3, 4} Byzantine agents, 25 runs per cell (the b = 0 baseline is paper-benign's N = 8 may_exist cell); with model-backed agents, Qwen3-14B.",
    seed: 1,
    runs: 25,
    grid: {
      honest: 8,
      byzantine: [1, 2, 3, 4],
      byzantineStrategy: 'split',
      awareness: 'may_exist',
      rounds: 50,
      model: 'Qwen/Qwen3-14B',
    },
  },
  remedy: {
    name: 'remedy',
    description:
      'Decision layers side by side: 7 agents (f = 2) under vote, each rule and hybrid, against every Byzantine strategy, b from 0 to f + 1 = 3, 25 runs.',
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
  if (!found)
    throw new WitnessError(
      'NOT_FOUND',
      `Unknown preset "${name}".${didYouMean(name, Object.keys(PRESETS))} Choose one of: ${Object.keys(PRESETS).join(', ')}.`,
    );
  return structuredClone(found);
}
