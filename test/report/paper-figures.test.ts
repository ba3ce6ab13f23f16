// The arithmetic behind docs/llm.md "What the paper's percentages are": which of the
// paper's rates can be whole-run fractions k/n of its grids (25 runs per cell), and
// that the reference repository's own analysis outputs (Q1_analysis.json,
// Q2_analysis.json at commit 5b3d6f8) are. A percentage "is" k/n when k/n rounds to it
// at one decimal.
import { describe, expect, it } from 'vitest';

/** The run counts k out of n that show as `percent` at one decimal. */
function runsGiving(percent: number, n: number): number[] {
  const tenths = Math.round(percent * 10);
  return Array.from({ length: n + 1 }, (_, k) => k).filter((k) => Math.round((k * 1000) / n) === tenths);
}

/** Multiples of 25 runs (up to 600) of which `percent` can be a whole-run fraction. */
const multiplesOf25 = (percent: number) =>
  Array.from({ length: 24 }, (_, i) => 25 * (i + 1)).filter((n) => runsGiving(percent, n).length > 0);

// Pools of the grids: 2 models (the paper) or 4 (the run script), N ∈ {4, 8, 16}, one or
// both awareness variants, 25 runs per cell.
const POOLS: Record<string, Record<string, number>> = {
  overall: {
    '2 models × 3 N': 150,
    '2 models × 3 N × 2 awareness': 300,
    '4 models × 3 N': 300,
    '4 models × 3 N × 2 awareness': 600,
  },
  'one model': { '3 N': 75, '3 N × 2 awareness': 150 },
  'one N': { '2 models': 50, '2 models × 2 awareness': 100, '4 models': 100, '4 models × 2 awareness': 200 },
  'one model, one awareness': { '3 N': 75 },
};

const PAPER = [
  { figure: 41.6, what: 'benign valid rate, overall', pools: 'overall', smallest25: 125 },
  { figure: 67.4, what: 'Qwen3-14B, benign', pools: 'one model', smallest25: 175 },
  { figure: 15.8, what: 'Qwen3-8B, benign', pools: 'one model', smallest25: 400 },
  { figure: 46.6, what: 'N = 4, benign', pools: 'one N', smallest25: 350 },
  { figure: 33.3, what: 'N = 16, benign', pools: 'one N', smallest25: 75 },
  { figure: 75.4, what: 'Qwen3-14B, benign, none_exist', pools: 'one model, one awareness', smallest25: 175 },
  { figure: 59.1, what: 'Qwen3-14B, benign, may_exist', pools: 'one model, one awareness', smallest25: 225 },
] as const;

describe("the paper's percentages against its grids", () => {
  for (const { figure, what, pools, smallest25 } of PAPER) {
    it(`${figure}% (${what}) is no whole-run fraction of any pool of the grid; the fewest runs in multiples of 25 that give it: ${smallest25}`, () => {
      for (const [pool, n] of Object.entries(POOLS[pools]!))
        expect(runsGiving(figure, n), `${pool}: ${n} runs`).toEqual([]);
      expect(multiplesOf25(figure)[0]).toBe(smallest25);
    });
  }
  it('the nearest whole-run fractions are as the table in docs/llm.md says', () => {
    // [k, n, the percentage the table shows]
    const table: [number, number, number][] = [
      [62, 150, 41.3],
      [63, 150, 42.0],
      [124, 300, 41.3],
      [125, 300, 41.7],
      [52, 125, 41.6],
      [50, 75, 66.7],
      [51, 75, 68.0],
      [101, 150, 67.3],
      [102, 150, 68.0],
      [11, 75, 14.7],
      [12, 75, 16.0],
      [23, 150, 15.3],
      [24, 150, 16.0],
      [23, 50, 46.0],
      [24, 50, 48.0],
      [46, 100, 46.0],
      [47, 100, 47.0],
      [16, 50, 32.0],
      [17, 50, 34.0],
      [33, 100, 33.0],
      [34, 100, 34.0],
      [25, 75, 33.3],
      [56, 75, 74.7],
      [57, 75, 76.0],
      [44, 75, 58.7],
      [45, 75, 60.0],
    ];
    for (const [k, n, shown] of table) expect(runsGiving(shown, n), `${k}/${n}`).toContain(k);
  });
  it("the overall rate is the mean of the two models' rates, but the Qwen3-14B rate is not the mean of its two awareness rates", () => {
    expect((67.4 + 15.8) / 2).toBeCloseTo(41.6, 9);
    expect((75.4 + 59.1) / 2).toBeCloseTo(67.25, 9);
  });
});

describe("the reference repository's own analysis outputs are whole-run fractions", () => {
  // figure (%), runs: Q1_analysis.json (4 models × N ∈ {4, 8, 16} × 25 runs, R = 15) and
  // Q2_analysis.json (8 honest + b; b = 0 pools the four models' N = 8 cells).
  const OUTPUTS: [string, number, number][] = [
    ['Q1 overall valid', 33.0, 300],
    ['Q1 overall no consensus', 59.7, 300],
    ['Q1 qwen3-14b valid', 52.0, 75],
    ['Q1 qwen3-8b valid', 13.3, 75],
    ['Q1 qwen3-32b valid', 40.0, 75],
    ['Q1 mistral-22b valid', 26.7, 75],
    ['Q1 N = 4 valid', 36.0, 100],
    ['Q1 N = 8 valid', 39.0, 100],
    ['Q1 N = 16 valid', 24.0, 100],
    ['Q2 b = 0 valid', 39.0, 100],
    ['Q2 b = 1 valid', 24.0, 25],
    ['Q2 b = 2 valid', 4.0, 25],
    ['Q2 b = 3 valid', 0.0, 25],
    ['Q2 b = 4 valid', 4.0, 25],
    ['Q2 overall valid', 23.5, 200],
  ];
  for (const [what, figure, n] of OUTPUTS) {
    it(`${what}: ${figure}% of ${n} runs`, () => expect(runsGiving(figure, n)).toHaveLength(1));
  }
});
