/**
 * One writer per results file: a sweep holds `FILE.lock` (O_EXCL, its pid, host,
 * boot and start time) while it writes. A second sweep, or a merge into the file, is
 * refused with exit 2 naming the holder; a lock left by a killed sweep (a dead pid on
 * this host) is broken and the file resumes. The real CLI is spawned from source for
 * the sweeps that must be other processes.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { lockFile } from '../../src/core/file-lock.js';
import { preset } from '../../src/sim/experiment/presets.js';
import { runExperiment } from '../../src/sim/experiment/run.js';
import { parseExperiment } from '../../src/sim/experiment/schema.js';
import { startScriptedServer } from '../llm/scripted-server.js';
import { runCli as cli } from '../support/cli.js';

const ROOT = resolve(import.meta.dirname, '../..');
const MAIN = join(ROOT, 'src/cli/main.ts');
/** 120,000 planned runs: minutes of play, so the spawned sweep is still writing while the test runs. */
const LONG = ['sim', '--preset', 'paper-benign', '--runs', '20000', '--quiet'];

const children: ChildProcess[] = [];
afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null) c.kill('SIGKILL');
});

/** Spawns a sweep writing `out` and resolves once it has written runs (it holds the lock then). */
async function sweeping(out: string): Promise<{ child: ChildProcess; exited: Promise<number | null> }> {
  const child = spawn(process.execPath, ['--import', 'tsx', MAIN, ...LONG, '--out', out], {
    cwd: ROOT,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  children.push(child);
  let err = '';
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  const deadline = Date.now() + 60_000;
  while (!(existsSync(out) && statSync(out).size > 0)) {
    if (Date.now() > deadline || child.exitCode !== null) throw new Error(`the sweep wrote nothing: ${err}`);
    await new Promise((r) => setTimeout(r, 20));
  }
  return { child, exited };
}

const ids = (path: string) =>
  readFileSync(path, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => (JSON.parse(l) as { id: string }).id);
const experiment = () => parseExperiment({ ...preset('paper-benign'), runs: 20000 });

describe('one writer per results file', () => {
  it('refuses a second sweep while another process writes the file, and the file has each run once', {
    timeout: 120_000,
  }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'witness-lock-'));
    const out = join(dir, 'dup.jsonl');
    const { child, exited } = await sweeping(out);
    const stop = new AbortController();
    const second = runExperiment({ experiment: experiment(), out, signal: stop.signal, onRecord: () => stop.abort() });
    await expect(second).rejects.toThrow(
      new RegExp(`dup\\.jsonl is being written by another process: pid ${child.pid}, since \\d{4}-\\d\\d-\\d\\dT`),
    );
    child.kill('SIGINT');
    expect(await exited).toBe(130);
    expect(existsSync(`${out}.lock`)).toBe(false);
    const all = ids(out);
    expect(new Set(all).size).toBe(all.length);
  });
  it('exits 2 from the CLI, with or without --out, naming the holder and leaving the file as it was', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'witness-lock-'));
    for (const [args, file] of [
      [['--out', 'r.jsonl'], 'r.jsonl'],
      [[], 'results/smoke.jsonl'],
    ] as const) {
      expect((await cli(['sim', '--runs', '2', '--quiet', ...args], cwd)).code).toBe(0);
      const path = join(cwd, file);
      const before = readFileSync(path, 'utf8');
      const held = lockFile(path, 'results file');
      try {
        const r = await cli(['sim', '--runs', '3', '--quiet', ...args], cwd);
        expect(r.code).toBe(2);
        expect(r.err).toMatch(
          new RegExp(`is being written by another process: pid ${process.pid}, since .*one writer per results file`),
        );
        expect(readFileSync(path, 'utf8')).toBe(before);
      } finally {
        held.release();
      }
      expect((await cli(['sim', '--runs', '3', '--quiet', ...args], cwd)).code).toBe(0);
    }
  });
  it('breaks the lock of a sweep that was killed (SIGKILL) and resumes the file', { timeout: 120_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'witness-lock-'));
    const out = join(dir, 'r.jsonl');
    const { child, exited } = await sweeping(out);
    child.kill('SIGKILL');
    await exited;
    expect(existsSync(`${out}.lock`)).toBe(true);
    const stop = new AbortController();
    const resumed = await runExperiment({
      experiment: experiment(),
      out,
      signal: stop.signal,
      keepRecords: false,
      onRecord: () => stop.abort(),
    });
    expect(resumed.skipped).toBeGreaterThan(0);
    expect(resumed.ran).toBeGreaterThan(0);
    expect(existsSync(`${out}.lock`)).toBe(false);
  });
  it('refuses a lock held on another host (its process cannot be seen), naming the host', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'witness-lock-'));
    const owner = { pid: 1234, host: `not-${hostname()}`, boot: '', start: '', nonce: 'n', since: Date.now() };
    writeFileSync(join(cwd, 'r.jsonl.lock'), `${JSON.stringify(owner)}\n`);
    const r = await cli(['sim', '--runs', '2', '--quiet', '--out', 'r.jsonl'], cwd);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/pid 1234 on host not-.*remove .*r\.jsonl\.lock/);
    expect(existsSync(join(cwd, 'r.jsonl'))).toBe(false);
  });
  it('refuses a merge into a file a sweep is writing', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'witness-lock-'));
    expect((await cli(['sim', '--runs', '2', '--quiet', '--out', 'a.jsonl'], cwd)).code).toBe(0);
    const held = lockFile(join(cwd, 'all.jsonl'), 'results file');
    try {
      const r = await cli(['sim', 'merge', 'a.jsonl', '-o', 'all.jsonl'], cwd);
      expect(r.code).toBe(2);
      expect(r.err).toMatch(/all\.jsonl is being written by another process/);
      expect(existsSync(join(cwd, 'all.jsonl'))).toBe(false);
    } finally {
      held.release();
    }
  });
});

describe('a sweep refused by the lock', () => {
  it('touches no cassette it would record (the holder may be writing it)', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'witness-lock-'));
    const server = await startScriptedServer(() => ({}));
    try {
      const held = lockFile(join(cwd, 'r.jsonl'), 'results file');
      try {
        const r = await cli(
          [
            'sim',
            '--quiet',
            '--honest',
            '3',
            '--rounds',
            '2',
            '--runs',
            '1',
            '--agents',
            'llm',
            '--model',
            'scripted',
            '--endpoint',
            server.url,
            '--record',
            'c.jsonl',
            '--out',
            'r.jsonl',
          ],
          cwd,
        );
        expect(r.code).toBe(2);
        expect(r.err).toMatch(/being written by another process/);
      } finally {
        held.release();
      }
      expect(existsSync(join(cwd, 'c.jsonl'))).toBe(false);
    } finally {
      await server.close();
    }
  });
});
