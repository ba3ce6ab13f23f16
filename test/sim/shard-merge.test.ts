/**
 * Sweeps on batch engines: `--shard auto` from the variables a Kubernetes
 * Indexed Job or a SLURM array sets, and `witness sim merge` that names the planned
 * runs no shard holds (exit 1) and refuses a missing input file (exit 2).
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { resolveShard } from '../../src/sim/experiment/shard-env.js';
import { runCli as cli } from '../support/cli.js';

describe('--shard auto', () => {
  it('reads a Kubernetes Indexed Job (0-based JOB_COMPLETION_INDEX, count passed as auto/N)', () => {
    expect(resolveShard('auto/4', { JOB_COMPLETION_INDEX: '0' })).toEqual({ index: 1, count: 4 });
    expect(resolveShard('auto/4', { JOB_COMPLETION_INDEX: '3' })).toEqual({ index: 4, count: 4 });
    expect(() => resolveShard('auto', { JOB_COMPLETION_INDEX: '1' })).toThrow(/pass them: --shard auto\/N/);
    expect(() => resolveShard('auto/4', { JOB_COMPLETION_INDEX: '4' })).toThrow(
      /JOB_COMPLETION_INDEX is 4, not below the count 4/,
    );
    expect(() => resolveShard('auto/4', { JOB_COMPLETION_INDEX: 'x' })).toThrow(
      /JOB_COMPLETION_INDEX is "x", not a whole number/,
    );
  });
  it('reads a SLURM array (TASK_ID − TASK_MIN, TASK_COUNT, TASK_STEP)', () => {
    expect(
      resolveShard('auto', { SLURM_ARRAY_TASK_ID: '1', SLURM_ARRAY_TASK_MIN: '1', SLURM_ARRAY_TASK_COUNT: '3' }),
    ).toEqual({ index: 1, count: 3 });
    expect(
      resolveShard('auto', { SLURM_ARRAY_TASK_ID: '12', SLURM_ARRAY_TASK_MIN: '10', SLURM_ARRAY_TASK_COUNT: '3' }),
    ).toEqual({ index: 3, count: 3 });
    expect(
      resolveShard('auto', {
        SLURM_ARRAY_TASK_ID: '4',
        SLURM_ARRAY_TASK_MIN: '0',
        SLURM_ARRAY_TASK_COUNT: '3',
        SLURM_ARRAY_TASK_STEP: '2',
      }),
    ).toEqual({ index: 3, count: 3 });
    expect(
      resolveShard('auto/3', { SLURM_ARRAY_TASK_ID: '0', SLURM_ARRAY_TASK_MIN: '0', SLURM_ARRAY_TASK_COUNT: '3' }),
    ).toEqual({ index: 1, count: 3 });
    expect(() =>
      resolveShard('auto/4', { SLURM_ARRAY_TASK_ID: '0', SLURM_ARRAY_TASK_MIN: '0', SLURM_ARRAY_TASK_COUNT: '3' }),
    ).toThrow(/has 3 tasks \(SLURM_ARRAY_TASK_COUNT\), not 4/);
    expect(() =>
      resolveShard('auto', { SLURM_ARRAY_TASK_ID: '5', SLURM_ARRAY_TASK_MIN: '1', SLURM_ARRAY_TASK_COUNT: '3' }),
    ).toThrow(/SLURM_ARRAY_TASK_ID 5 is not one of the 3 tasks/);
    expect(() => resolveShard('auto', { SLURM_ARRAY_TASK_ID: '1' })).toThrow(
      /SLURM_ARRAY_TASK_MIN or SLURM_ARRAY_TASK_COUNT is not/,
    );
  });
  it('refuses no engine, both engines, and keeps i/n', () => {
    expect(() => resolveShard('auto', {})).toThrow(/no batch engine found/);
    expect(() => resolveShard('auto/2', { JOB_COMPLETION_INDEX: '0', SLURM_ARRAY_TASK_ID: '0' })).toThrow(
      /both JOB_COMPLETION_INDEX/,
    );
    expect(resolveShard('2/5', {})).toEqual({ index: 2, count: 5 });
    expect(() => resolveShard('auto/0', { JOB_COMPLETION_INDEX: '0' })).toThrow(/at least 1/);
  });
});

describe('witness sim merge', () => {
  it('names the runs of the plan a missing shard holds (exit 1), then exits 0 once every shard is in', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'witness-shard-'));
    const base = ['sim', '--quiet', '--preset', 'smoke', '--runs', '3'];
    const env = process.env;
    const shards: string[] = [];
    for (const index of [0, 1, 2]) {
      process.env = { ...env, JOB_COMPLETION_INDEX: String(index) };
      try {
        const r = await cli([...base, '--shard', 'auto/3', '--out', `part-${index}.jsonl`], cwd);
        expect(r.code).toBe(0);
      } finally {
        process.env = env;
      }
      shards.push(`part-${index}.jsonl`);
    }
    const partial = await cli(
      ['sim', 'merge', shards[0]!, shards[2]!, '--preset', 'smoke', '--runs', '3', '-o', 'all.jsonl', '--json'],
      cwd,
    );
    expect(partial.code).toBe(1);
    const report = JSON.parse(partial.out) as { lines: number; missing: { seq: number; id: string }[] };
    expect(report.missing.length).toBeGreaterThan(0);
    // Round-robin shards: what is missing is exactly shard 2/3's runs.
    expect(report.missing.every((m) => m.seq % 3 === 1)).toBe(true);
    const shard2 = readFileSync(join(cwd, shards[1]!), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => (JSON.parse(l) as { id: string }).id);
    expect(report.missing.map((m) => m.id)).toEqual(shard2);
    expect(partial.err).toMatch(/Incomplete: \d+ of the plan's \d+ runs are in no input file/);
    const full = await cli(['sim', 'merge', ...shards, '--preset', 'smoke', '--runs', '3', '-o', 'all.jsonl'], cwd);
    expect(full.code).toBe(0);
    expect(full.err).not.toContain('Incomplete');
  });
  it('refuses an input file that does not exist (exit 2) instead of merging the rest', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'witness-shard-'));
    expect((await cli(['sim', '--quiet', '--out', 'part1.jsonl'], cwd)).code).toBe(0);
    const r = await cli(['sim', 'merge', 'part1.jsonl', 'missing.jsonl', '-o', 'm.jsonl'], cwd);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/missing\.jsonl does not exist/);
    expect(r.out).not.toContain('Merged');
  });
});

describe("a preset's default results file", () => {
  it('refuses (exit 2, naming --out) a run whose plan differs from the runs already in it', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'witness-default-'));
    expect((await cli(['sim', '--quiet'], cwd)).code).toBe(0);
    const before = readFileSync(join(cwd, 'results', 'smoke.jsonl'), 'utf8');
    const other = await cli(['sim', '--quiet', '--budget-rounds', '20'], cwd);
    expect(other.code).toBe(2);
    expect(other.err).toMatch(/results\/smoke\.jsonl holds \d+ runs of another experiment.*--out FILE/);
    expect(readFileSync(join(cwd, 'results', 'smoke.jsonl'), 'utf8')).toBe(before);
    // The same experiment resumes; more runs of it extend the file; --out writes elsewhere.
    expect((await cli(['sim', '--quiet'], cwd)).code).toBe(0);
    expect((await cli(['sim', '--quiet', '--budget-rounds', '20', '--out', 'budget.jsonl'], cwd)).code).toBe(0);
  });
});
