/**
 * Ctrl-C on a rule-based sweep: a policy-agent game resolves only microtasks, so a
 * loop that never yields would run to the end with the signal pending. The real CLI
 * is spawned from source, sent SIGINT once the results file grows, and must exit 130
 * long before the sweep could end (it yields between runs: well under a second on an
 * idle machine; the bound here is loose because the machine is shared, and a loop
 * that never yields takes minutes); rerunning the same command finishes the sweep.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');
const MAIN = join(ROOT, 'src/cli/main.ts');

function lines(path: string): number {
  return readFileSync(path, 'utf8').split('\n').filter(Boolean).length;
}

async function interrupt(args: string[], out: string): Promise<{ code: number | null; stopMs: number; err: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', MAIN, ...args], {
    cwd: ROOT,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let err = '';
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  // Wait until new runs are being written: the sweep is in its game loop (its handler is set).
  const before = existsSync(out) ? statSync(out).size : 0;
  const deadline = Date.now() + 60_000;
  while (!(existsSync(out) && statSync(out).size > before)) {
    if (Date.now() > deadline) throw new Error(`the sweep wrote nothing in 60 s: ${err}`);
    await new Promise((r) => setTimeout(r, 20));
  }
  const sent = Date.now();
  child.kill('SIGINT');
  const code = await exited;
  return { code, stopMs: Date.now() - sent, err };
}

describe('SIGINT stops a rule-based sweep', () => {
  for (const workers of ['1', '2']) {
    it(`promptly with exit 130 and a resumable file (--workers ${workers})`, { timeout: 240_000 }, async () => {
      const dir = mkdtempSync(join(tmpdir(), 'witness-sigint-'));
      const out = join(dir, 'r.jsonl');
      // 120,000 planned runs: minutes of play, so the sweep cannot finish before the signal.
      const args = [
        'sim',
        '--preset',
        'paper-benign',
        '--runs',
        '20000',
        '--quiet',
        '--workers',
        workers,
        '--out',
        out,
      ];
      const first = await interrupt(args, out);
      expect(first.code).toBe(130);
      expect(first.err).toContain('rerun the same command to resume');
      expect(first.stopMs).toBeLessThan(15_000);
      const kept = lines(out);
      expect(kept).toBeGreaterThan(0);
      expect(kept).toBeLessThan(120_000);
      // The file resumes: a second interrupted session keeps every earlier line and adds more.
      const second = await interrupt(args, out);
      expect(second.code).toBe(130);
      expect(second.err).toMatch(/already there/);
      expect(lines(out)).toBeGreaterThanOrEqual(kept);
    });
  }
});
