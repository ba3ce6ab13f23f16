/**
 * Runtime processes: `stopWhen` ends the whole process group as soon as the answer
 * is in the output (the tool listing reads one event and needs nothing after it).
 */
import { tmpdir } from 'node:os';
import { expect, it } from 'vitest';
import { runProcess } from '../../src/probe/process.js';

it('kills the process group once stopWhen holds for the output, long before the deadline', async () => {
  const started = Date.now();
  const out = await runProcess('echo ready; sleep 30; echo late', [], {
    cwd: tmpdir(),
    env: process.env,
    timeoutMs: 60_000,
    shell: true,
    stopWhen: (stdout) => stdout.includes('ready\n'),
  });
  expect(out.stdout).toBe('ready\n');
  expect(out.timedOut).toBe(false);
  expect(Date.now() - started).toBeLessThan(20_000);
}, 60_000);
