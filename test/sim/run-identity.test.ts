/**
 * A run's place in the plan (`seq`) does not depend on `--runs`: seq is index-major
 * (index × cells + the cell's place), so a larger --runs extends every cell and
 * leaves the runs already played where they were, byte for byte. A results file holds
 * one experiment: another's runs, fewer runs than it holds, or runs seeded otherwise
 * are refused, with or without --out, and the file is left as it was.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { expandCells, lazyPlan } from '../../src/sim/experiment/plan.js';
import { preset } from '../../src/sim/experiment/presets.js';
import type { RunRecord } from '../../src/sim/experiment/record.js';
import { runExperiment } from '../../src/sim/experiment/run.js';
import { parseExperiment } from '../../src/sim/experiment/schema.js';
import { type ScriptedServer, startScriptedServer } from '../llm/scripted-server.js';
import { runCli as cli } from '../support/cli.js';

/** The remedy preset's first vote cell with b = 0, run 0, as the version before paired seeds planned it. */
const VOTE_B0 = { id: 'r-de49f4c27c79dfcf', seed: 105345061915863 };

const tempDir = () => mkdtempSync(join(tmpdir(), 'witness-identity-'));
const linesOf = (path: string) => readFileSync(path, 'utf8').split('\n').filter(Boolean);

const servers: ScriptedServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

describe('raising --runs', () => {
  it('extends each cell: the runs already there keep their lines byte for byte and only the new ones are played', async () => {
    const cwd = tempDir();
    const sweep = (runs: number) =>
      cli(['sim', '--preset', 'smoke', '--runs', String(runs), '--quiet', '--out', 'mix.jsonl'], cwd);
    expect((await sweep(10)).code).toBe(0);
    const before = readFileSync(join(cwd, 'mix.jsonl'), 'utf8');
    const more = await sweep(11);
    expect(more.code).toBe(0);
    expect(more.err).toContain('(44 runs; 4 new, 40 already there)');
    const after = readFileSync(join(cwd, 'mix.jsonl'), 'utf8');
    expect(after.startsWith(before)).toBe(true);
    expect(linesOf(join(cwd, 'mix.jsonl'))).toHaveLength(44);
    const report = await cli(['report', 'mix.jsonl', '--json'], cwd);
    expect((JSON.parse(report.out) as { cells: { runs: number }[] }).cells.map((c) => c.runs)).toEqual([
      11, 11, 11, 11,
    ]);
  });
  it('keeps every run of the smaller plan at its seq, for any grid and any two run counts', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 6 }),
        fc.integer({ min: 1, max: 6 }),
        fc.subarray([3, 4, 5], { minLength: 1 }),
        fc.subarray([0, 1, 2], { minLength: 1 }),
        (small, extra, honest, byzantine) => {
          const experiment = (runs: number) =>
            parseExperiment({ seed: 3, runs, grid: { honest, byzantine, byzantineStrategy: ['split', 'random'] } });
          const big = lazyPlan(experiment(small + extra));
          for (const run of lazyPlan(experiment(small))) expect(big.at(run.seq)).toEqual(run);
          // The runs past the smaller plan's end are the new index of every cell.
          const cells = expandCells(experiment(1)).length;
          expect([...big].slice(small * cells, (small + 1) * cells).map((r) => r.index)).toEqual(
            Array(cells).fill(small),
          );
        },
      ),
    );
  });
});

