/**
 * Bench: peak RSS of a 2-million-run sweep's steps (goal: resume,
 * merge and report each under 300 MB): a fresh sweep (one thread and two workers), a
 * resume with its summary, a signed resume, `witness verify` of the signed file,
 * `witness report`, and `witness sim merge`
 * of a file in seq order and of one that is not (two shards concatenated).
 *
 * The files are synthesised with the real record format: paper-benign with enough runs
 * per cell for ≥ 2,000,000 planned runs; for each cell one run is played for real
 * (`playRun`), and every planned run of the cell is written as that record with the
 * run's own id, seq, index and seed (`toRecord`'s fields), one `JSON.stringify` line,
 * as the sweep writer does. Every line passes `checkRecord`, and the plan's ids match,
 * so `witness sim` with the same options sees a finished sweep (resume + summary). The
 * signed file is the same lines with real receipts (`ReceiptBuilder`, hash-linked) and
 * a checkpoint signed by a fresh key, its last 1,000 runs left out for the resume to
 * play; the unordered file holds shard 1/2's lines, then shard 2/2's.
 *
 * Each step runs the built CLI (dist/, `npm run build` first; `--cli` another build,
 * e.g. an older commit's, for a before/after) in its own process under /usr/bin/time;
 * the figure is its peak RSS, printed beside the size of the file the step reads or
 * writes as a ratio (RSS / file bytes).
 *
 * Run: nice npx tsx bench/results-stream.ts [--runs-per-cell N] [--fresh-runs-per-cell N]
 *        [--steps fresh,fresh2,resume,signed,verify,report,merge,unordered] [--cli PATH] [--keep]
 */
import { spawnSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readSync, rmSync, statSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { newSigningKey, writeKeyFile } from '../src/attest/keys.js';
import { isoTime } from '../src/attest/receipt.js';
import { ed25519Signer } from '../src/attest/signature.js';
import { canonicalize } from '../src/core/canonical-json.js';
import { hashFileInto, sha256Hex } from '../src/core/hash.js';
import { ENGINE } from '../src/core/version.js';
import { eachPlannedRun } from '../src/sim/experiment/plan.js';
import { playRun } from '../src/sim/experiment/play.js';
import { preset } from '../src/sim/experiment/presets.js';
import type { RunRecord } from '../src/sim/experiment/record.js';
import { type Experiment, parseExperiment } from '../src/sim/experiment/schema.js';
import { signCheckpoint, writeCheckpoints } from '../src/sim/transcript/checkpoint.js';
import { CHECKPOINT_TYPE, checkpointPath, ReceiptBuilder, signedLine } from '../src/sim/transcript/format.js';

const arg = (name: string, fallback: string) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? (process.argv[i + 1] as string) : fallback;
};
const runsPerCell = Number(arg('--runs-per-cell', '333334')); // 6 cells: 2,000,004 runs
const freshRunsPerCell = Number(arg('--fresh-runs-per-cell', String(runsPerCell)));
const steps = new Set(arg('--steps', 'fresh,fresh2,resume,signed,verify,report,merge,unordered').split(','));
const MAIN = resolve(arg('--cli', join(import.meta.dirname, '../dist/cli/main.js')));
/** Runs the signed file leaves out, for its resume to play and sign. */
const LEFT = 1000;
const dir = mkdtempSync(join(tmpdir(), 'witness-bench-stream-'));
const at = (name: string) => join(dir, name);

/** Writes text in large batches (few syscalls). */
function batched(path: string) {
  const fd = openSync(path, 'w');
  let batch = '';
  return {
    fd,
    add(text: string) {
      batch += text;
      if (batch.length > 1 << 22) this.flush();
    },
    flush() {
      writeSync(fd, batch);
      batch = '';
    },
    close() {
      this.flush();
      closeSync(fd);
    },
  };
}

/** Appends one file to an open one, 4 MiB at a time. */
function appendFile(fd: number, from: string): void {
  const src = openSync(from, 'r');
  const buffer = Buffer.alloc(1 << 22);
  for (let n = readSync(src, buffer); n > 0; n = readSync(src, buffer)) writeSync(fd, buffer, 0, n);
  closeSync(src);
}

/** The plain, unordered and signed files (see the module comment). */
async function synthesise(experiment: Experiment): Promise<number> {
  const templates = new Map<string, RunRecord>();
  for (const run of eachPlannedRun(experiment))
    if (!templates.has(run.cellKey)) templates.set(run.cellKey, await playRun(run, experiment));
  const key = newSigningKey('bench');
  writeKeyFile(at('bench.key.json'), key);
  const signer = ed25519Signer(key, 'sign the bench file');
  const receipts = new ReceiptBuilder(ENGINE, key.kid);
  const [plain, even, odd, signed] = ['plain.jsonl', 'unordered.jsonl', 'odd.jsonl', 'signed.jsonl'].map((f) =>
    batched(at(f)),
  ) as ReturnType<typeof batched>[];
  let count = 0;
  let head: string | null = null;
  for (const run of eachPlannedRun(experiment)) {
    const content = JSON.stringify({
      ...templates.get(run.cellKey)!,
      id: run.id,
      seq: run.seq,
      index: run.index,
      seed: run.seed,
    });
    plain!.add(`${content}\n`);
    (run.seq % 2 === 0 ? even : odd)!.add(`${content}\n`);
    if (run.seq >= experiment.runs * templates.size - LEFT) continue;
    const signing = receipts.signingText({
      run: run.id,
      seq: run.seq,
      seed: run.seed,
      cellText: canonicalize(run.cellKey),
      contentSha256: sha256Hex(content),
      prompts: null,
      prev: head,
    });
    signed!.add(`${signedLine(content, ReceiptBuilder.receipt(signing))}\n`);
    head = sha256Hex(signing);
    count++;
  }
  for (const f of [plain, odd, signed]) f!.close();
  even!.flush();
  appendFile(even!.fd, at('odd.jsonl'));
  even!.close();
  rmSync(at('odd.jsonl'));
  const base = {
    v: 1 as const,
    type: CHECKPOINT_TYPE as typeof CHECKPOINT_TYPE,
    experiment: experiment as unknown as Record<string, unknown>,
    shard: null,
    engine: ENGINE,
    prompts: null,
    cassette: null,
    line_signatures: false,
  };
  writeCheckpoints(checkpointPath(at('signed.jsonl')), [
    signCheckpoint(
      { ...base, count, head, key_id: key.kid, deployer: key.deployer, signed_at: isoTime(Date.now()) },
      signer,
    ),
  ]);
  return count + LEFT;
}

