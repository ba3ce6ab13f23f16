/**
 * Bench: peak RSS of resuming, summarising, merging and reporting a results file of
 * 2 million policy-agent runs (issue 18 item 5; goal: each step under 300 MB).
 *
 * The file is synthesised with the real record format: paper-benign with enough runs
 * per cell for ≥ 2,000,000 planned runs; for each cell one run is played for real
 * (`playRun`), and every planned run of the cell is written as that record with the
 * run's own id, seq, index and seed (`toRecord`'s fields), one `JSON.stringify` line,
 * as the sweep writer does. Every line passes `checkRecord`, and the plan's ids match,
 * so `witness sim` with the same options sees a finished sweep (resume + summary).
 *
 * Each step runs the built CLI (dist/, `npm run build` first) in its own process under
 * /usr/bin/time; the figure is its peak RSS, printed beside the file size as a ratio
 * (RSS / file bytes): the old code path read the whole file into one string, so its
 * RSS was at least the file size (and past ~512 MB it failed: V8's longest string).
 *
 * Run: nice npx tsx bench/results-stream.ts [--runs-per-cell N] [--keep]
 */
import { spawnSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, rmSync, statSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { planRuns } from '../src/sim/experiment/plan.js';
import { playRun } from '../src/sim/experiment/play.js';
import { preset } from '../src/sim/experiment/presets.js';
import { parseExperiment } from '../src/sim/experiment/schema.js';

const arg = (name: string, fallback: number) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
};
const runsPerCell = arg('--runs-per-cell', 333_334); // 6 cells: 2,000,004 runs
const ROOT = resolve(import.meta.dirname, '..');
const MAIN = join(ROOT, 'dist/cli/main.js');
const dir = mkdtempSync(join(tmpdir(), 'witness-bench-stream-'));
const file = join(dir, 'paper-benign.jsonl');

const experiment = parseExperiment({ ...preset('paper-benign'), runs: runsPerCell }, 'bench');
const started = Date.now();
const plan = planRuns(experiment);
const templates = new Map<string, Awaited<ReturnType<typeof playRun>>>();
for (const run of plan) if (!templates.has(run.cellKey)) templates.set(run.cellKey, await playRun(run, experiment));
const fd = openSync(file, 'w');
let batch = '';
for (const run of plan) {
  const t = templates.get(run.cellKey)!;
  batch += `${JSON.stringify({ ...t, id: run.id, seq: run.seq, index: run.index, seed: run.seed })}\n`;
  if (batch.length > 1 << 22) {
    writeSync(fd, batch);
    batch = '';
  }
}
writeSync(fd, batch);
closeSync(fd);
const bytes = statSync(file).size;
const planned = plan.length;
plan.length = 0;
console.log(`synthesised ${planned.toLocaleString('en')} runs, ${(bytes / 1e6).toFixed(0)} MB, in ${((Date.now() - started) / 1000).toFixed(0)} s: ${file}`);

const steps: [string, string[]][] = [
  ['resume + summary (witness sim, same options)', ['sim', '--preset', 'paper-benign', '--runs', String(runsPerCell), '--out', file, '--quiet', '--json']],
  ['report (witness report --json)', ['report', file, '--json']],
  ['report --by honest', ['report', file, '--by', 'honest']],
  ['merge (witness sim merge with the plan)', ['sim', 'merge', file, '--preset', 'paper-benign', '--runs', String(runsPerCell), '-o', join(dir, 'merged.jsonl')]],
];
console.log(`\n${'step'.padEnd(46)} ${'exit'.padStart(4)} ${'peak RSS'.padStart(10)} ${'RSS/file'.padStart(9)} ${'seconds'.padStart(8)}`);
for (const [name, args] of steps) {
  const t0 = Date.now();
  const r = spawnSync('/usr/bin/time', ['-f', '%M', process.execPath, MAIN, ...args], { encoding: 'utf8', maxBuffer: 1 << 26 });
  const kb = Number(r.stderr.trim().split('\n').pop());
  const mb = kb / 1024;
  console.log(`${name.padEnd(46)} ${String(r.status).padStart(4)} ${`${mb.toFixed(0)} MB`.padStart(10)} ${(kb * 1024 / bytes).toFixed(3).padStart(9)} ${((Date.now() - t0) / 1000).toFixed(0).padStart(8)}${mb < 300 ? '' : '  over 300 MB'}`);
  if (r.status !== 0) console.log(`  ${r.stderr.split('\n').slice(-4, -1).join('\n  ')}`);
}
if (!process.argv.includes('--keep')) rmSync(dir, { recursive: true, force: true });
