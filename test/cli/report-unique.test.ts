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
import { runCli as cli } from '../support/cli.js';

/** `clean/r.jsonl` is one sweep; `mixed/r.jsonl` the same with every line twice, another experiment's runs and a second seed's. */
let dir: string;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'witness-report-unique-'));
  for (const sub of ['clean', 'mixed']) mkdirSync(join(dir, sub));
  expect((await cli(['sim', '--preset', 'smoke', '--runs', '3', '--quiet', '--out', 'clean/r.jsonl'], dir)).code).toBe(
    0,
  );
  expect(
    (await cli(['sim', '--preset', 'smoke', '--runs', '3', '--seed', '2', '--quiet', '--out', 'seed2.jsonl'], dir))
      .code,
  ).toBe(0);
  expect(
    (
      await cli(
        ['sim', '--preset', 'paper-byzantine', '--runs', '1', '--rounds', '5', '--quiet', '--out', 'other.jsonl'],
        dir,
      )
    ).code,
  ).toBe(0);
  const clean = readFileSync(join(dir, 'clean/r.jsonl'), 'utf8');
  writeFileSync(
    join(dir, 'mixed/r.jsonl'),
    clean + readFileSync(join(dir, 'other.jsonl'), 'utf8') + clean + readFileSync(join(dir, 'seed2.jsonl'), 'utf8'),
  );
});

describe('witness report of a file with repeated and foreign runs', () => {
  it("prints the clean file's table and says what it dropped, pointing to witness sim merge", async () => {
    const clean = await cli(['report', 'clean/r.jsonl'], dir);
    const mixed = await cli(['report', 'mixed/r.jsonl'], dir);
    expect(mixed.code).toBe(0);
    expect(mixed.out).toBe(clean.out);
    expect(mixed.err).toContain(
      'mixed/r.jsonl: counted each run once and dropped 28 lines: 12 repeated runs (a run id already read); 4 runs of another experiment than "smoke"',
    );
    expect(mixed.err).toMatch(
      /12 other runs of a cell and index an earlier line holds .*witness sim merge mixed\/r\.jsonl -o CLEAN\.jsonl/,
    );
    expect(clean.err).not.toContain('dropped');
  });
  it("gives the clean file's JSON, with the dropped lines counted by reason", async () => {
    const clean = JSON.parse((await cli(['report', 'clean/r.jsonl', '--json'], dir)).out) as Record<string, unknown>;
    const mixed = JSON.parse((await cli(['report', 'mixed/r.jsonl', '--json'], dir)).out) as Record<string, unknown>;
    expect(mixed.runs).toBe(12);
    expect(mixed.dropped).toEqual({ repeated: 12, other_experiment: 4, seq_taken: 12 });
    expect(clean.dropped).toEqual({ repeated: 0, other_experiment: 0, seq_taken: 0 });
    expect(mixed.cells).toEqual(clean.cells);
  });
  it("pools the clean file's runs with --by", async () => {
    const clean = await cli(['report', 'clean/r.jsonl', '--by', 'policy', '--json'], dir);
    const mixed = await cli(['report', 'mixed/r.jsonl', '--by', 'policy', '--json'], dir);
    expect((JSON.parse(mixed.out) as { groups: unknown }).groups).toEqual(
      (JSON.parse(clean.out) as { groups: unknown }).groups,
    );
  });
  it('counts 11 runs a cell in the file an older version left after --runs 10 then --runs 11 (runs ordered by cell)', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'witness-report-unique-'));
    expect((await cli(['sim', '--preset', 'smoke', '--runs', '11', '--quiet', '--out', 'new.jsonl'], cwd)).code).toBe(
      0,
    );
    const lines = readFileSync(join(cwd, 'new.jsonl'), 'utf8').split('\n').filter(Boolean);
    // The older order: seq = cell × runs + index, so --runs 11 moved every run but cell 0's, which the resume skipped.
    const cellOf = (l: string) => (JSON.parse(l) as { seq: number }).seq % 4;
    const indexOf = (l: string) => (JSON.parse(l) as { index: number }).index;
    const at = (l: string, runs: number) => l.replace(/"seq":\d+/, `"seq":${cellOf(l) * runs + indexOf(l)}`);
    const first = lines.filter((l) => indexOf(l) < 10).map((l) => at(l, 10));
    const second = lines.filter((l) => cellOf(l) > 0 || indexOf(l) === 10).map((l) => at(l, 11));
    writeFileSync(join(cwd, 'mix.jsonl'), `${[...first, ...second].join('\n')}\n`);
    expect(first.length + second.length).toBe(74);
    const r = await cli(['report', 'mix.jsonl', '--json'], cwd);
    const report = JSON.parse(r.out) as { runs: number; cells: { runs: number }[]; dropped: unknown };
    expect(report.cells.map((c) => c.runs)).toEqual([11, 11, 11, 11]);
    expect(report.dropped).toEqual({ repeated: 30, other_experiment: 0, seq_taken: 0 });
  });
  it("draws the clean file's HTML report", async () => {
    // Same name on the command line, so the page names the same source.
    const mixedDir = join(dir, 'mixed');
    const cleanDir = join(dir, 'clean');
    expect((await cli(['report', 'r.jsonl', '--html', 'page.html'], cleanDir)).code).toBe(0);
    const r = await cli(['report', 'r.jsonl', '--html', 'page.html'], mixedDir);
    expect(r.err).toContain('dropped 28 lines');
    expect(readFileSync(join(mixedDir, 'page.html'), 'utf8')).toBe(readFileSync(join(cleanDir, 'page.html'), 'utf8'));
  });
});

describe("witness sim merge with the sweep's experiment", () => {
  it("writes the clean file from the mixed one: the plan's runs once each, the rest counted as outside", async () => {
    const r = await cli(
      ['sim', 'merge', 'mixed/r.jsonl', '--preset', 'smoke', '--runs', '3', '-o', 'cleaned.jsonl', '--json'],
      dir,
    );
    expect(r.code).toBe(0);
    expect(JSON.parse(r.out)).toMatchObject({ lines: 12, duplicates: 12, outside: 16, missing: [] });
    expect(readFileSync(join(dir, 'cleaned.jsonl'), 'utf8')).toBe(readFileSync(join(dir, 'clean/r.jsonl'), 'utf8'));
    const report = await cli(['report', 'cleaned.jsonl'], dir);
    expect(report.err).not.toContain('dropped');
  });
});
