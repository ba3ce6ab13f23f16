/**
 * Signed simulation transcripts through the real CLI (spawned processes, a real
 * SIGKILL): a signed `paper-benign` sweep with policy agents killed midway and
 * resumed, the same sweep sharded 1/2 + 2/2 and merged; `witness verify` is clean on
 * both and names each kind of tampering by line with its own reason (exit 1).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, watch, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { readKeyFile } from '../../src/attest/keys.js';
import { preset } from '../../src/sim/experiment/presets.js';
import { runExperiment } from '../../src/sim/experiment/run.js';
import { parseExperiment } from '../../src/sim/experiment/schema.js';
import { witnessBundle } from '../support/witness-bundle.js';

const dir = mkdtempSync(join(tmpdir(), 'witness-signed-'));
const at = (name: string) => join(dir, name);
// paper-benign with policy agents, 1000 runs per cell: long enough (6000 runs) to be killed midway.
const SWEEP = ['sim', '--preset', 'paper-benign', '--runs', '1000', '--quiet', '--sign', at('lab.key.json')];
const TOTAL = 6000;

interface Exit {
  code: number | null;
  out: string;
  err: string;
}

async function witness(args: string[]): Promise<Exit> {
  const [node, main] = await witnessBundle();
  const child = spawn(node as string, [main as string, ...args], { cwd: dir });
  return _collect(child);
}

async function _collect(child: ChildProcess): Promise<Exit> {
  let out = '';
  let err = '';
  child.stdout?.on('data', (d) => (out += d));
  child.stderr?.on('data', (d) => (err += d));
  const [code] = await once(child, 'exit');
  return { code, out, err };
}

const lineCount = (path: string) => (existsSync(path) ? readFileSync(path, 'utf8').split('\n').length - 1 : 0);

/** Resolves once `path` holds at least `n` complete lines, or `until` settles (woken by file-system events, not a timer). */
async function linesReached(path: string, n: number, until: Promise<unknown>): Promise<void> {
  let reached!: () => void;
  const watcher = watch(dir, () => {
    if (lineCount(path) >= n) reached();
  });
  try {
    await Promise.race([new Promise<void>((resolve) => (reached = resolve)), until]);
  } finally {
    watcher.close();
  }
}

interface Verdict {
  ok: boolean;
  runs: number;
  planned: number;
  problems: { code: string; line?: number; message: string }[];
}

/** `witness verify --json`, with each problem's line (`at: "line N"`) as a number. */
async function verify(file: string): Promise<{ exit: Exit; verdict: Verdict }> {
  const exit = await witness(['verify', file, '--keys', at('trusted.json'), '--json']);
  const { ok, details, problems } = JSON.parse(exit.out) as {
    ok: boolean;
    details: { runs: number; planned: number };
    problems: { code: string; at?: string; message: string }[];
  };
  const lines = problems.map(({ at, ...p }) =>
    at === undefined ? p : { ...p, line: Number(/^line (\d+)$/.exec(at)?.[1]) },
  );
  return { exit, verdict: { ok, runs: details.runs, planned: details.planned, problems: lines } };
}

let killedAt = 0;
let beforeResume: Verdict;

beforeAll(async () => {
  for (const args of [
    ['keys', 'new', '--deployer', 'lab', '--out', at('lab.key.json')],
    ['keys', 'new', '--deployer', 'lab', '--out', at('stranger.key.json')],
    ['keys', 'add', at('lab.key.json'), '--dir', at('trusted.json')],
  ]) {
    expect((await witness(args)).code).toBe(0);
  }
  // Killed midway, then the same command again.
  const [node, main] = await witnessBundle();
  const child = spawn(node as string, [main as string, ...SWEEP, '--out', at('sweep.jsonl')], {
    cwd: dir,
    stdio: 'ignore',
  });
  const exited = once(child, 'exit');
  // Early enough that the kill lands before the end even on a loaded machine.
  await linesReached(at('sweep.jsonl'), TOTAL / 20, exited);
  child.kill('SIGKILL');
  await exited;
  killedAt = lineCount(at('sweep.jsonl'));
  beforeResume = (await verify('sweep.jsonl')).verdict;
  expect((await witness([...SWEEP, '--out', at('sweep.jsonl')])).code).toBe(0);
  // Sharded, then merged.
  for (const shard of ['1/2', '2/2'])
    expect((await witness([...SWEEP, '--shard', shard, '--out', at(`part${shard[0]}.jsonl`)])).code).toBe(0);
  expect((await witness(['sim', 'merge', at('part1.jsonl'), at('part2.jsonl'), '-o', at('merged.jsonl')])).code).toBe(
    0,
  );
  // Material for forgeries: another plan's run (same key), and this plan's run signed by a key the verifier does not trust.
  const input = preset('paper-benign');
  await runExperiment({
    experiment: parseExperiment({ ...input, seed: 99, runs: 1 }),
    out: at('other-plan.jsonl'),
    sign: { key: readKeyFile(at('lab.key.json')) },
  });
  await runExperiment({
    experiment: parseExperiment({ ...input, runs: 1000 }),
    out: at('stranger.jsonl'),
    sign: { key: readKeyFile(at('stranger.key.json')) },
  });
}, 600_000);

