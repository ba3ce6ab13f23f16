/**
 * `witness report` counts each run once and one experiment's runs: a file with
 * repeated lines, runs of another experiment, or a second plan of the same experiment
 * (another --seed: a second run at each seq) gives the table, JSON, pooled table and
 * HTML of the clean file, and says how many lines it dropped and why.
 */
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { memoryIo } from '../../src/cli/io.js';
import { runMain } from '../../src/cli/main.js';

async function cli(args: string[], cwd: string) {
  const io = memoryIo(cwd);
  const code = await runMain(args, io);
  return { code, out: io.out, err: io.err };
}

/** `clean/r.jsonl` is one sweep; `mixed/r.jsonl` the same with every line twice, another experiment's runs and a second seed's. */
let dir: string;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'witness-report-unique-'));
  for (const sub of ['clean', 'mixed']) mkdirSync(join(dir, sub));
  expect((await cli(['sim', '--preset', 'smoke', '--runs', '3', '--quiet', '--out', 'clean/r.jsonl'], dir)).code).toBe(0);
  expect((await cli(['sim', '--preset', 'smoke', '--runs', '3', '--seed', '2', '--quiet', '--out', 'seed2.jsonl'], dir)).code).toBe(0);
  expect((await cli(['sim', '--preset', 'paper-byzantine', '--runs', '1', '--rounds', '5', '--quiet', '--out', 'other.jsonl'], dir)).code).toBe(0);
  const clean = readFileSync(join(dir, 'clean/r.jsonl'), 'utf8');
  writeFileSync(join(dir, 'mixed/r.jsonl'), clean + readFileSync(join(dir, 'other.jsonl'), 'utf8') + clean + readFileSync(join(dir, 'seed2.jsonl'), 'utf8'));
});

describe('witness report of a file with repeated and foreign runs', () => {
  it('prints the clean file\'s table and says what it dropped, pointing to witness sim merge', async () => {
    const clean = await cli(['report', 'clean/r.jsonl'], dir);
    const mixed = await cli(['report', 'mixed/r.jsonl'], dir);
    expect(mixed.code).toBe(0);
    expect(mixed.out).toBe(clean.out);
    expect(mixed.err).toContain('mixed/r.jsonl: counted each run once and dropped 28 lines: 12 repeated runs (a run id already read); 4 runs of another experiment than "smoke"');
    expect(mixed.err).toMatch(/12 runs at a seq an earlier run holds .*witness sim merge mixed\/r\.jsonl -o CLEAN\.jsonl/);
    expect(clean.err).not.toContain('dropped');
  });
  it('gives the clean file\'s JSON, with the dropped lines counted by reason', async () => {
    const clean = JSON.parse((await cli(['report', 'clean/r.jsonl', '--json'], dir)).out) as Record<string, unknown>;
    const mixed = JSON.parse((await cli(['report', 'mixed/r.jsonl', '--json'], dir)).out) as Record<string, unknown>;
    expect(mixed.runs).toBe(12);
    expect(mixed.dropped).toEqual({ repeated: 12, other_experiment: 4, seq_taken: 12 });
    expect(clean.dropped).toEqual({ repeated: 0, other_experiment: 0, seq_taken: 0 });
    expect(mixed.cells).toEqual(clean.cells);
  });
  it('pools the clean file\'s runs with --by', async () => {
    const clean = await cli(['report', 'clean/r.jsonl', '--by', 'policy', '--json'], dir);
    const mixed = await cli(['report', 'mixed/r.jsonl', '--by', 'policy', '--json'], dir);
    expect((JSON.parse(mixed.out) as { groups: unknown }).groups).toEqual((JSON.parse(clean.out) as { groups: unknown }).groups);
  });
  it('draws the clean file\'s HTML report', async () => {
    // Same name on the command line, so the page names the same source.
    const mixedDir = join(dir, 'mixed');
    const cleanDir = join(dir, 'clean');
    expect((await cli(['report', 'r.jsonl', '--html', 'page.html'], cleanDir)).code).toBe(0);
    const r = await cli(['report', 'r.jsonl', '--html', 'page.html'], mixedDir);
    expect(r.err).toContain('dropped 28 lines');
    expect(readFileSync(join(mixedDir, 'page.html'), 'utf8')).toBe(readFileSync(join(cleanDir, 'page.html'), 'utf8'));
  });
});
