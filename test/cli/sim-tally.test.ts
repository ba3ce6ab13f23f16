/**
 * `witness sim` tallies its table as the resume reads the file and as records are
 * written, instead of reading the whole file back after the last run: the
 * table must be what a read of the file gives — `witness report --json` over the runs
 * of this plan — after a fresh sweep, a resume of a file with gaps, a repeated run, a
 * corrupt line, another experiment's run and a torn last line, and a signed resume.
 */
import { appendFileSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readKeyFile } from '../../src/attest/keys.js';
import { lazyPlan } from '../../src/sim/experiment/plan.js';
import { preset } from '../../src/sim/experiment/presets.js';
import { recordsOf } from '../../src/sim/experiment/results-stream.js';
import { runExperiment } from '../../src/sim/experiment/run.js';
import { parseExperiment } from '../../src/sim/experiment/schema.js';
import { summarizeCells } from '../../src/sim/stats.js';
import { runCli as cli } from '../support/cli.js';

const SWEEP = ['sim', '--preset', 'smoke', '--runs', '4', '--quiet', '--json', '--out', 'r.jsonl'];

/** The cells as a read of the file gives them: the valid records of this plan, each once, in file order. */
function readBack(path: string) {
  const plan = lazyPlan(parseExperiment({ ...preset('smoke'), runs: 4 }));
  const seen = new Set<string>();
  return summarizeCells(
    recordsOf(path, undefined, (r) => plan.at(r.seq)?.id === r.id && !seen.has(r.id) && Boolean(seen.add(r.id))),
  );
}

const cellsOf = (out: string) => (JSON.parse(out) as { cells: unknown[] }).cells;

describe('the table of witness sim, tallied as it runs', () => {
  it('is the file read back, after a fresh sweep', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'witness-tally-'));
    const r = await cli(SWEEP, cwd);
    expect(r.code).toBe(0);
    expect(cellsOf(r.out)).toEqual(readBack(join(cwd, 'r.jsonl')));
  });
  it('is the file read back, after resuming a file with gaps, a repeated run, bad lines and a torn tail', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'witness-tally-'));
    await cli(SWEEP, cwd);
    const out = join(cwd, 'r.jsonl');
    const lines = readFileSync(out, 'utf8').split('\n').filter(Boolean);
    // Every other run of the first half, one twice, a corrupt line; a torn line last.
    const kept = lines.slice(0, lines.length / 2).filter((_, i) => i % 2 === 0);
    writeFileSync(out, `${[...kept, kept[1], '{"not":"a run"}', 'not json'].join('\n')}\n`);
    appendFileSync(out, lines[lines.length - 1]!.slice(0, 40));
    const r = await cli(SWEEP, cwd);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.out)).toMatchObject({ skipped: kept.length, ran: lines.length - kept.length });
    const cells = cellsOf(r.out);
    expect(cells).toEqual(readBack(out));
    // The repeated run is counted once, as `witness report` counts it.
    expect((cells as { runs: number }[]).reduce((n, c) => n + c.runs, 0)).toBe(lines.length);
  });
  it('is the file read back, after a signed resume', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'witness-tally-'));
    expect((await cli(['keys', 'new', '--deployer', 'lab', '--out', 'lab.key.json'], cwd)).code).toBe(0);
    const out = join(cwd, 'r.jsonl');
    // Stopped after 9 runs, as Ctrl-C stops a sweep (its checkpoint written on close).
    const controller = new AbortController();
    let written = 0;
    const key = readKeyFile(join(cwd, 'lab.key.json'));
    await runExperiment({
      experiment: parseExperiment({ ...preset('smoke'), runs: 4 }),
      out,
      sign: { key },
      signal: controller.signal,
      onRecord: () => void (++written >= 9 && controller.abort()),
    });
    const r = await cli([...SWEEP, '--sign', 'lab.key.json'], cwd);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.out)).toMatchObject({ skipped: written });
    expect(cellsOf(r.out)).toEqual(readBack(out));
  });
});
