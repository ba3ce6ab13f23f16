/**
 * `witness probe` stopped by a signal mid-run: a real `witness probe` process (the
 * bundled CLI), a real SIGINT or SIGTERM while the runtime's mailbox servers run. It
 * must exit 130 (SIGTERM: 143), leave no workspace (no mailbox key) in its temporary
 * folder, and leave no process behind — neither the runtime nor a `mailbox serve`.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startToolModel } from '../support/tool-model.js';
import { mailboxModel } from '../support/mailbox-model.js';
import { witnessBundle } from '../support/witness-bundle.js';
import { binOrWarn } from './runtime-helpers.js';

const made: string[] = [];
afterAll(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

/** A /proc file of a process, or '' once the process has ended. */
function procFile(pid: number | string, file: string): string {
  try {
    return readFileSync(`/proc/${pid}/${file}`, 'utf8');
  } catch {
    return '';
  }
}

/** Live (not zombie) processes whose command line or environment mentions `text` (the runtime inherits TMPDIR), by pid. */
function processesMentioning(text: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const state = /^\d+ \(.*\) (\S)/s.exec(procFile(entry, 'stat'))?.[1];
    if (state === undefined || state === 'Z') continue;
    if (procFile(entry, 'cmdline').includes(text) || procFile(entry, 'environ').includes(text))
      found.push(Number(entry));
  }
  return found;
}

/** Waits (polling /proc) until `ready` holds, or the process exits first. */
async function until(ready: () => boolean, exited: () => boolean): Promise<void> {
  while (!ready()) {
    if (exited()) throw new Error('the probe ended before it reached the point to interrupt');
    await new Promise((r) => setTimeout(r, 25));
  }
}

interface Interrupted {
  code: number | null;
  signal: NodeJS.Signals | null;
  stderr: string;
  leftFiles: string[];
  leftProcesses: number[];
}

/**
 * Runs `witness probe ARGS` with its own temporary folder (TMPDIR), sends `signal` once
 * a process of `runningBefore` mentions the workspace, and returns what was left.
 */
async function interruptProbe(args: string[], signal: NodeJS.Signals, runningBefore: RegExp): Promise<Interrupted> {
  const cmd = await witnessBundle();
  const tmp = mkdtempSync(join(tmpdir(), 'witness-probe-int-'));
  made.push(tmp);
  // Detached: its own group, so no signal the test sends reaches vitest, and what it leaves can be killed after.
  const child = spawn(cmd[0]!, [cmd[1]!, 'probe', ...args, '--server-command', JSON.stringify(cmd)], {
    env: { ...process.env, TMPDIR: tmp },
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => {
    stderr += d.toString();
  });
  child.stdout.resume();
  let done = false;
  const exited = new Promise<[number | null, NodeJS.Signals | null]>((resolve) =>
    child.once('exit', (code, sig) => resolve([code, sig])),
  );
  void exited.then(() => {
    done = true;
  });
  try {
    await until(
      () => processesMentioning(tmp).some((pid) => runningBefore.test(procFile(pid, 'cmdline').replaceAll('\0', ' '))),
      () => done,
    );
  } catch (error) {
    throw new Error(`${(error as Error).message}: ${stderr}`);
  }
  child.kill(signal);
  const [code, sig] = await exited;
  const leftFiles = readdirSync(tmp, { recursive: true }).map(String);
  const leftProcesses = processesMentioning(tmp);
  for (const pid of leftProcesses) process.kill(pid, 'SIGKILL');
  return { code, signal: sig, stderr, leftFiles, leftProcesses };
}

describe('witness probe on a signal', () => {
  it('exits 130 on SIGINT during a check, with no key file, no workspace and no mailbox server left', {
    timeout: 120_000,
  }, async () => {
    const out = await interruptProbe(['reference'], 'SIGINT', /mailbox serve .*--agent probe-agent/);
    expect({ code: out.code, signal: out.signal }, out.stderr).toEqual({ code: 130, signal: null });
    expect(out.leftFiles).toEqual([]);
    expect(out.leftProcesses).toEqual([]);
    expect(out.stderr).toMatch(/interrupted/i);
  });

  it('exits 143 on SIGTERM during a check, with nothing left behind', { timeout: 120_000 }, async () => {
    const out = await interruptProbe(
      ['reference', '--check', 'receive'],
      'SIGTERM',
      /mailbox serve .*--agent probe-peer/,
    );
    expect({ code: out.code, signal: out.signal }, out.stderr).toEqual({ code: 143, signal: null });
    expect(out.leftFiles).toEqual([]);
    expect(out.leftProcesses).toEqual([]);
  });

  const QWEN = binOrWarn('qwen');
  it.skipIf(!QWEN)(
    'stops a real runtime (Qwen Code) and the mailbox server it started on SIGINT, exit 130',
    { timeout: 180_000 },
    async () => {
      const model = await startToolModel(mailboxModel('mcp'));
      try {
        // Interrupted once Qwen Code has started its own `mailbox serve` (a child of the runtime, not of witness).
        const out = await interruptProbe(
          ['qwen', '--bin', QWEN!, '--model-endpoint', model.url, '--model', 'scripted', '--check', 'send'],
          'SIGINT',
          /mailbox serve .*--agent probe-agent/,
        );
        expect({ code: out.code, signal: out.signal }, out.stderr).toEqual({ code: 130, signal: null });
        expect(out.leftFiles).toEqual([]);
        expect(out.leftProcesses).toEqual([]);
      } finally {
        await model.close();
      }
    },
  );
});
