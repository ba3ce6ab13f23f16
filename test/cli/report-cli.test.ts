import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { POOL_FIELDS } from '../../src/report/pool.js';
import { runCli as cli } from '../support/cli.js';

interface Rate {
  count: number;
  rate: number;
  ci: { low: number; high: number };
}
interface Summary {
  runs: number;
  outcomes: Record<'valid' | 'invalid' | 'none' | 'timeout', Rate>;
  no_consensus: Rate;
  convergence: Rate & { mean_round: number | null; median_round: number | null };
}

/** Every key of a JSON value, at any depth. */
function keysOf(value: unknown): string[] {
  if (Array.isArray(value)) return value.flatMap(keysOf);
  if (value && typeof value === 'object') return Object.entries(value).flatMap(([k, v]) => [k, ...keysOf(v)]);
  return [];
}

let dir: string;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'witness-report-cli-'));
  // Stubborn agents never move: runs end as timeout, and as none when enough agents vote stop anyway.
  const sim = await cli(
    [
      'sim',
      '--honest',
      '4',
      '--byzantine',
      '0,2',
      '--byzantine-strategy',
      'mimic-defect',
      '--honest-policy',
      'plurality,stubborn',
      '--runs',
      '6',
      '--rounds',
      '10',
      '--out',
      'r.jsonl',
      '--quiet',
    ],
    dir,
  );
  expect(sim.code).toBe(0);
});

describe('witness report --by', () => {
  it('prints one row per group with a column per field and no consensus = none + timeout', async () => {
    const r = await cli(['report', 'r.jsonl', '--by', 'policy,byzantine', '--wide'], dir);
    expect(r.code).toBe(0);
    const lines = r.out.split('\n');
    expect(lines[0]).toMatch(/^policy\s+byzantine\s+runs\s+valid\s+invalid\s+none\s+timeout\s+no consensus\s/);
    const rows = lines.slice(2, 6).map((l) => l.split(/\s{2,}/));
    expect(rows.map((c) => `${c[0]} ${c[1]} ${c[2]}`)).toEqual([
      'plurality 0 6',
      'plurality 2 6',
      'stubborn 0 6',
      'stubborn 2 6',
    ]);
    const json = JSON.parse((await cli(['report', 'r.jsonl', '--by', 'policy,byzantine', '--json'], dir)).out) as {
      groups: Summary[];
    };
    for (const [i, row] of rows.entries()) {
      const g = json.groups[i]!;
      const pct = (x: number) => Math.round(x * 100);
      expect(row[7]).toBe(`${pct(g.no_consensus.rate)} (${pct(g.no_consensus.ci.low)}–${pct(g.no_consensus.ci.high)})`);
    }
    expect(lines.join('\n')).toContain('no consensus: none + timeout');
  });
  it('prints JSON with snake_case keys, groups and no_consensus = none + timeout', async () => {
    const r = await cli(['report', 'r.jsonl', '--by', 'policy', '--json'], dir);
    expect(r.code).toBe(0);
    const report = JSON.parse(r.out) as {
      by: string[];
      runs: number;
      torn_tail: boolean;
      groups: (Summary & { group: { policy: string } })[];
    };
    expect(report.by).toEqual(['policy']);
    expect(report.torn_tail).toBe(false);
    expect(report.groups.map((g) => [g.group.policy, g.runs])).toEqual([
      ['plurality', 12],
      ['stubborn', 12],
    ]);
    const lines = readFileSync(join(dir, 'r.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { outcome: string; config: { honestPolicy: string } });
    for (const g of report.groups) {
      const mine = lines.filter((l) => l.config.honestPolicy === g.group.policy);
      expect(g.no_consensus.count).toBe(mine.filter((l) => l.outcome === 'none' || l.outcome === 'timeout').length);
      expect(g.no_consensus.count).toBe(g.outcomes.none.count + g.outcomes.timeout.count);
    }
    const stubborn = report.groups[1]!;
    expect(stubborn.outcomes.none.count).toBeGreaterThan(0);
    expect(stubborn.outcomes.timeout.count).toBeGreaterThan(0);
    expect(keysOf(report).filter((k) => !/^[a-z][a-z0-9_]*$/.test(k))).toEqual([]);
  });
  it('gives per-cell JSON the same snake_case summary, with no_consensus and convergence', async () => {
    const r = await cli(['report', 'r.jsonl', '--json'], dir);
    const report = JSON.parse(r.out) as { cells: (Summary & { cell: string })[] };
    expect(report.cells).toHaveLength(4);
    for (const c of report.cells) {
      expect(c.no_consensus.count).toBe(c.outcomes.none.count + c.outcomes.timeout.count);
      expect(c.convergence.count).toBeLessThanOrEqual(c.runs);
    }
    expect(report.cells.find((c) => c.cell.startsWith('policy:plurality h=4 b=0'))!.convergence).toMatchObject({
      count: 6,
      median_round: 2,
    });
    expect(report.cells.find((c) => c.cell.startsWith('policy:stubborn h=4 b=0'))!.convergence).toMatchObject({
      count: 0,
      mean_round: null,
    });
    expect(keysOf(report).filter((k) => !/^[a-z][a-z0-9_]*$/.test(k))).toEqual([]);
  });
  it('shows no consensus and convergence in the per-cell table too, and every column with --wide', async () => {
    const compact = await cli(['report', 'r.jsonl'], dir);
    expect(compact.out.split('\n')[0]).toBe('every cell: 6 runs, h=4 may_exist [0,50] R=10');
    expect(compact.out.split('\n')[1]).toMatch(/^cell\s+valid\s+invalid\s+no consensus\s+rounds\s+conv$/);
    const r = await cli(['report', 'r.jsonl', '--wide'], dir);
    expect(r.out.split('\n')[0]).toMatch(
      /^cell\s+runs\s+valid\s+invalid\s+none\s+timeout\s+no consensus\s+rounds mean\s+median\s+converged\s+first round$/,
    );
  });
  it('refuses an unknown field with exit 2, naming it and every valid field', async () => {
    const r = await cli(['report', 'r.jsonl', '--by', 'model,size'], dir);
    expect(r.code).toBe(2);
    expect(r.out).toBe('');
    expect(r.err).toContain('"size"');
    expect(r.err).toContain('--by');
    for (const field of Object.keys(POOL_FIELDS)) expect(r.err).toContain(field);
    expect(r.err.trim().split('\n')).toHaveLength(1);
  });
  it('adds the pooled view to the HTML report', async () => {
    const r = await cli(['report', 'r.jsonl', '--by', 'byzantine', '--html', 'report.html'], dir);
    expect(r.code).toBe(0);
    const html = readFileSync(join(dir, 'report.html'), 'utf8');
    expect(html).toContain('<h2>Pooled by byzantine</h2>');
    expect(html).toContain('<td>byzantine=2</td>');
    expect(html).toContain('<h2>Convergence</h2>');
  });
  it('explains --by with its fields and an example in --help', async () => {
    const r = await cli(['report', '--help'], dir);
    expect(r.out).toMatch(/--by <fields>/);
    expect(r.out).toMatch(/witness report \S+ --by model/);
    for (const field of Object.keys(POOL_FIELDS)) expect(r.out).toMatch(new RegExp(`^  ${field}\\s`, 'm'));
  });
});