/** Runs one CLI step under /usr/bin/time and prints its peak RSS against `file`'s size. */
function step(name: string, args: string[], file: string): number | null {
  const t0 = Date.now();
  const r = spawnSync('/usr/bin/time', ['-f', '%M', process.execPath, MAIN, ...args], {
    encoding: 'utf8',
    maxBuffer: 1 << 26,
  });
  const kb = Number(r.stderr.trim().split('\n').pop());
  const mb = kb / 1024;
  const bytes = statSync(file).size;
  const size = `${(bytes / 1e6).toFixed(0)} MB`;
  console.log(
    `${name.padEnd(46)} ${String(r.status).padStart(4)} ${`${mb.toFixed(0)} MB`.padStart(9)} ${size.padStart(8)} ${((kb * 1024) / bytes).toFixed(3).padStart(8)} ${((Date.now() - t0) / 1000).toFixed(0).padStart(7)}${mb < 300 ? '' : '  over 300 MB'}`,
  );
  if (r.status !== 0) console.log(`  ${r.stderr.split('\n').slice(-4, -1).join('\n  ')}`);
  return r.status;
}

const header = () =>
  console.log(
    `\n${'step'.padEnd(46)} ${'exit'.padStart(4)} ${'peak RSS'.padStart(9)} ${'file'.padStart(8)} ${'RSS/file'.padStart(8)} ${'seconds'.padStart(7)}`,
  );
const paper = (runs: number) => ['--preset', 'paper-benign', '--runs', String(runs)];
console.log(`CLI: ${MAIN}`);
if (steps.has('fresh') || steps.has('fresh2')) {
  header();
  const fresh = at('fresh.jsonl');
  for (const [name, workers] of [
    ['fresh', '1'],
    ['fresh2', '2'],
  ] as const) {
    if (!steps.has(name)) continue;
    step(
      `fresh sweep, ${Number(freshRunsPerCell * 6).toLocaleString('en')} runs, --workers ${workers}`,
      ['sim', ...paper(freshRunsPerCell), '--workers', workers, '--out', fresh, '--quiet', '--json'],
      fresh,
    );
    rmSync(fresh, { force: true });
  }
}
const started = Date.now();
const experiment = parseExperiment({ ...preset('paper-benign'), runs: runsPerCell }, 'bench');
const planned = await synthesise(experiment);
console.log(
  `\nsynthesised ${planned.toLocaleString('en')} runs (plain, unordered, signed) in ${((Date.now() - started) / 1000).toFixed(0)} s: ${dir}`,
);
header();
const plain = at('plain.jsonl');
if (steps.has('resume'))
  step(
    'resume + summary (witness sim, same options)',
    ['sim', ...paper(runsPerCell), '--out', plain, '--quiet', '--json'],
    plain,
  );
if (steps.has('signed'))
  step(
    `signed resume (${LEFT} runs left) + summary`,
    ['sim', ...paper(runsPerCell), '--sign', at('bench.key.json'), '--out', at('signed.jsonl'), '--quiet', '--json'],
    at('signed.jsonl'),
  );
if (steps.has('verify')) {
  // After the signed resume the file is whole and must verify; without it, its last runs are missing (exit 1).
  const trusted = at('trusted.json');
  spawnSync(
    process.execPath,
    [
      MAIN,
      'keys',
      'add',
      at('bench.key.json'),
      '--dir',
      trusted,
      '--not-before',
      '2020-01-01T00:00:00Z',
      '--days',
      '36500',
    ],
    { stdio: 'ignore' },
  );
  step(
    'verify the signed file (witness verify --keys)',
    ['verify', at('signed.jsonl'), '--keys', trusted],
    at('signed.jsonl'),
  );
}
if (steps.has('report')) {
  step('report (witness report --json)', ['report', plain, '--json'], plain);
  step('report --by honest', ['report', plain, '--by', 'honest'], plain);
}
const merged = at('merged.jsonl');
for (const [name, input] of [
  ['merge', plain],
  ['unordered', at('unordered.jsonl')],
] as const) {
  if (!steps.has(name)) continue;
  const status = step(
    name === 'merge' ? 'merge, in seq order, with the plan' : 'merge, two shards concatenated, with the plan',
    ['sim', 'merge', input, ...paper(runsPerCell), '-o', merged],
    input,
  );
  // The merge must give back exactly the sweep's own file.
  if (status === 0 && hashFileInto(merged).digest().sha256 !== hashFileInto(plain).digest().sha256)
    console.log("  the merged file differs from the sweep's");
  rmSync(merged, { force: true });
}
if (!process.argv.includes('--keep')) rmSync(dir, { recursive: true, force: true });
