/**
 * @module
 * E12's two other processes as the bench starts and stops them: the MCP tool server and
 * the child A2A agent, each a Node process of its own running `e12-process` (this
 * package's library, never its CLI), on loopback, the child holding its own key. Each
 * says it is ready with `{"url": …}` as its first stdout line; SIGTERM stops it, and so
 * does the end of its stdin, which only the bench holds: a bench that dies, however it
 * dies, leaves no server running.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { dirname, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import * as z from 'zod';
import { WitnessError } from '../core/errors.js';

/** What one process is given, as the JSON of its one argument. */
export const E12ProcessSchema = z.discriminatedUnion('role', [
  z.strictObject({ role: z.literal('tool') }),
  z.strictObject({
    role: z.literal('child'),
    /** The child deployer's key file. */
    key: z.string().min(1),
    /** Where the child keeps its tasks (as `witness a2a serve --task-store`). */
    taskStore: z.string().min(1),
    /** The MCP endpoint of the tool process. */
    toolUrl: z.string().min(1),
    /** The co-signing service of each parent deployer. */
    cosigners: z.record(z.string(), z.string()),
    /** The backend that answers, as agent-backend.ts chooses it. */
    agent: z.string(),
    endpoint: z.string().optional(),
    model: z.string().optional(),
  }),
]);
export type E12Process = z.infer<typeof E12ProcessSchema>;

const _WHAT: Record<E12Process['role'], string> = {
  tool: "E12's MCP tool server",
  child: "E12's child agent",
};

/** How to run the entry: the built module, or its source through tsx (tests, a checkout). */
function _entry(): string[] {
  const here = fileURLToPath(import.meta.url);
  const ext = here.endsWith('.ts') ? 'ts' : 'js';
  const entry = join(dirname(here), `e12-process.${ext}`);
  return ext === 'ts' ? ['--import', 'tsx', entry] : [entry];
}

/**
 * Starts the process for `options`, adds it to `processes` (at once, so a failure later
 * still stops it) and resolves with the URL it prints when it listens.
 */
export async function startE12Process(options: E12Process, processes: ChildProcess[]): Promise<string> {
  const what = _WHAT[options.role];
  // Its own process group: a Ctrl-C at the terminal reaches only the bench, which lets
  // the trial in flight finish, then stops this process itself (stopE12Process). The
  // package root as working folder: from source, `--import tsx` is resolved there.
  const proc = spawn(process.execPath, [..._entry(), JSON.stringify(options)], {
    cwd: resolve(dirname(fileURLToPath(import.meta.url)), '../..'),
    stdio: ['pipe', 'pipe', 'pipe'],
    detached: true,
  });
  processes.push(proc);
  let stderr = '';
  proc.stderr?.on('data', (d: Buffer) => {
    stderr = (stderr + d.toString('utf8')).slice(-4000);
  });
  const lines = createInterface({ input: proc.stdout as NodeJS.ReadableStream });
  return new Promise<string>((resolveUrl, reject) => {
    proc.once('error', (cause) =>
      reject(new WitnessError('IO', `${what} could not be started: ${cause.message}`, { cause })),
    );
    proc.once('exit', (code, signal) =>
      reject(new WitnessError('IO', `${what} exited (${code ?? signal}) before it was ready:\n${stderr}`)),
    );
    lines.once('line', (line) => {
      try {
        const url = (JSON.parse(line) as { url?: unknown }).url;
        if (typeof url !== 'string') throw new Error('no url');
        resolveUrl(url);
      } catch {
        reject(new WitnessError('IO', `${what} printed ${JSON.stringify(line)} instead of {"url": …}.`));
      }
    });
  });
}

/** Stops a process startE12Process started (SIGTERM) and waits until it has exited. */
export async function stopE12Process(proc: ChildProcess): Promise<void> {
  if (proc.exitCode !== null || proc.signalCode !== null) return;
  const exited = new Promise<void>((resolveExit) => proc.once('exit', () => resolveExit()));
  proc.kill('SIGTERM');
  await exited;
}