describe('a results file holds one experiment', () => {
  it('refuses to lower --runs on an existing file (exit 2), naming the --runs it holds', async () => {
    const cwd = tempDir();
    expect((await cli(['sim', '--preset', 'smoke', '--runs', '11', '--quiet', '--out', 'r.jsonl'], cwd)).code).toBe(0);
    const before = readFileSync(join(cwd, 'r.jsonl'), 'utf8');
    const fewer = await cli(['sim', '--preset', 'smoke', '--runs', '10', '--quiet', '--out', 'r.jsonl'], cwd);
    expect(fewer.code).toBe(2);
    expect(fewer.err).toMatch(
      /holds runs of this experiment up to --runs 11, more than the --runs 10 asked for.*give --runs 11 or more/,
    );
    expect(readFileSync(join(cwd, 'r.jsonl'), 'utf8')).toBe(before);
  });
  it('refuses the runs of another experiment with --out as without it (exit 2), leaving the file as it was', async () => {
    const cwd = tempDir();
    expect((await cli(['sim', '--preset', 'smoke', '--runs', '3', '--quiet', '--out', 'r.jsonl'], cwd)).code).toBe(0);
    const before = readFileSync(join(cwd, 'r.jsonl'), 'utf8');
    const other = await cli(
      ['sim', '--preset', 'smoke', '--runs', '3', '--seed', '2', '--quiet', '--out', 'r.jsonl'],
      cwd,
    );
    expect(other.code).toBe(2);
    expect(other.err).toMatch(/r\.jsonl holds 12 runs of another experiment.*--out FILE/);
    expect(readFileSync(join(cwd, 'r.jsonl'), 'utf8')).toBe(before);
  });
  it('takes the runs of every shard of one sweep into one file, one shard after the other', async () => {
    const cwd = tempDir();
    for (const shard of ['1/2', '2/2'])
      expect(
        (await cli(['sim', '--preset', 'smoke', '--runs', '3', '--shard', shard, '--quiet', '--out', 'r.jsonl'], cwd))
          .code,
      ).toBe(0);
    expect(linesOf(join(cwd, 'r.jsonl'))).toHaveLength(12);
  });
  it('refuses runs played with other seeds (an older version, or another paired list) instead of mixing them in', async () => {
    const cwd = tempDir();
    const grid = { honest: 4, byzantine: 1, byzantineStrategy: 'split', decide: ['vote', 'rule:median'], rounds: 10 };
    writeFileSync(join(cwd, 'a.json'), JSON.stringify({ name: 'pairs', runs: 3, grid }));
    writeFileSync(join(cwd, 'b.json'), JSON.stringify({ name: 'pairs', runs: 3, grid, paired: ['after'] }));
    expect((await cli(['sim', 'a.json', '--quiet', '--out', 'r.jsonl'], cwd)).code).toBe(0);
    const before = readFileSync(join(cwd, 'r.jsonl'), 'utf8');
    const other = await cli(['sim', 'b.json', '--quiet', '--out', 'r.jsonl'], cwd);
    expect(other.code).toBe(2);
    expect(other.err).toMatch(/holds 3 runs of this experiment played with other seeds/);
    expect(readFileSync(join(cwd, 'r.jsonl'), 'utf8')).toBe(before);
  });
  it('refuses a replay into a file of another experiment instead of appending to it', async () => {
    const cwd = tempDir();
    const server = await startScriptedServer(() => ({}));
    servers.push(server);
    const common = ['--quiet', '--honest', '3', '--byzantine', '1', '--rounds', '3', '--runs', '2'];
    expect(
      (
        await cli(
          [
            'sim',
            ...common,
            '--agents',
            'llm',
            '--model',
            'scripted',
            '--endpoint',
            server.url,
            '--record',
            'c.jsonl',
            '--out',
            'recorded.jsonl',
          ],
          cwd,
        )
      ).code,
    ).toBe(0);
    expect((await cli(['sim', '--preset', 'smoke', '--runs', '2', '--quiet', '--out', 'smoke.jsonl'], cwd)).code).toBe(
      0,
    );
    const before = readFileSync(join(cwd, 'smoke.jsonl'), 'utf8');
    const replay = await cli(
      ['sim', '--quiet', '--agents', 'replay', '--cassette', 'c.jsonl', '--out', 'smoke.jsonl'],
      cwd,
    );
    expect(replay.code).toBe(2);
    expect(replay.err).toMatch(/smoke\.jsonl holds 8 runs of another experiment/);
    expect(readFileSync(join(cwd, 'smoke.jsonl'), 'utf8')).toBe(before);
  });
});

describe('paired cells (the same games, another decision layer)', () => {
  it('every two cells of the remedy preset that differ only in --decide play the same games: seeds, initial values and Byzantine seats', async () => {
    const experiment = parseExperiment({ ...preset('remedy'), runs: 2 });
    const { records } = await runExperiment({ experiment });
    const games = new Map<string, RunRecord[]>();
    for (const r of records) {
      const { decide: _d, after: _a, ...rest } = r.config;
      const key = `${JSON.stringify(rest)} #${r.index}`;
      games.set(key, [...(games.get(key) ?? []), r]);
    }
    // 19 settings of b and strategy (b = 0 has none), 6 decision layers each, 2 runs.
    expect(games.size).toBe(19 * 2);
    for (const [key, runs] of games) {
      expect(
        runs.map((r) => r.config.decide ?? 'vote'),
        key,
      ).toEqual([
        'vote',
        'rule:plurality',
        'rule:median',
        'rule:trimmed-mean',
        'rule:confidence',
        'hybrid:trimmed-mean',
      ]);
      expect(new Set(runs.map((r) => r.id)).size, key).toBe(6);
      for (const r of runs.slice(1)) {
        expect(r.seed, key).toBe(runs[0]!.seed);
        expect(r.initial, key).toEqual(runs[0]!.initial);
        expect(r.roles, key).toEqual(runs[0]!.roles);
      }
    }
  });
  it('keeps the seeds of vote cells as they were (their results files resume)', () => {
    // Pinned from the version before paired seeds: vote cells' seed is their id's digest.
    const vote = [...lazyPlan(parseExperiment({ ...preset('remedy'), runs: 1 }))].find(
      (r) => r.cell.decide === undefined && r.cell.byzantine === 0,
    )!;
    expect({ id: vote.id, seed: vote.seed }).toEqual(VOTE_B0);
  });
  it('plays other games in cells that differ in an axis not marked as paired', () => {
    const plan = lazyPlan(
      parseExperiment({ runs: 1, grid: { honest: 4, decide: ['vote', 'rule:median'] }, paired: ['after'] }),
    );
    const [a, b] = [...plan];
    expect(a!.seed).not.toBe(b!.seed);
    const marked = lazyPlan(
      parseExperiment({
        runs: 1,
        grid: { honest: 4, honestPolicy: ['plurality', 'stubborn'] },
        paired: ['honestPolicy'],
      }),
    );
    const [c, d] = [...marked];
    expect(c!.seed).toBe(d!.seed);
    expect(c!.id).not.toBe(d!.id);
  });
});
