/**
 * @module
 * Runs a runtime's CLI as its own process group with a deadline: on timeout the
 * whole group (the runtime and every MCP server it started) is killed, and it is
 * killed again after a normal exit so no server outlives the probe. On `signal` (the
 * user's Ctrl-C) the group gets SIGTERM, SIGKILL after a grace, and the result waits
 * until the group is gone, so the probe can remove its workspace and exit with nothing left.
 */
import { spawn } from 'node:child_process';

export interface RunOptions {
  cwd: string;
  env: NodeJS.ProcessEnv;
  timeoutMs: number;
  /** Run through /bin/sh -c (the `command` adapter). */
  shell?: boolean;
  /** Kill the group as soon as this holds for the output so far (the answer is in; the rest is not needed). */
  stopWhen?: (stdout: string) => boolean;
  /** Stop the whole group (SIGTERM, then SIGKILL after GRACE_MS) when this aborts. */
  signal?: AbortSignal | undefined;
}

/** How long a stopped runtime gets to end its own servers before SIGKILL. */
export const GRACE_MS = 2000;

export interface ProcessResult {
  stdout: string;
  stderr: string;
  exitCode: number | null;
  timedOut: boolean;
  ms: number;
  /** Set when the executable could not be started at all. */
  spawnError?: string;
}

export function runProcess(bin: string, args: string[], options: RunOptions): Promise<ProcessResult> {
  const started = Date.now();
  if (options.signal?.aborted)
    return Promise.resolve({
      stdout: '',
      stderr: '',
      exitCode: null,
      timedOut: false,
      ms: 0,
      spawnError: 'not started: the probe was interrupted',
    });
  return new Promise((resolve) => {
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    const child = options.shell
      ? spawn('/bin/sh', ['-c', bin], {
          cwd: options.cwd,
          env: options.env,
          detached: true,
          stdio: ['ignore', 'pipe', 'pipe'],
        })
      : spawn(bin, args, { cwd: options.cwd, env: options.env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
      if (options.stopWhen?.(stdout)) killGroup();
    });
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
    });
    const killGroup = (signal: NodeJS.Signals = 'SIGKILL') => _signalGroup(child.pid, signal);
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup();
    }, options.timeoutMs);
    let grace: NodeJS.Timeout | undefined;
    const onAbort = () => {
      killGroup('SIGTERM');
      grace = setTimeout(() => killGroup(), GRACE_MS);
    };
    options.signal?.addEventListener('abort', onAbort, { once: true });
    let spawnError: string | undefined;
    child.on('error', (error) => {
      spawnError = error.message;
    });
    child.on('close', async (code) => {
      clearTimeout(timer);
      clearTimeout(grace);
      options.signal?.removeEventListener('abort', onAbort);
      killGroup();
      if (options.signal?.aborted) await _groupGone(child.pid);
      resolve({
        stdout: stripAnsi(stdout),
        stderr: stripAnsi(stderr),
        exitCode: code,
        timedOut,
        ms: Date.now() - started,
        ...(spawnError ? { spawnError } : {}),
      });
    });
  });
}

function _signalGroup(pid: number | undefined, signal: NodeJS.Signals | 0): boolean {
  if (pid === undefined) return false;
  try {
    process.kill(-pid, signal);
    return true;
  } catch {
    return false; // the group is already gone
  }
}

/** Waits (up to GRACE_MS) until no process of the group is left, after its SIGKILL. */
async function _groupGone(pid: number | undefined): Promise<void> {
  const until = Date.now() + GRACE_MS;
  while (_signalGroup(pid, 0) && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
}

export function stripAnsi(text: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: removing terminal colour codes
  return text.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, '');
}

/** Quotes one argument for /bin/sh. */
export function shellQuote(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}
