/**
 * Bench: what a witness costs a mailbox's sends (goal: within 5 %).
 *
 * Two mailboxes on the same disk, each served by its own live `witness mailbox serve`
 * process started the same way, one of them with `--witness` pointed at a real
 * `witness anchor serve` (the defaults: a checkpoint every 1000 receipts or 10 s).
 * Both are warmed up, then driven in alternating blocks (A B B A A B …), so whatever
 * the shared machine is doing lands on both about equally; each block pair gives one
 * ratio, and the row reports the median of those ratios with their range, for wall
 * time (sends/s) and for the server process's CPU per send. The witness's state is read
 * at the end: the row also says how many checkpoints it cosigned, so a row where no
 * submission happened cannot pass for a cheap witness.
 *
 * Rows: stdio (one agent, 8 sends in flight) and HTTP (8 agents, plain JSON-RPC POSTs,
 * one in flight each).
 *
 * Run: npx tsx bench/mailbox-witness.ts [--block N] [--blocks N] [--warm-up N]
 *      (defaults: blocks of 500 sends, 12 blocks per server per row, 2000 warm-up sends)
 * Exit 1 when a mailbox does not verify clean or the witness cosigned nothing.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { newSigningKey, writeKeyFile } from '../src/attest/keys.js';
import { addAgent, initMailbox, mailboxVerifierKey, verifyMailbox } from '../src/mailbox/index.js';
import { listWitnessed } from '../src/mailbox/witnessed.js';
import { jsonRpcSender } from './support/json-rpc-sender.js';

const ROOT = resolve(import.meta.dirname, '..');
const WITNESS = [process.execPath, '--import', pathToFileURL(join(ROOT, 'node_modules/tsx/dist/loader.mjs')).href, join(ROOT, 'src/cli/main.ts')];
const BLOCK = numberArg('--block', 500);
const BLOCKS = numberArg('--blocks', 12);
const WARM_UP = numberArg('--warm-up', 2000);
const BODY = 'x'.repeat(200);
const AGENTS = Array.from({ length: 8 }, (_, i) => `agent${i}`);
const NO_LIMITS = ['--rate-limit', '0', '--max-unread-messages', '0', '--max-unread-bytes', '0'];
/** USER_HZ, the unit of /proc/PID/stat times. */
const CLOCK_TICKS = 100;

function numberArg(flag: string, fallback: number): number {
  const at = process.argv.indexOf(flag);
  if (at < 0) return fallback;
  const value = Number(process.argv[at + 1]);
  if (!Number.isInteger(value) || value <= 0) throw new Error(`${flag} needs a positive whole number, got ${process.argv[at + 1]}`);
  return value;
}

/** A live server under test: sends a block, and reads its own process's CPU. */
interface Target {
  send(n: number): Promise<void>;
  pid: number;
  close(): Promise<void>;
}

interface Mailbox {
  dir: string;
  tokens: Record<string, string>;
}

