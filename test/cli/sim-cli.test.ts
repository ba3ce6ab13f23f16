import { spawn } from 'node:child_process';
import { appendFileSync, existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';

const tempDir = () => mkdtempSync(join(tmpdir(), 'witness-cli-'));
const root = join(import.meta.dirname, '..', '..');

const cli = async (args: string[], cwd = tempDir()) => ({ ...(await runCli(args, cwd)), cwd });

describe('witness sim', () => {
  it('runs the smoke preset by default, prints the table and says where the results are', async () => {
    const r = await cli(['sim', '--quiet']);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/^every cell: 10 runs, h=6 may_exist \[0,50\] R=20\ncell\s+valid\s+invalid\s+no consensus/);
    expect(Math.max(...r.out.split('\n').map((l) => l.length))).toBeLessThanOrEqual(120);
    expect(r.err).toContain('results/smoke.jsonl');
    expect(existsSync(join(r.cwd, 'results', 'smoke.jsonl'))).toBe(true);
  });
  it('prints full labels and every column with --wide', async () => {
    const r = await cli(['sim', '--quiet', '--wide']);
    expect(r.out).toMatch(/^cell\s+runs\s+valid\s+invalid\s+none\s+timeout/);
    expect(r.out).toContain('policy:plurality h=6 b=2:split may_exist [0,50] R=20 ');
  });
  it('skips finished runs when the same command runs again', async () => {
    const first = await cli(['sim', '--quiet']);
    const again = await cli(['sim', '--quiet', '--json'], first.cwd);
    const summary = JSON.parse(again.out) as { ran: number; skipped: number; planned: number };
    expect(summary.ran).toBe(0);
    expect(summary.skipped).toBe(summary.planned);
  });
  it('prints a JSON summary with Wilson intervals per cell', async () => {
    const r = await cli(['sim', '--quiet', '--json', '--honest', '4', '--byzantine', '0..1', '--runs', '3']);
    const s = JSON.parse(r.out) as {
      cells: { runs: number; outcomes: { valid: { ci: { low: number; high: number } } } }[];
    };
    expect(s.cells).toHaveLength(4);
    expect(s.cells[0]!.runs).toBe(3);
    expect(s.cells[0]!.outcomes.valid.ci.high).toBeLessThanOrEqual(1);
  });
  it('shows progress lines on a non-terminal stderr', async () => {
    const r = await cli(['sim', '--runs', '2']);
    expect(r.err).toMatch(/runs \d+\/\d+/);
  });
  it('has --help with an example', async () => {
    const r = await cli(['sim', '--help']);
    expect(r.code).toBe(0);
    expect(r.out).toContain('Examples:');
    expect(r.out).toContain('--byzantine-strategy');
  });
  it('lists presets, policies and strategies with a sentence each', async () => {
    const r = await cli(['sim', 'list', '--json']);
    const lists = JSON.parse(r.out) as Record<string, { name: string; description: string }[]>;
    expect(lists.honestPolicies!.length).toBeGreaterThanOrEqual(3);
    expect(lists.byzantineStrategies!.length).toBeGreaterThanOrEqual(4);
    for (const item of [...lists.honestPolicies!, ...lists.byzantineStrategies!])
      expect(item.description).toMatch(/^[A-Z].+\.$/);
  });
});

