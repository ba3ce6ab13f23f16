import { describe, expect, it } from 'vitest';
import { expandCells, planRuns } from '../../src/sim/experiment/plan.js';
import { preset } from '../../src/sim/experiment/presets.js';
import { parseExperiment } from '../../src/sim/experiment/schema.js';

// The grids of the reference's run script (run_batch.py, commit 5b3d6f8 of
// leorugli/byzantine-consensus-llm-agents): Q1 = N ∈ {4, 8, 16} at b = 0; Q2 = 8 honest
// + b ∈ {1, 2, 3, 4}; 5 batches × 5 runs = 25 per cell; values 0..50. The paper ran
// Qwen3-8B and Qwen3-14B, and Qwen3-14B against Byzantine agents (consensus.md §6).
const llm = (name: string) => parseExperiment({ ...preset(name), grid: { ...preset(name).grid, agents: 'llm' } });

describe('paper presets match the reference run script', () => {
  it('paper-benign: N ∈ {4, 8, 16}, b = 0, both awareness variants, 25 runs, values 0..50', () => {
    const cells = expandCells(parseExperiment(preset('paper-benign')));
    expect(cells.map((c) => [c.honest, c.byzantine, c.awareness])).toEqual([
      [4, 0, 'may_exist'],
      [4, 0, 'none_exist'],
      [8, 0, 'may_exist'],
      [8, 0, 'none_exist'],
      [16, 0, 'may_exist'],
      [16, 0, 'none_exist'],
    ]);
    expect(cells.every((c) => c.range[0] === 0 && c.range[1] === 50 && c.rounds === 50)).toBe(true);
    expect(planRuns(parseExperiment(preset('paper-benign')))).toHaveLength(6 * 25);
  });
  it("paper-benign with model-backed agents runs the paper's two models without --model", () => {
    const e = llm('paper-benign');
    expect([...new Set(expandCells(e).map((c) => c.model))]).toEqual(['Qwen/Qwen3-8B', 'Qwen/Qwen3-14B']);
    expect(planRuns(e)).toHaveLength(2 * 6 * 25);
  });
  it('paper-byzantine: 8 honest + b ∈ {1, 2, 3, 4}, may_exist, 25 runs, Qwen3-14B', () => {
    const cells = expandCells(parseExperiment(preset('paper-byzantine')));
    expect(cells.map((c) => [c.honest, c.byzantine, c.awareness])).toEqual(
      [1, 2, 3, 4].map((b) => [8, b, 'may_exist']),
    );
    expect(planRuns(parseExperiment(preset('paper-byzantine')))).toHaveLength(4 * 25);
    expect(expandCells(llm('paper-byzantine')).map((c) => c.model)).toEqual(Array(4).fill('Qwen/Qwen3-14B'));
  });
  it("the b = 0 baseline of paper-byzantine is paper-benign's N = 8 may_exist cell, run for run", () => {
    const withBaseline = parseExperiment({
      ...preset('paper-byzantine'),
      grid: { ...preset('paper-byzantine').grid, byzantine: [0, 1, 2, 3, 4] },
    });
    const baseline = planRuns(withBaseline)
      .filter((r) => r.cell.byzantine === 0)
      .map((r) => r.id);
    const benign = planRuns(parseExperiment(preset('paper-benign')))
      .filter((r) => r.cell.honest === 8 && r.cell.awareness === 'may_exist')
      .map((r) => r.id);
    expect(baseline).toHaveLength(25);
    expect(baseline).toEqual(benign);
  });
  it('model names do not split or rename rule-based cells', () => {
    for (const name of ['paper-benign', 'paper-byzantine']) {
      const e = parseExperiment(preset(name));
      const { model: _, ...grid } = preset(name).grid;
      expect(planRuns(e).map((r) => r.id)).toEqual(
        planRuns(parseExperiment({ ...preset(name), grid })).map((r) => r.id),
      );
    }
  });
});
