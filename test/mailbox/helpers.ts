/**
 * Shared helpers for the mailbox tests: a temporary mailbox made through the real
 * CLI, the one way to start `witness` as a subprocess (tsx from source, so no build
 * step), real MCP SDK clients over stdio and Streamable HTTP, and polling with a
 * deadline instead of sleeps.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { runMain } from '../../src/cli/main.js';
import { memoryIo } from '../../src/cli/io.js';
import { freshDatabase } from '../attest/postgres.js';

export const ROOT = resolve(import.meta.dirname, '../..');
const MAIN = join(ROOT, 'src/cli/main.ts');
const TSX_LOADER = pathToFileURL(join(ROOT, 'node_modules/tsx/dist/loader.mjs')).href;

/** How to start `witness` as a real process: node + the tsx loader + the source entry. */
export function witnessCommand(): string[] {
  return [process.execPath, '--import', TSX_LOADER, MAIN];
}

export function tempDir(prefix = 'witness-mb-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

/** Runs the CLI in-process; throws with what it printed when the exit code is unexpected. */
export async function cli(
  argv: string[],
  expectCode = 0,
  cwd = process.cwd(),
): Promise<{ code: number; out: string; err: string }> {
  const io = memoryIo(cwd);
  const code = await runMain(argv, io);
  if (expectCode >= 0 && code !== expectCode)
    throw new Error(
      `witness ${argv.join(' ')} exited ${code}, expected ${expectCode}\nstdout: ${io.out}\nstderr: ${io.err}`,
    );
  return { code, out: io.out, err: io.err };
}

export interface TestMailbox {
  dir: string;
  keyPath: string;
  tokens: Record<string, string>;
  /** PostgreSQL: the mailbox's own database. */
  database?: string;
  /** Drops what the mailbox holds outside its folder (a PostgreSQL mailbox's database). */
  cleanup(): Promise<void>;
}

export type TestStore = 'jsonl' | 'sqlite' | 'postgres';

/** A fresh mailbox with `agents` registered, its key outside the directory; PostgreSQL: in a database of its own. */
export async function makeMailbox(
  agents: string[],
  options: { store?: TestStore; alg?: string } = {},
): Promise<TestMailbox> {
  const root = tempDir();
  const dir = join(root, 'mb');
  const keyPath = join(root, 'keys', 'mailbox.key');
  const db = options.store === 'postgres' ? await freshDatabase('mailbox') : undefined;
  try {
    await cli([
      'mailbox',
      'init',
      dir,
      '--key',
      keyPath,
      '--store',
      db?.url ?? options.store ?? 'jsonl',
      ...(options.alg ? ['--alg', options.alg] : []),
    ]);
    const tokens: Record<string, string> = {};
    for (const name of agents)
      tokens[name] = JSON.parse((await cli(['mailbox', 'add-agent', dir, name, '--json'])).out).token;
    return { dir, keyPath, tokens, ...(db ? { database: db.url } : {}), cleanup: async () => db?.drop() };
  } catch (error) {
    await db?.drop();
    throw error;
  }
}

export interface Connected {
  client: Client;
  close(): Promise<void>;
  pid?: number;
}

/** A real SDK client talking to a real `witness mailbox serve --agent` process over stdio. */
export async function stdioClient(
  dir: string,
  agent: string,
  extra: string[] = [],
): Promise<Connected & { transport: StdioClientTransport }> {
  const [command, ...args] = witnessCommand();
  const transport = new StdioClientTransport({
    command: command!,
    args: [...args, 'mailbox', 'serve', '--dir', dir, '--agent', agent, ...extra],
    stderr: 'pipe',
  });
  // The server's stderr, printed if it goes away before the test closes it: a crash says why.
  let stderr = '';
  transport.stderr?.on('data', (d: Buffer) => {
    stderr += d.toString();
  });
  let closing = false;
  const client = new Client({ name: 'witness-test', version: '0.0.0' });
  client.onclose = () => {
    // A server killed on purpose printed only its banner; one that failed printed why.
    const said = stderr.split('\n').filter((line) => line !== '' && !line.startsWith('witness mailbox: serving'));
    if (!closing && said.length > 0)
      console.error(`the stdio server for ${agent} (${dir}) closed before the test closed it; its stderr:\n${stderr}`);
  };
  await client.connect(transport);
  const close = () => {
    closing = true;
    return client.close();
  };
  return { client, transport, pid: transport.pid ?? undefined, close } as Connected & {
    transport: StdioClientTransport;
  };
}

export interface HttpServerProcess {
  url: string;
  proc: ChildProcess;
  stop(): Promise<void>;
}

/**
 * Starts `witness mailbox serve --http` and waits for the URL it prints; `wrap` runs
 * it inside another command (e.g. `ip netns exec NS`), with `env` added.
 */
export async function startHttp(
  dir: string,
  extra: string[] = [],
  options: { wrap?: string[]; env?: NodeJS.ProcessEnv } = {},
): Promise<HttpServerProcess> {
  const [command, ...args] = [...(options.wrap ?? []), ...witnessCommand()];
  const proc = spawn(command!, [...args, 'mailbox', 'serve', '--dir', dir, '--http', '--port', '0', ...extra], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...options.env },
  });
  let err = '';
  proc.stderr!.on('data', (d: Buffer) => {
    err += d.toString();
  });
  const url = await waitFor(
    () => /listening on (http:\S+)/.exec(err)?.[1],
    20_000,
    () => `server did not start: ${err}`,
  );
  return {
    url,
    proc,
    stop: async () => {
      if (proc.exitCode !== null) return;
      const exited = new Promise((r) => proc.once('exit', r));
      proc.kill('SIGTERM');
      await exited;
    },
  };
}

export async function httpClient(url: string, token: string, headers: Record<string, string> = {}): Promise<Connected> {
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { Authorization: `Bearer ${token}`, ...headers } },
  });
  const client = new Client({ name: 'witness-test', version: '0.0.0' });
  await client.connect(transport);
  return { client, close: () => client.close() };
}

/** Polls `probe` until it returns a value (not undefined/false) or the deadline passes. */
export async function waitFor<T>(
  probe: () => T | undefined | false | Promise<T | undefined | false>,
  timeoutMs = 10_000,
  describe: () => string = () => 'condition',
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`Timed out after ${timeoutMs} ms waiting for ${describe()}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** structuredContent of a successful tool call (throws with the text of a tool error). */
export async function call<T = Record<string, unknown>>(
  client: Client,
  name: string,
  args: Record<string, unknown> = {},
): Promise<T> {
  const result = await client.callTool({ name, arguments: args });
  if (result.isError) throw new Error(`${name} failed: ${JSON.stringify(result.content)}`);
  return result.structuredContent as T;
}

/** The text of a tool error (fails when the call succeeded). */
export async function callError(client: Client, name: string, args: Record<string, unknown> = {}): Promise<string> {
  const result = await client.callTool({ name, arguments: args });
  if (!result.isError) throw new Error(`${name} unexpectedly succeeded: ${JSON.stringify(result.structuredContent)}`);
  return (result.content as Array<{ text: string }>).map((c) => c.text).join('\n');
}
