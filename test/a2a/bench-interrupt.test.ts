/**
 * `witness a2a bench` on Ctrl-C: a real bench process (three loopback processes) gets
 * SIGINT at its whole process group, as a terminal sends it. The trial in flight
 * finishes, no other starts, the finished trials are written marked interrupted, it
 * exits 130, and `witness verify` says partial — never valid as if the run were complete.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { witnessCommand } from '../mailbox/helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'witness-bench-int-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Live processes whose environment names `text` (the bench's children inherit its TMPDIR). */
function processesMentioning(text: string): number[] {
  return readdirSync('/proc')
    .filter((e) => /^\d+$/.test(e))
    .filter((e) => {
      try {
        return (
          !/^\d+ \(.*\) Z/s.test(readFileSync(`/proc/${e}/stat`, 'utf8')) &&
          readFileSync(`/proc/${e}/environ`, 'utf8').includes(text)
        );
      } catch {
        return false; // ended while being read
      }
    })
    .map(Number);
}

it('writes the finished trials marked interrupted and exits 130 on Ctrl-C; verify says partial', {
  timeout: 180_000,
}, async () => {
  const [node, ...args] = witnessCommand();
  const out = join(dir, 'results.json');
  const work = join(dir, 'tmp');
  spawnSync('mkdir', [work]);
  // Its own group, so the SIGINT to the group reaches the bench and what it started, as Ctrl-C would, and not vitest.
  // 150 trials of each of the four conditions: 600 planned.
  const bench = spawn(node!, [...args, 'a2a', 'bench', '--trials', '150', '--warmup', '0', '--out', out], {
    env: { ...process.env, TMPDIR: work },
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  const exited = new Promise<[number | null, NodeJS.Signals | null]>((resolve) =>
    bench.once('exit', (code, sig) => resolve([code, sig])),
  );
  bench.stdout.resume();
  await new Promise<void>((resolve, reject) => {
    bench.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
      if (/\d+\/600 trials/.test(stderr)) resolve(); // a tenth done: the trials are running
    });
    void exited.then(() => reject(new Error(`the bench ended before its first progress line: ${stderr}`)));
  });
  process.kill(-bench.pid!, 'SIGINT');
  const [code, signal] = await exited;
  const left = processesMentioning(work);
  for (const pid of left) process.kill(pid, 'SIGKILL');
  expect({ code, signal }, stderr).toEqual({ code: 130, signal: null });
  expect(left).toEqual([]);
  expect(readdirSync(work).filter((f) => f.startsWith('witness-e12-'))).toEqual([]); // its work folder (the child's key) removed
  expect(existsSync(out), stderr).toBe(true);
  const results = JSON.parse(readFileSync(out, 'utf8')) as {
    trials: Array<{ verdict: { ok: boolean } }>;
    interrupted?: { trials_recorded: number; trials_planned: number };
  };
  expect(results.interrupted).toEqual({
    at: expect.any(String),
    trials_recorded: results.trials.length,
    trials_planned: 600,
  });
  expect(results.trials.length).toBeGreaterThanOrEqual(60);
  expect(results.trials.length).toBeLessThan(600);
  // The trial in flight finished: none was cut into a failed verdict.
  expect(results.trials.every((t) => t.verdict.ok)).toBe(true);
  expect(stderr).toMatch(new RegExp(`interrupted after ${results.trials.length} of 600 trials`));

  const verify = spawnSync(node!, [...args, 'verify', out, '--json'], { encoding: 'utf8' });
  expect(verify.status, verify.stderr).toBe(1);
  const report = JSON.parse(verify.stdout) as { ok: boolean; summary: string; problems: Array<{ code: string }> };
  expect(report.ok).toBe(false);
  expect(report.summary).toMatch(
    new RegExp(
      `^partial \\(interrupted after ${results.trials.length} of 600 trials\\): E12 results, ${results.trials.length}/${results.trials.length} trials verified`,
    ),
  );
  expect(report.problems.map((p) => p.code)).toEqual(['INCOMPLETE']);
});
