/**
 * @module
 * Runs a runtime's CLI as its own process group with a deadline: on timeout the
 * whole group (the runtime and every MCP server it started) is killed, and it is
 * killed again after a normal exit so no server outlives the probe.
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
}

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
  return new Promise((resolve) => {
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    const child = options.shell
      ? spawn('/bin/sh', ['-c', bin], { cwd: options.cwd, env: options.env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] })
      : spawn(bin, args, { cwd: options.cwd, env: options.env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
      if (options.stopWhen?.(stdout)) killGroup();
    });
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
    });
    const killGroup = () => {
      if (child.pid === undefined) return;
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        // the group is already gone
      }
    };
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup();
    }, options.timeoutMs);
    let spawnError: string | undefined;
    child.on('error', (error) => {
      spawnError = error.message;
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      killGroup();
      resolve({ stdout: stripAnsi(stdout), stderr: stripAnsi(stderr), exitCode: code, timedOut, ms: Date.now() - started, ...(spawnError ? { spawnError } : {}) });
    });
  });
}

export function stripAnsi(text: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: removing terminal colour codes
  return text.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, '');
}

/** Quotes one argument for /bin/sh. */
export function shellQuote(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}