describe('bad input: one clear line naming the field, exit 2', () => {
  const cases: [string, string[], RegExp][] = [
    ['unknown preset', ['sim', '--preset', 'nope'], /Unknown preset "nope"/],
    [
      'misspelt preset',
      ['sim', '--preset', 'paper-benin'],
      /Unknown preset "paper-benin"\. Did you mean "paper-benign"\?/,
    ],
    ['unknown honest policy', ['sim', '--honest-policy', 'nope'], /grid\.honestPolicy.*unknown honest policy "nope"/],
    [
      'unknown Byzantine strategy',
      ['sim', '--byzantine-strategy', 'nope'],
      /grid\.byzantineStrategy.*unknown Byzantine strategy "nope"/,
    ],
    ['N < 1', ['sim', '--total', '0'], /--total.*below the minimum of 1/],
    ['no honest agent', ['sim', '--honest', '0'], /--honest.*below the minimum of 1/],
    ['b > N', ['sim', '--total', '3', '--byzantine', '4'], /grid\.byzantine.*b must be less than N/],
    ['reversed value range', ['sim', '--range', '50..0'], /--range.*reversed/],
    ['reversed list range', ['sim', '--byzantine', '4..1'], /--byzantine.*reversed/],
    ['empty list', ['sim', '--byzantine', ''], /--byzantine.*empty/],
    ['bad shard', ['sim', '--shard', '3/2'], /--shard "3\/2"/],
    ['unknown option', ['sim', '--frobnicate'], /unknown option '--frobnicate'/],
  ];
  for (const [name, args, pattern] of cases) {
    it(`rejects ${name}`, async () => {
      const r = await cli([...args, '--quiet']);
      expect(r.code).toBe(2);
      expect(r.err.trim()).toMatch(pattern);
      expect(r.err.trim().split('\n')).toHaveLength(1);
    });
  }
  it('rejects an experiment file that is not YAML, naming the line', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'bad.yaml'), 'grid:\n  honest: [4, 8\n  runs: 3\n');
    const r = await cli(['sim', 'bad.yaml', '--quiet'], dir);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/bad\.yaml is not valid YAML or JSON at line \d+/);
  });
  it('rejects an experiment file with a wrong field, naming it', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'e.json'), JSON.stringify({ runs: 2, grid: { honest: 4, range: [10, 2] } }));
    const r = await cli(['sim', 'e.json', '--quiet'], dir);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/grid\.range: is reversed or empty/);
  });
  it('rejects an unknown field in an experiment file instead of ignoring it', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'e.yaml'), 'runs: 2\ngrid:\n  honest: 4\n  byzantines: 2\n');
    const r = await cli(['sim', 'e.yaml', '--quiet'], dir);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/byzantines/);
  });
  it('runs a valid YAML experiment file', async () => {
    const dir = tempDir();
    writeFileSync(
      join(dir, 'e.yaml'),
      'name: mine\nruns: 2\ngrid:\n  honest: [3, 4]\n  byzantine: 1\n  byzantineStrategy: stall\n',
    );
    const r = await cli(['sim', 'e.yaml', '--quiet'], dir);
    expect(r.code).toBe(0);
    expect(existsSync(join(dir, 'results', 'mine.jsonl'))).toBe(true);
  });
});

describe('witness report', () => {
  it('recomputes the table from a results file and reports corrupt lines by number', async () => {
    const first = await cli(['sim', '--quiet', '--out', 'r.jsonl']);
    const path = join(first.cwd, 'r.jsonl');
    const lines = readFileSync(path, 'utf8').split('\n');
    lines[1] = 'garbage';
    writeFileSync(path, lines.join('\n'));
    const r = await cli(['report', 'r.jsonl', '--json'], first.cwd);
    expect(r.code).toBe(0);
    expect(r.err).toContain('r.jsonl:2: skipped');
    const report = JSON.parse(r.out) as { runs: number };
    expect(report.runs).toBe(lines.filter(Boolean).length - 1);
  });
  it('says what to do when the file is missing', async () => {
    const r = await cli(['report', 'missing.jsonl']);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/witness sim --out/);
  });
});

describe('crash safety', () => {
  it('a sweep killed with SIGKILL and rerun ends with no duplicate and no missing run', async () => {
    const dir = tempDir();
    const out = join(dir, 'kill.jsonl');
    const args = [
      '--import',
      'tsx',
      join(root, 'src/cli/main.ts'),
      'sim',
      '--preset',
      'paper-benign',
      '--honest',
      '8',
      '--honest-policy',
      'stubborn',
      '--runs',
      '300',
      '--out',
      out,
      '--quiet',
    ];
    const child = spawn(process.execPath, args, { cwd: root, stdio: 'ignore' });
    const lines = () => (existsSync(out) ? readFileSync(out, 'utf8').split('\n').length - 1 : 0);
    const deadline = Date.now() + 30_000;
    while (lines() < 20 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
    child.kill('SIGKILL');
    await new Promise((r) => child.once('exit', r));
    const atKill = lines();
    expect(atKill, 'the sweep should be killed midway; make it longer if this fails').toBeLessThan(600);
    // A write cut off by a crash on another machine could leave a torn tail: simulate that too.
    appendFileSync(out, '{"id":"r-torn","seq":');
    const rerun = await cli(
      [
        'sim',
        '--preset',
        'paper-benign',
        '--honest',
        '8',
        '--honest-policy',
        'stubborn',
        '--runs',
        '300',
        '--out',
        out,
        '--quiet',
        '--json',
      ],
      dir,
    );
    expect(rerun.code).toBe(0);
    const summary = JSON.parse(rerun.out) as { skipped: number; ran: number; planned: number };
    expect(summary.skipped).toBeGreaterThanOrEqual(20);
    expect(summary.skipped + summary.ran).toBe(600);
    const ids = readFileSync(out, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => (JSON.parse(l) as { id: string }).id);
    expect(ids).toHaveLength(600);
    expect(new Set(ids).size).toBe(600);
  });
});