async function main(): Promise<void> {
  const work = mkdtempSync(join(tmpdir(), 'witness-bench-witness-'));
  try {
    const plain = await mailbox(join(work, 'plain'));
    const witnessed = await mailbox(join(work, 'witnessed'));
    const witness = await startWitness(work, [mailboxVerifierKey(plain.dir), mailboxVerifierKey(witnessed.dir)]);
    const flags = ['--witness', witness.url, '--witness-key', witness.vkey];
    console.log(`What a witness costs mailbox sends: two live servers on two mailboxes (same disk), one submitting to a witness; ${BLOCKS} alternating blocks of ${BLOCK} sends each, after ${WARM_UP} warm-up sends.\n`);
    console.log('| row | sends/s without | sends/s with | with ÷ without: median block pair [range] | server CPU µs/send without | with | CPU ratio: median [range] | cosigned checkpoints |');
    console.log('|---|---:|---:|---:|---:|---:|---:|---:|');
    let worst = Number.POSITIVE_INFINITY;
    try {
      for (const [name, start] of [
        ['stdio, 1 agent, 8 in flight', (m: Mailbox, extra: string[]) => stdioTarget(m, extra)],
        ['HTTP, 8 agents, plain JSON-RPC POSTs', (m: Mailbox, extra: string[]) => httpTarget(m, extra)],
      ] as const) {
        const before = cosignedSize(witnessed.dir);
        const row = await interleaved(await start(plain, []), await start(witnessed, flags));
        const cosigned = cosignedSize(witnessed.dir);
        worst = Math.min(worst, row.rate.median);
        console.log(
          `| ${name} | ${row.without.toFixed(0)} | ${row.with.toFixed(0)} | ${fmt(row.rate)} | ${row.cpuWithout.toFixed(0)} | ${row.cpuWith.toFixed(0)} | ${fmt(row.cpu)} | up to ${cosigned} receipts (${cosigned - before} in this row) |`,
        );
        if (cosigned <= before) {
          console.error(`the witness cosigned nothing during "${name}": the row measured no submission`);
          process.exitCode = 1;
        }
      }
    } finally {
      witness.proc.kill('SIGTERM');
    }
    console.log(`\ngoal: with ÷ without ≥ 0.95 (median of block pairs): ${worst >= 0.95 ? 'yes' : 'no'} (worst row ${worst.toFixed(3)})`);
    for (const m of [plain, witnessed]) {
      const report = await verifyMailbox(m.dir);
      console.log(`verify ${m.dir}: ${report.ok ? 'clean' : 'FAILED'} (${report.calls} receipts, ${report.messages} messages)`);
      if (!report.ok) process.exitCode = 1;
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

interface Spread {
  median: number;
  min: number;
  max: number;
}
const fmt = (s: Spread) => `${s.median.toFixed(3)} [${s.min.toFixed(3)}–${s.max.toFixed(3)}]`;

function spread(xs: number[]): Spread {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  const median = s.length % 2 === 1 ? (s[m] as number) : ((s[m - 1] as number) + (s[m] as number)) / 2;
  return { median, min: s[0] as number, max: s.at(-1) as number };
}

/** Warms both servers up, then alternates blocks between them (A B, B A, …) and closes both. */
async function interleaved(without: Target, withWitness: Target) {
  try {
    await without.send(WARM_UP);
    await withWitness.send(WARM_UP);
    const rates: number[] = [];
    const cpus: number[] = [];
    const total = { without: { s: 0, cpu: 0 }, with: { s: 0, cpu: 0 } };
    for (let b = 0; b < BLOCKS; b++) {
      const order = b % 2 === 0 ? [without, withWitness] : [withWitness, without];
      const m = new Map<Target, { s: number; cpu: number }>();
      for (const t of order) m.set(t, await timeBlock(t));
      const a = m.get(without) as { s: number; cpu: number };
      const w = m.get(withWitness) as { s: number; cpu: number };
      rates.push(a.s / w.s);
      cpus.push(a.cpu / w.cpu);
      total.without.s += a.s;
      total.without.cpu += a.cpu;
      total.with.s += w.s;
      total.with.cpu += w.cpu;
    }
    const sends = BLOCK * BLOCKS;
    return {
      rate: spread(rates),
      cpu: spread(cpus),
      without: sends / total.without.s,
      with: sends / total.with.s,
      cpuWithout: total.without.cpu / sends,
      cpuWith: total.with.cpu / sends,
    };
  } finally {
    await without.close();
    await withWitness.close();
  }
}

/** One block: seconds of wall time and µs of server CPU it took. */
async function timeBlock(t: Target): Promise<{ s: number; cpu: number }> {
  const cpu0 = processCpuUs(t.pid);
  const start = performance.now();
  await t.send(BLOCK);
  const s = (performance.now() - start) / 1000;
  return { s, cpu: processCpuUs(t.pid) - cpu0 };
}

function processCpuUs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1e6) / CLOCK_TICKS;
}

async function mailbox(dir: string): Promise<Mailbox> {
  await initMailbox(dir, { keyPath: `${dir}.key.json` });
  const tokens: Record<string, string> = {};
  for (const a of ['sink', ...AGENTS]) tokens[a] = (await addAgent(dir, a)).token;
  return { dir, tokens };
}

/** The largest checkpoint size the witness cosigned for this mailbox (0 when none). */
function cosignedSize(dir: string): number {
  return Math.max(0, ...listWitnessed(dir).map((w) => w.size ?? 0));
}

async function startWitness(work: string, logs: string[]): Promise<{ url: string; vkey: string; proc: ChildProcess }> {
  const keyPath = join(work, 'bench-witness.key.json');
  writeKeyFile(keyPath, newSigningKey('bench-witness'));
  const [command, ...args] = WITNESS;
  const proc = spawn(command as string, [...args, 'anchor', 'serve', '--key', keyPath, '--name', 'bench.example/witness', '--state', join(work, 'witness.db'), ...logs.flatMap((l) => ['--log', l]), '--json'], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const ready = await new Promise<{ url: string; vkey: string }>((resolveReady, reject) => {
    let out = '';
    proc.stdout?.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes('\n')) resolveReady(JSON.parse(out.split('\n')[0] as string) as { url: string; vkey: string });
    });
    proc.once('exit', () => reject(new Error('the witness exited before it was ready')));
  });
  return { ...ready, proc };
}

async function stdioTarget(m: Mailbox, extra: string[]): Promise<Target> {
  const [command, ...args] = WITNESS;
  const transport = new StdioClientTransport({ command: command as string, args: [...args, 'mailbox', 'serve', '--dir', m.dir, '--agent', 'agent0', ...NO_LIMITS, ...extra], stderr: 'ignore' });
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

async function httpTarget(m: Mailbox, extra: string[]): Promise<Target> {
  const [command, ...args] = WITNESS;
  const proc = spawn(command as string, [...args, 'mailbox', 'serve', '--dir', m.dir, '--http', '--port', '0', ...NO_LIMITS, ...extra], { stdio: ['ignore', 'ignore', 'pipe'] });
  const url = await listeningUrl(proc);
  const senders = await Promise.all(AGENTS.map((a) => jsonRpcSender(url, m.tokens[a] as string, BODY)));
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


main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