describe('a signed paper-benign sweep killed with SIGKILL and resumed', () => {
  it('was killed midway, and verify then reports the lines no checkpoint signed yet', () => {
    expect(killedAt, 'the sweep should be killed midway; make it longer if this fails').toBeGreaterThan(0);
    expect(killedAt, `killed after ${killedAt} of ${TOTAL} lines; make the sweep longer if this fails`).toBeLessThan(
      TOTAL,
    );
    expect(beforeResume.ok).toBe(false);
    expect(
      beforeResume.problems.map((p) => p.code),
      JSON.stringify(beforeResume.problems),
    ).toContain('NOT_COVERED');
  });
  it('verifies clean once resumed: every planned run once, in order, every line chained and signed', async () => {
    const { exit, verdict } = await verify('sweep.jsonl');
    expect(exit.code).toBe(0);
    expect(verdict).toMatchObject({ ok: true, runs: TOTAL, planned: TOTAL, problems: [] });
  });
});

describe('the same sweep sharded 1/2 and 2/2 and merged', () => {
  it('verifies clean: both shard chains against their own checkpoints, the union against the plan', async () => {
    const { exit, verdict } = await verify('merged.jsonl');
    expect(exit.code).toBe(0);
    expect(verdict).toMatchObject({ ok: true, runs: TOTAL, planned: TOTAL, problems: [] });
  });
  it('holds the lines of the unsharded sweep, byte for byte once their receipts are removed', () => {
    const unsigned = (file: string) => readFileSync(at(file), 'utf8').replace(/,"receipt":\{[^{}]*\}\}$/gm, '}');
    expect(unsigned('merged.jsonl')).toBe(unsigned('sweep.jsonl'));
  });
});

/** A tampered copy of `file` (its checkpoint beside it), verified by the CLI. */
async function tampered(file: string, edit: (lines: string[]) => void): Promise<{ exit: Exit; verdict: Verdict }> {
  const lines = readFileSync(at(file), 'utf8').split('\n');
  edit(lines);
  const copy = `tampered-${Math.random().toString(36).slice(2)}.jsonl`;
  writeFileSync(at(copy), lines.join('\n'));
  copyFileSync(at(`${file}.checkpoint.json`), at(`${copy}.checkpoint.json`));
  return verify(copy);
}

const lineOf = (file: string, n: number) => readFileSync(at(file), 'utf8').split('\n')[n - 1] as string;
const runIdOf = (line: string) => (JSON.parse(line) as { id: string }).id;

const TAMPERS: [name: string, code: string, line: number, edit: (lines: string[]) => void][] = [
  [
    'an edited value',
    'CONTENT_MISMATCH',
    100,
    (l) => (l[99] = (l[99] as string).replace(/"rounds":(\d+)/, (_, r) => `"rounds":${Number(r) + 1}`)),
  ],
  ['a dropped run', 'RUN_MISSING', 200, (l) => l.splice(199, 1)],
  ['a duplicated run', 'DUPLICATE_RUN', 304, (l) => l.splice(303, 0, l[299] as string)],
  ['a run from another plan', 'NOT_IN_PLAN', 400, (l) => l.splice(399, 0, lineOf('other-plan.jsonl', 1))],
  [
    'a line signed by an unknown key',
    'UNKNOWN_KEY',
    500,
    (l) =>
      (l[499] = readFileSync(at('stranger.jsonl'), 'utf8')
        .split('\n')
        .find((s) => s.includes(`"id":"${runIdOf(l[499] as string)}"`)) as string),
  ],
];

for (const file of ['sweep.jsonl', 'merged.jsonl']) {
  describe(`witness verify on a tampered copy of the ${file === 'sweep.jsonl' ? 'resumed' : 'merged'} file`, () => {
    for (const [name, code, line, edit] of TAMPERS) {
      it(`reports ${name} at its line as ${code}, and as no other kind of tampering, exit 1`, async () => {
        const { exit, verdict } = await tampered(file, edit);
        expect(exit.code).toBe(1);
        expect(verdict.ok).toBe(false);
        expect(verdict.problems.filter((p) => p.code === code).map((p) => p.line)).toEqual([line]);
        const others = TAMPERS.map(([, c]) => c).filter((c) => c !== code);
        expect(verdict.problems.filter((p) => others.includes(p.code))).toEqual([]);
      });
    }
  });
}
