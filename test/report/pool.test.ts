import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { isWitnessError } from '../../src/core/errors.js';
import { POOL_FIELDS, parsePoolFields, poolRuns } from '../../src/report/pool.js';
import { renderGroupTable } from '../../src/report/table.js';
import type { RunRecord } from '../../src/sim/experiment/record.js';
import { readResults, runExperiment } from '../../src/sim/experiment/run.js';
import { parseExperiment } from '../../src/sim/experiment/schema.js';
import { convergenceRound, wilsonInterval } from '../../src/sim/stats.js';
import type { Outcome } from '../../src/sim/types.js';

const RUNS = 5;
let records: RunRecord[];

beforeAll(async () => {
  // 2 policies × h ∈ {3, 4} × b ∈ {0, 1, 2} × 2 awareness variants; strategies at b > 0.
  const experiment = parseExperiment({
    name: 'pool-test',
    runs: RUNS,
    grid: {
      honest: [3, 4],
      byzantine: [0, 1, 2],
      byzantineStrategy: ['split', 'mimic-defect'],
      honestPolicy: ['plurality', 'stubborn'],
      awareness: ['may_exist', 'none_exist'],
      rounds: 10,
    },
  });
  const out = join(mkdtempSync(join(tmpdir(), 'witness-pool-')), 'results.jsonl');
  await runExperiment({ experiment, out });
  const read = readResults(out);
  expect(read.problems).toEqual([]);
  records = read.records;
  expect(records).toHaveLength(2 * 2 * (1 + 2 * 2) * 2 * RUNS);
});

const count = (runs: readonly RunRecord[], ...outcomes: Outcome[]) =>
  runs.filter((r) => outcomes.includes(r.outcome)).length;

describe('poolRuns on a results file of real rule-based runs', () => {
  it('pools every cell with the same b into one group, in order of b', () => {
    const groups = poolRuns(records, ['byzantine']);
    expect(groups.map((g) => g.group)).toEqual([{ byzantine: 0 }, { byzantine: 1 }, { byzantine: 2 }]);
    // b = 0: 2 policies × 2 sizes × 2 awareness; b > 0: twice that (2 strategies).
    expect(groups.map((g) => g.runs)).toEqual([8 * RUNS, 16 * RUNS, 16 * RUNS]);
    for (const g of groups) {
      const runs = records.filter((r) => r.byzantine === g.group.byzantine);
      for (const o of ['valid', 'invalid', 'none', 'timeout'] as const) {
        expect(g.outcomes[o].count).toBe(count(runs, o));
        expect(g.outcomes[o].rate).toBe(count(runs, o) / runs.length);
        expect(g.outcomes[o].ci).toEqual(wilsonInterval(count(runs, o), runs.length));
      }
      expect(g.byzantine).toBe(g.group.byzantine);
      expect(g.honest).toBeNull();
    }
  });
  it('counts no_consensus as none + timeout in every group, with both occurring', () => {
    const groups = poolRuns(records, ['policy', 'byzantine']);
    expect(groups).toHaveLength(6);
    for (const g of groups) {
      const runs = records.filter((r) => r.config.honestPolicy === g.group.policy && r.byzantine === g.group.byzantine);
      expect(g.no_consensus.count).toBe(count(runs, 'none', 'timeout'));
      expect(g.no_consensus.count).toBe(g.outcomes.none.count + g.outcomes.timeout.count);
      expect(g.no_consensus.ci).toEqual(wilsonInterval(g.no_consensus.count, g.runs));
    }
    expect(count(records, 'none')).toBeGreaterThan(0);
    expect(count(records, 'timeout')).toBeGreaterThan(0);
  });
  it('groups by N = h + b across cells of different h and b', () => {
    const groups = poolRuns(records, ['n']);
    expect(groups.map((g) => g.group.n)).toEqual([3, 4, 5, 6]);
    for (const g of groups) expect(g.runs).toBe(records.filter((r) => r.honest + r.byzantine === g.group.n).length);
    expect(groups.reduce((s, g) => s + g.runs, 0)).toBe(records.length);
  });
  it('shows none for fields that do not apply: no model for rule-based agents, no strategy at b = 0', () => {
    const groups = poolRuns(records, ['model', 'strategy']);
    expect(groups.map((g) => g.group)).toEqual([
      { model: null, strategy: 'mimic-defect' },
      { model: null, strategy: 'split' },
      { model: null, strategy: null },
    ]);
    expect(renderGroupTable(groups, ['model', 'strategy'], { wide: true }).split('\n')[4]).toMatch(
      /^none\s+none\s+40\s/,
    );
  });
  it("summarises convergence per group from the runs' trajectories", () => {
    const [plurality, stubborn] = poolRuns(records, ['policy']);
    const rounds = records.filter((r) => r.config.honestPolicy === 'plurality').map(convergenceRound);
    const converged = rounds.filter((r): r is number => r !== null);
    expect(plurality!.convergence.count).toBe(converged.length);
    expect(plurality!.convergence.count).toBeGreaterThan(0);
    expect(plurality!.convergence.mean_round).toBeCloseTo(converged.reduce((s, x) => s + x, 0) / converged.length, 12);
    expect(stubborn!.group.policy).toBe('stubborn');
  });
  it('by cell gives the same groups as the per-cell summary', () => {
    expect(poolRuns(records, ['cell']).length).toBe(new Set(records.map((r) => r.cell)).size);
  });
  it('prints one column per field and a no consensus column', () => {
    const table = renderGroupTable(poolRuns(records, ['awareness', 'byzantine']), ['awareness', 'byzantine'], {
      wide: true,
    });
    const [header, , first] = table.split('\n');
    expect(header).toMatch(
      /^awareness\s+byzantine\s+runs\s+valid\s+invalid\s+none\s+timeout\s+no consensus\s+rounds mean\s+median\s+converged\s+first round$/,
    );
    expect(first).toMatch(/^may_exist\s+0\s+20\s/);
  });
});

describe('parsePoolFields', () => {
  it('takes known fields in the order given', () => {
    expect(parsePoolFields('model, n,awareness')).toEqual(['model', 'n', 'awareness']);
  });
  it('names an unknown field and lists every valid one', () => {
    let error: unknown;
    try {
      parsePoolFields('model,size');
    } catch (e) {
      error = e;
    }
    expect(isWitnessError(error, 'USAGE')).toBe(true);
    expect((error as Error).message).toContain('"size"');
    for (const field of Object.keys(POOL_FIELDS)) expect((error as Error).message).toContain(field);
  });
  it('refuses empty names and a field given twice', () => {
    expect(() => parsePoolFields('model,,n')).toThrow(/empty field name/);
    expect(() => parsePoolFields('n,model,n')).toThrow(/"n" is given twice/);
  });
  it('knows at least the fields the paper reports by', () => {
    for (const field of ['model', 'n', 'byzantine', 'awareness', 'strategy', 'decide', 'honest', 'policy'])
      expect(Object.keys(POOL_FIELDS)).toContain(field);
  });
});
