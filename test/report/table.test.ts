import { describe, expect, it } from 'vitest';
import { formatPercent, formatRate } from '../../src/report/format.js';
import { shortLabels } from '../../src/report/labels.js';
import { renderOutcomeTable } from '../../src/report/table.js';
import { cellKey, expandCells } from '../../src/sim/experiment/plan.js';
import { PRESETS, preset } from '../../src/sim/experiment/presets.js';
import { parseExperiment } from '../../src/sim/experiment/schema.js';
import { type CellSummary, type RateSummary, wilsonInterval } from '../../src/sim/stats.js';

const rate = (count: number, runs: number): RateSummary => ({
  count,
  rate: count / runs,
  ci: wilsonInterval(count, runs),
});

/** A cell summary whose every rate is `count` of `runs`: the widest strings a column can hold. */
function cellOf(cell: string, runs: number, count: number): CellSummary {
  const r = rate(count, runs);
  return {
    cell,
    runs,
    honest: null,
    byzantine: null,
    outcomes: { valid: r, invalid: r, none: r, timeout: r, escalated: r },
    no_consensus: r,
    rounds: { mean: 50, ci: { low: 50, high: 50 }, median: 50 },
    convergence: { ...r, mean_round: 12.5, median_round: 12, valid_mean_round: 12.5 },
    decisions: 0,
    strict_valid: r,
    range_valid: r,
  };
}

const width = (text: string) => Math.max(...text.split('\n').map((l) => l.length));

describe('rates in terminal tables', () => {
  it('are whole percentages when rounding hides nothing', () => {
    expect(formatRate(rate(4, 10))).toBe('40 (17–69)');
    expect(formatRate(rate(10, 10))).toBe('100 (72–100)');
    expect(formatRate(rate(0, 25))).toBe('0 (0–13)');
  });
  it('show a decimal where rounding would hide the interval: 0 of 2,000 runs is not 0 (0–0)', () => {
    expect(formatRate(rate(0, 2000))).toBe('0 (0–0.2)');
    expect(formatRate(rate(2000, 2000))).toBe('100 (99.8–100)');
  });
  it('never show a run that happened as 0, nor a run that failed as 100', () => {
    const one = formatRate(rate(1, 2000));
    expect(one).not.toMatch(/^0 /);
    expect(one).toBe('0.05 (0.01–0.28)');
    expect(formatRate(rate(1999, 2000))).not.toMatch(/^100 /);
    expect(formatPercent(1 / 2000)).toBe('0.1%');
    expect(formatPercent(0.4)).toBe('40%');
  });
});

describe('cell labels', () => {
  it('say vote on plain vote cells when the labels mix decision modes', () => {
    const { short, common } = shortLabels([
      'policy:plurality h=7 b=0 may_exist [0,50] R=50',
      'policy:plurality h=7 b=0 may_exist [0,50] R=50 rule:median@3',
    ]);
    expect([...short.values()]).toEqual(['vote', 'rule:median']);
    expect(common).toBe('policy:plurality h=7 b=0 may_exist [0,50] R=50 rules from round 3');
  });
  it('keep a budget with spaces as one word, and show N once when h + b is the same in every cell', () => {
    const { short, common } = shortLabels([
      'policy:plurality h=7 b=0 may_exist [0,50] R=50 budget(30 rounds, 9 s)',
      'policy:plurality h=6 b=1:split may_exist [0,50] R=50 budget(30 rounds, 9 s)',
    ]);
    expect([...short.values()]).toEqual(['b=0', 'b=1:split']);
    expect(common).toBe('policy:plurality may_exist [0,50] R=50 budget(30 rounds, 9 s) N=7');
  });
});

describe('a single cell label', () => {
  it('is kept whole, with nothing shared', () => {
    const label = 'policy:plurality h=7 b=0 may_exist [0,50] R=50 rule:median@3';
    expect(shortLabels([label])).toEqual({ short: new Map([[label, label]]), common: '' });
  });
});

describe('the outcome table', () => {
  const cells = [
    'policy:plurality h=6 b=0 may_exist [0,50] R=20',
    'policy:plurality h=6 b=2:split may_exist [0,50] R=20',
  ].map((c) => cellOf(c, 10, 4));
  it('prints the settings every cell shares once, above the table, and only what differs in each row', () => {
    const lines = renderOutcomeTable(cells).split('\n');
    expect(lines[0]).toBe('every cell: 10 runs, policy:plurality h=6 may_exist [0,50] R=20');
    expect(lines[1]).toMatch(/^cell\s+valid\s+invalid\s+escalated\s+no consensus\s+rounds\s+conv$/);
    expect(lines[3]).toMatch(/^b=0\s+40 \(17–69\)/);
    expect(lines.filter((l) => l.includes('may_exist'))).toHaveLength(1);
  });
  it('prints full labels and every column with wide', () => {
    const lines = renderOutcomeTable(cells, { wide: true }).split('\n');
    expect(lines[0]).toMatch(
      /^cell\s+runs\s+valid\s+invalid\s+none\s+timeout\s+escalated\s+no consensus\s+rounds mean\s+median\s+converged\s+first round$/,
    );
    expect(lines[2]).toMatch(/^policy:plurality h=6 b=0 may_exist \[0,50\] R=20\s+10\s/);
  });
  for (const name of Object.keys(PRESETS)) {
    it(`fits 120 columns for the ${name} preset, with its widest rates and every optional column`, () => {
      const experiment = parseExperiment(preset(name));
      const labels = expandCells(experiment).map(cellKey);
      // 100 (87–100) for 25 runs; 0 (0–0.2) for 2,000.
      for (const runs of [experiment.runs, 2000]) {
        const table = renderOutcomeTable(labels.map((l) => cellOf(l, runs, runs === 2000 ? 0 : runs)));
        expect(width(table), table).toBeLessThanOrEqual(120);
      }
    });
  }
});
