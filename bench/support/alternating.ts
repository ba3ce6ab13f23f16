/**
 * Two live mailbox servers measured against each other on a shared, noisy machine:
 * both warmed up, then driven in alternating blocks (A B, B A, A B, …) so whatever
 * else the machine does lands on both about equally. Each block pair gives one ratio
 * (candidate ÷ base, for sends/s and for the server process's CPU per send); a row
 * reports the median of those ratios with their range. Used by bench/mailbox-witness.ts
 * (a witness or not) and bench/mailbox-ab.ts (two checkouts of the code).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { jsonRpcSender } from './json-rpc-sender.js';

/** USER_HZ, the unit of /proc/PID/stat times. */
const CLOCK_TICKS = 100;
export const BODY = 'x'.repeat(200);
/** The agents of the HTTP rows; every bench mailbox also has `sink`, the recipient. */
export const AGENTS = Array.from({ length: 8 }, (_, i) => `agent${i}`);
export const NO_LIMITS = ['--rate-limit', '0', '--max-unread-messages', '0', '--max-unread-bytes', '0'];

/** `witness` of the checkout at `root`, run from its sources through its own tsx. */
export function witnessCommand(root: string): string[] {
  return [
    process.execPath,
    '--import',
    pathToFileURL(join(root, 'node_modules/tsx/dist/loader.mjs')).href,
    join(root, 'src/cli/main.ts'),
  ];
}

export function numberArg(flag: string, fallback: number): number {
  const at = process.argv.indexOf(flag);
  if (at < 0) return fallback;
  const value = Number(process.argv[at + 1]);
  if (!Number.isInteger(value) || value <= 0)
    throw new Error(`${flag} needs a positive whole number, got ${process.argv[at + 1]}`);
  return value;
}

/** A live server under test: sends a block, and names its process for CPU readings. */
export interface Target {
  send(n: number): Promise<void>;
  pid: number;
  close(): Promise<void>;
}

export interface Spread {
  median: number;
  min: number;
  max: number;
}
export const fmt = (s: Spread) => `${s.median.toFixed(3)} [${s.min.toFixed(3)}–${s.max.toFixed(3)}]`;

function spread(xs: number[]): Spread {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  const median = s.length % 2 === 1 ? (s[m] as number) : ((s[m - 1] as number) + (s[m] as number)) / 2;
  return { median, min: s[0] as number, max: s.at(-1) as number };
}

export interface Blocks {
  block: number;
  blocks: number;
  warmUp: number;
}

export interface PairRow {
  /** candidate sends/s ÷ base sends/s, per block pair. */
  rate: Spread;
  /** base CPU per send ÷ candidate CPU per send, per block pair (above 1: the candidate costs less). */
  cpu: Spread;
  baseRate: number;
  candidateRate: number;
  baseCpu: number;
  candidateCpu: number;
}

/** Warms both servers up, then alternates blocks between them and closes both. */
export async function interleaved(
  base: Target,
  candidate: Target,
  { block, blocks, warmUp }: Blocks,
): Promise<PairRow> {
  try {
    await base.send(warmUp);
    await candidate.send(warmUp);
    const rates: number[] = [];
    const cpus: number[] = [];
    const total = { base: { s: 0, cpu: 0 }, candidate: { s: 0, cpu: 0 } };
    for (let b = 0; b < blocks; b++) {
      const order = b % 2 === 0 ? [base, candidate] : [candidate, base];
      const m = new Map<Target, { s: number; cpu: number }>();
      for (const t of order) m.set(t, await timeBlock(t, block));
      const a = m.get(base) as { s: number; cpu: number };
      const c = m.get(candidate) as { s: number; cpu: number };
      rates.push(a.s / c.s);
      cpus.push(a.cpu / c.cpu);
      total.base.s += a.s;
      total.base.cpu += a.cpu;
      total.candidate.s += c.s;
      total.candidate.cpu += c.cpu;
    }
    const sends = block * blocks;
    return {
      rate: spread(rates),
      cpu: spread(cpus),
      baseRate: sends / total.base.s,
      candidateRate: sends / total.candidate.s,
      baseCpu: total.base.cpu / sends,
      candidateCpu: total.candidate.cpu / sends,
    };
  } finally {
    await base.close();
    await candidate.close();
  }
}

/** One block: seconds of wall time and µs of server CPU it took. */
async function timeBlock(t: Target, n: number): Promise<{ s: number; cpu: number }> {
  const cpu0 = processCpuUs(t.pid);
  const start = performance.now();
  await t.send(n);
  const s = (performance.now() - start) / 1000;
  return { s, cpu: processCpuUs(t.pid) - cpu0 };
}

function processCpuUs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1e6) / CLOCK_TICKS;
}

/** One stdio server for `agent0`, driven by the MCP SDK client with 8 sends in flight. */
export async function stdioTarget(witness: string[], dir: string, extra: string[]): Promise<Target> {
  const [command, ...args] = witness;
  const transport = new StdioClientTransport({
    command: command as string,
    args: [...args, 'mailbox', 'serve', '--dir', dir, '--agent', 'agent0', ...NO_LIMITS, ...extra],
    stderr: 'ignore',
  });
  const client = new Client({ name: 'bench', version: '0' });
  await client.connect(transport);
  const one = async (n: number) => {
    for (let i = 0; i < n; i++) {
      const result = await client.callTool({ name: 'send_message', arguments: { to: 'sink', body: BODY } });
      if (result.isError) throw new Error(JSON.stringify(result.content));
    }
  };
  return {
    pid: transport.pid as number,
    send: async (n) => {
      await Promise.all(Array.from({ length: 8 }, (_, k) => one(Math.floor(n / 8) + (k < n % 8 ? 1 : 0))));
    },
    close: () => client.close(),
  };
}

/** One HTTP server; its 8 agents send plain JSON-RPC POSTs, one in flight each. */
export async function httpTarget(
  witness: string[],
  dir: string,
  tokens: Record<string, string>,
  extra: string[],
): Promise<Target> {
  const [command, ...args] = witness;
  const proc = spawn(
    command as string,
    [...args, 'mailbox', 'serve', '--dir', dir, '--http', '--port', '0', ...NO_LIMITS, ...extra],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  const url = await listeningUrl(proc);
  const senders = await Promise.all(AGENTS.map((a) => jsonRpcSender(url, tokens[a] as string, BODY)));
  return {
    pid: proc.pid as number,
    send: async (n) => {
      await Promise.all(senders.map((s, k) => s(Math.floor(n / senders.length) + (k < n % senders.length ? 1 : 0))));
    },
    close: async () => {
      const exited = new Promise((r) => proc.once('exit', r));
      proc.kill('SIGTERM');
      await exited;
    },
  };
}

function listeningUrl(proc: ChildProcess): Promise<string> {
  let err = '';
  return new Promise<string>((resolveUrl, reject) => {
    proc.stderr?.on('data', (d: Buffer) => {
      err += d.toString();
      const found = /listening on (http:\S+)/.exec(err);
      if (found?.[1]) resolveUrl(found[1]);
    });
    proc.once('exit', () => reject(new Error(`server exited: ${err}`)));
  });
}
