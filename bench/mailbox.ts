/**
 * Bench: durable mailbox sends per second, as a ratio to raw fsync'd appends of the
 * same size on the same disk, measured in the same run (goal ≥ 0.5).
 *
 * - baseline: one process appending a line the size of a stored message and calling
 *   fsync after each append, one at a time.
 * - stdio: one agent, one `witness mailbox serve` process, MCP SDK client; one send
 *   in flight (what a single agent does), then 8 and 32 in flight (a client that
 *   pipelines; 32 shows the server's own CPU limit, with commits in large groups).
 * - HTTP: one server process, 8 agents each with its own token and client, one send
 *   in flight per agent: the SDK client over global fetch, the SDK client over a
 *   node:http fetch, and plain JSON-RPC POSTs (what the server sustains when clients
 *   cost little: the 8 clients share this machine's cores with the server), and the
 *   same POSTs to an echo server that does nothing: the HTTP floor here. Then the
 *   same endpoint in MCP 2026-07-28 (stateless, no session): the SDK 2.4 client and
 *   plain POSTs carrying the per-request `_meta` and headers.
 * - HTTP through the MCP SDK's own `StreamableHTTPServerTransport` (bench/support/
 *   sdk-http-mailbox.ts: same runtime, store and tools), driven like the rows above:
 *   what the hand-written session transport (src/mailbox/http-session.ts) buys.
 * - stdio, 8 in flight, with the recipient subscribed to `mailbox://inbox` in its own
 *   server process (a subscription must not slow sends down); the row says
 *   how many notices the subscriber got.
 * - PostgreSQL: the same stdio (8 in flight) and HTTP rows on a mailbox in a
 *   fresh database of the local server, also as a ratio to a bare `INSERT … COMMIT`
 *   loop (one connection, one row of a message's size per transaction) on that
 *   database, measured before and after them.
 * - with a witness: the stdio (8 in flight) and HTTP JSON-RPC rows again with the server
 *   submitting checkpoints to a real `witness anchor serve` process (`--witness`, the
 *   default every 1000 receipts / 10 s), each right after the same row without; the
 *   ratio with/without is printed (goal ≥ 0.95: submitting is off the send's path).
 *   `--witness-rows` runs only these pairs, four times (`--rounds N`), with the witness's
 *   row first in every other round, and prints each row's median ratio, and the
 *   server's CPU per send with ÷ without (what the submitter costs the server itself,
 *   steadier than sends/s on a shared machine), and each row's send latency without /
 *   with (median over the pairs of the p99 and of the slowest send: a round that held
 *   up the serving thread would show there first).
 * CPU columns: the server process's CPU (from /proc, Linux) and this process's (the
 * clients) per send, so a reader sees which side limits the rate.
 * Every send is durable before it is acknowledged: the inbox line and its signed
 * call-log line are fsynced (group commit shares an fsync between concurrent sends).
 *
 * Run: npx tsx bench/mailbox.ts [--sends N] [--warm-up N] [--stores jsonl,postgres] [--witness-rows [--rounds N]]
 *      (defaults 4000 and 2000 per row, JSONL and PostgreSQL; PostgreSQL at $WITNESS_TEST_DATABASE_URL or postgres:///postgres)
 */
import { closeSync, existsSync, fsyncSync, mkdtempSync, openSync, readFileSync, writeSync } from 'node:fs';
import { request } from 'node:http';
import { Readable } from 'node:stream';
import { tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { type ChildProcess, spawn } from 'node:child_process';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { openPool } from '../src/attest/postgres.js';
import { newSigningKey, writeKeyFile } from '../src/attest/keys.js';
import { addAgent, initMailbox, mailboxVerifierKey, verifyMailbox } from '../src/mailbox/index.js';
import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from '@modelcontextprotocol/client';
import { jsonRpcSender as rawSender, keepAlive, modernJsonRpcSender } from './support/json-rpc-sender.js';
import { dropDatabases, freshDatabase } from './support/pg-database.js';

const ROOT = resolve(import.meta.dirname, '..');
const WITNESS = [
  process.execPath,
  '--import',
  pathToFileURL(join(ROOT, 'node_modules/tsx/dist/loader.mjs')).href,
  join(ROOT, 'src/cli/main.ts'),
];
const SENDS = numberArg('--sends', 4000);
/**
 * Sends before timing starts, in each server process. A long-running server is
 * measured in its steady state: with 200 sends of warm-up the server spent 1.9–2.5×
 * the CPU per send that it spends after 2000 (V8 compiles its hot paths late).
 */
const WARM_UP = numberArg('--warm-up', 2000);
/** `--witness-rows`: pairs of rows per kind (each pair one row without a witness, one with). */
const WITNESS_ROUNDS = numberArg('--rounds', 4);
const BODY = 'x'.repeat(200);
const AGENTS = Array.from({ length: 8 }, (_, i) => `agent${i}`);
/** USER_HZ, the unit of /proc/PID/stat times: 100 on every Linux this runs on. */
const CLOCK_TICKS = 100;

function numberArg(flag: string, fallback: number): number {
  const at = process.argv.indexOf(flag);
  if (at < 0) return fallback;
  const value = Number(process.argv[at + 1]);
  if (!Number.isInteger(value) || value < 0)
    throw new Error(`${flag} needs a whole number, got ${process.argv[at + 1]}`);
  return value;
}

interface Row {
  what: string;
  sends: number;
  seconds: number;
  /** CPU µs per send: the server process, the clients (this process). */
  serverCpu?: number;
  clientCpu?: number;
  /** PostgreSQL rows: sends/s over the same database's bare INSERT … COMMIT rate. */
  pgRatio?: number;
  /** Milliseconds from a send's request to its answer, over the measured sends: 99th percentile, slowest. */
  p99Ms?: number;
  maxMs?: number;
}

/** The measured sends' latencies (ms) while a row is timed; undefined during warm-up. */
let latencies: number[] | undefined;
const timed = (ms: number): void => {
  latencies?.push(ms);
};

/** Starts recording latencies; the returned function stops and gives the row's p99 and slowest. */
function latencyMeter(): () => { p99Ms?: number; maxMs?: number } {
  latencies = [];
  return () => {
    const sorted = (latencies ?? []).sort((a, b) => a - b);
    latencies = undefined;
    if (sorted.length === 0) return {};
    return { p99Ms: sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * 0.99))]!, maxMs: sorted.at(-1)! };
  };
}

const STORES = (() => {
  const at = process.argv.indexOf('--stores');
  return at < 0 ? ['jsonl', 'postgres'] : (process.argv[at + 1] ?? '').split(',');
})();

async function main(): Promise<void> {
  const work = mkdtempSync(join(tmpdir(), 'witness-bench-'));
  const lineBytes = Buffer.byteLength(
    `${JSON.stringify({ id: `msg_${'0'.repeat(36)}`, from: 'agent0', to: 'sink', body: BODY, sent_at: new Date().toISOString() })}\n`,
  );
  const rows: Row[] = [];
  const dirs: string[] = [];
  rows.push(baseline(join(work, 'raw.jsonl'), lineBytes, SENDS));
  const pairs: Array<[Row, Row]> = [];
  if (process.argv.includes('--witness-rows')) {
    const { dir, tokens } = await benchMailbox(join(work, 'mb'));
    dirs.push(dir);
    // Rounds (default four), the row with a witness first in every other one: neither side always runs warmer.
    for (let round = 0; round < WITNESS_ROUNDS; round++)
      pairs.push(...(await witnessPairs(dir, tokens, work, round % 2 === 1)));
    rows.push(...pairs.flat());
  } else if (STORES.includes('jsonl')) {
    const { dir, tokens } = await benchMailbox(join(work, 'mb'));
    dirs.push(dir);
    rows.push(await stdio(dir, 1));
    rows.push(await stdio(dir, 8));
    rows.push(await subscribed(dir, () => stdio(dir, 8, '', ', the recipient subscribed (another process)')));
    rows.push(await stdio(dir, 32)); // how far the server goes when the disk is not waited on
    rows.push(await http(dir, tokens, 'fetch'));
    rows.push(await http(dir, tokens, 'node:http'));
    rows.push(await http(dir, tokens, 'json-rpc'));
    rows.push(await http(dir, tokens, 'sdk-2026'));
    rows.push(await http(dir, tokens, 'json-rpc-2026'));
    rows.push(await http(dir, tokens, 'node:http', '', 'sdk'));
    rows.push(await http(dir, tokens, 'json-rpc', '', 'sdk'));
    rows.push(await httpFloor());
    pairs.push(...(await witnessPairs(dir, tokens, work)));
    rows.push(...pairs.flat());
  }
  if (STORES.includes('postgres')) rows.push(...(await postgresRows(join(work, 'mb-pg'), lineBytes, dirs)));
  rows.push(baseline(join(work, 'raw2.jsonl'), lineBytes, SENDS)); // again, so disk drift shows

  const last = rows[rows.length - 1]!;
  const base = (rows[0]!.sends / rows[0]!.seconds + last.sends / last.seconds) / 2;
  print(rows, base, lineBytes);
  printWitnessRatios(pairs);
  for (const dir of dirs) {
    const report = await verifyMailbox(dir);
    console.log(
      `\nverify ${dir}: ${report.ok ? 'clean' : 'FAILED'} (${report.calls} receipts, ${report.messages} messages)`,
    );
    if (!report.ok) process.exitCode = 1;
  }
  await dropDatabases();
}

async function benchMailbox(
  dir: string,
  store: { store?: 'postgres'; database?: string } = {},
): Promise<{ dir: string; tokens: Record<string, string> }> {
  await initMailbox(dir, { keyPath: join(dir, '..', `${basename(dir)}.key.json`), ...store });
  const tokens: Record<string, string> = {};
  for (const a of ['sink', ...AGENTS]) tokens[a] = (await addAgent(dir, a)).token;
  return { dir, tokens };
}

/** The PostgreSQL rows, between two bare INSERT … COMMIT loops on the mailbox's own database. */
async function postgresRows(dir: string, lineBytes: number, dirs: string[]): Promise<Row[]> {
  const url = await freshDatabase(`pg_bench_mailbox_${process.pid}`);
  const { tokens } = await benchMailbox(dir, { store: 'postgres', database: url });
  dirs.push(dir);
  const rows = [await insertCommit(url, lineBytes, SENDS)];
  rows.push(await stdio(dir, 8, 'PostgreSQL: '));
  rows.push(await http(dir, tokens, 'node:http', 'PostgreSQL: '));
  rows.push(await http(dir, tokens, 'json-rpc', 'PostgreSQL: '));
  rows.push(await http(dir, tokens, 'sdk-2026', 'PostgreSQL: '));
  rows.push(await http(dir, tokens, 'json-rpc-2026', 'PostgreSQL: '));
  rows.push(await insertCommit(url, lineBytes, SENDS));
  const pgBase = (rows[0]!.sends / rows[0]!.seconds + rows.at(-1)!.sends / rows.at(-1)!.seconds) / 2;
  for (const r of rows) r.pgRatio = r.sends / r.seconds / pgBase;
  return rows;
}

/** The database's own durable-write rate: one row of a message's size per transaction, one connection. */
async function insertCommit(url: string, bytes: number, n: number): Promise<Row> {
  const pool = await openPool(url, { purpose: 'bench database', max: 1, sessionSql: 'SET synchronous_commit = on' });
  const text = 'y'.repeat(bytes - 1);
  try {
    await pool.query('CREATE TABLE IF NOT EXISTS bench_bare (n bigserial PRIMARY KEY, text text NOT NULL)');
    const client = await pool.connect();
    const start = performance.now();
    try {
      for (let i = 0; i < n; i++) await client.query('INSERT INTO bench_bare (text) VALUES ($1)', [text]); // autocommit: one transaction each
    } finally {
      client.release();
    }
    return {
      what: 'PostgreSQL: bare INSERT … COMMIT (baseline)',
      sends: n,
      seconds: (performance.now() - start) / 1000,
    };
  } finally {
    await pool.end();
  }
}

function baseline(path: string, bytes: number, n: number): Row {
  const line = `${'y'.repeat(bytes - 1)}\n`;
  const fd = openSync(path, 'a');
  const start = performance.now();
  for (let i = 0; i < n; i++) {
    writeSync(fd, line);
    fsyncSync(fd);
  }
  const seconds = (performance.now() - start) / 1000;
  closeSync(fd);
  return { what: 'raw append + fsync (baseline)', sends: n, seconds };
}

/** No send limit: the bench measures throughput, and its sink never reads (tens of thousands unread). */
const NO_LIMITS = ['--rate-limit', '0', '--max-unread-messages', '0', '--max-unread-bytes', '0'];

/** Runs `row` while the sink, in a server process of its own, is subscribed to its inbox; the row's label counts the notices. */
async function subscribed(dir: string, row: () => Promise<Row>): Promise<Row> {
  const [command, ...args] = WITNESS;
  const transport = new StdioClientTransport({
    command: command!,
    args: [...args, 'mailbox', 'serve', '--dir', dir, '--agent', 'sink'],
    stderr: 'ignore',
  });
  const sink = new Client({ name: 'bench-sink', version: '0' });
  await sink.connect(transport);
  let notices = 0;
  sink.setNotificationHandler(ResourceUpdatedNotificationSchema, () => {
    notices++;
  });
  await sink.subscribeResource({ uri: 'mailbox://inbox' });
  try {
    const result = await row();
    return { ...result, what: `${result.what} (${notices} notices)` };
  } finally {
    await sink.close();
  }
}

/**
 * Each pair's ratio, then per row the median over its pairs against the goal: a shared
 * machine moves one row by ±7 % between identical runs, more than the effect measured.
 */
function printWitnessRatios(pairs: ReadonlyArray<[Row, Row]>): void {
  const byRow = new Map<
    string,
    { rate: number[]; cpu: number[]; p99: [number[], number[]]; max: [number[], number[]] }
  >();
  const ms = (v: number | undefined) => (v === undefined ? '?' : v.toFixed(1));
  for (const [without, withWitness] of pairs) {
    const ratio = withWitness.sends / withWitness.seconds / (without.sends / without.seconds);
    const cpu = (withWitness.serverCpu ?? Number.NaN) / (without.serverCpu ?? Number.NaN);
    console.log(
      `with a witness / without (${without.what}): sends/s ${ratio.toFixed(3)}, server CPU per send ${cpu.toFixed(3)}; ` +
        `p99 latency ${ms(without.p99Ms)} / ${ms(withWitness.p99Ms)} ms, slowest ${ms(without.maxMs)} / ${ms(withWitness.maxMs)} ms`,
    );
    const row = byRow.get(without.what) ?? { rate: [], cpu: [], p99: [[], []], max: [[], []] };
    row.rate.push(ratio);
    row.cpu.push(cpu);
    row.p99[0].push(without.p99Ms ?? Number.NaN);
    row.p99[1].push(withWitness.p99Ms ?? Number.NaN);
    row.max[0].push(without.maxMs ?? Number.NaN);
    row.max[1].push(withWitness.maxMs ?? Number.NaN);
    byRow.set(without.what, row);
  }
  for (const [what, { rate, cpu, p99, max }] of byRow) {
    const median = medianOf(rate);
    console.log(
      `with a witness / without (${what}), median of ${rate.length}: sends/s ${median.toFixed(3)} (goal ≥ 0.95: ${median >= 0.95 ? 'met' : 'not met'}), server CPU per send ${medianOf(cpu).toFixed(3)}; ` +
        `p99 latency ${ms(medianOf(p99[0]))} / ${ms(medianOf(p99[1]))} ms, slowest ${ms(medianOf(max[0]))} / ${ms(medianOf(max[1]))} ms (without / with)`,
    );
  }
}

function medianOf(xs: readonly number[]): number {
  const sorted = [...xs].sort((a, b) => a - b);
  const mid = sorted.length / 2;
  return sorted.length % 2 ? sorted[Math.floor(mid)]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** Rows without and with a witness (a real `witness anchor serve`), each pair back to back (`withFirst`: the row with a witness runs first). */
async function witnessPairs(
  dir: string,
  tokens: Record<string, string>,
  work: string,
  withFirst = false,
): Promise<Array<[Row, Row]>> {
  const keyPath = join(work, 'bench-witness.key.json');
  if (!existsSync(keyPath)) writeKeyFile(keyPath, newSigningKey('bench-witness'));
  const [command, ...args] = WITNESS;
  const proc = spawn(
    command!,
    [
      ...args,
      'anchor',
      'serve',
      '--key',
      keyPath,
      '--name',
      'bench.example/witness',
      '--state',
      join(work, `witness-${Date.now()}.db`),
      '--log',
      mailboxVerifierKey(dir),
      '--json',
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const ready = await new Promise<{ url: string; vkey: string }>((resolveReady, reject) => {
    let out = '';
    proc.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes('\n')) resolveReady(JSON.parse(out.split('\n')[0]!) as { url: string; vkey: string });
    });
    proc.once('exit', () => reject(new Error('the witness exited before it was ready')));
  });
  const flags = ['--witness', ready.url, '--witness-key', ready.vkey];
  try {
    const pairs: Array<[Row, Row]> = [];
    const pair = async (without: () => Promise<Row>, withWitness: () => Promise<Row>): Promise<[Row, Row]> => {
      if (!withFirst) return [await without(), await withWitness()];
      const first = await withWitness();
      return [await without(), first];
    };
    pairs.push(
      await pair(
        () => stdio(dir, 8),
        () => stdio(dir, 8, '', ', with a witness', flags),
      ),
    );
    pairs.push(
      await pair(
        () => http(dir, tokens, 'json-rpc'),
        () => http(dir, tokens, 'json-rpc', '', 'witness', flags),
      ),
    );
    return pairs;
  } finally {
    proc.kill('SIGTERM');
  }
}

async function stdio(dir: string, inFlight: number, label = '', suffix = '', extra: string[] = []): Promise<Row> {
  const [command, ...args] = WITNESS;
  const transport = new StdioClientTransport({
    command: command!,
    args: [...args, 'mailbox', 'serve', '--dir', dir, '--agent', 'agent0', ...NO_LIMITS, ...extra],
    stderr: 'ignore',
  });
  const client = new Client({ name: 'bench', version: '0' });
  await client.connect(transport);
  await Promise.all(Array.from({ length: inFlight }, () => send(client, Math.ceil(WARM_UP / inFlight))));
  const sends = Math.floor(SENDS / inFlight) * inFlight;
  const cpu = cpuMeter(transport.pid ?? undefined);
  const latency = latencyMeter();
  const start = performance.now();
  await Promise.all(Array.from({ length: inFlight }, () => send(client, Math.floor(SENDS / inFlight))));
  const seconds = (performance.now() - start) / 1000;
  const used = cpu(sends);
  const slowest = latency();
  await client.close();
  return { what: `${label}stdio, 1 agent, ${inFlight} in flight${suffix}`, sends, seconds, ...used, ...slowest };
}

type ClientKind = 'fetch' | 'node:http' | 'json-rpc' | 'sdk-2026' | 'json-rpc-2026';
const CLIENT_LABELS: Record<ClientKind, string> = {
  fetch: 'SDK client over fetch',
  'node:http': 'SDK client over node:http',
  'json-rpc': 'plain JSON-RPC POSTs (node:http)',
  'sdk-2026': 'MCP 2026-07-28, SDK 2.4 client over node:http (stateless)',
  'json-rpc-2026': 'MCP 2026-07-28, plain JSON-RPC POSTs (node:http, stateless)',
};

async function http(
  dir: string,
  tokens: Record<string, string>,
  clientKind: ClientKind,
  prefix = '',
  transport: 'witness' | 'sdk' = 'witness',
  extra: string[] = [],
): Promise<Row> {
  const [command, ...args] = WITNESS;
  const serve =
    transport === 'sdk'
      ? [...args.slice(0, -1), join(ROOT, 'bench/support/sdk-http-mailbox.ts'), dir]
      : [...args, 'mailbox', 'serve', '--dir', dir, '--http', '--port', '0', ...NO_LIMITS, ...extra];
  const proc = spawn(command!, serve, { stdio: ['ignore', 'ignore', 'pipe'] });
  const url = await listeningUrl(proc);
  const label = CLIENT_LABELS[clientKind];
  const senders = await Promise.all(AGENTS.map((a) => _sender(clientKind, url, tokens[a]!)));
  const via = transport === 'sdk' ? ", via the SDK's StreamableHTTPServerTransport" : '';
  return timeSenders(
    `${prefix}HTTP, ${AGENTS.length} agents, 1 in flight each, ${label}${via}${extra.includes('--witness') ? ', with a witness' : ''}`,
    proc,
    senders,
  );
}

/**
 * The floor under every HTTP row: a node:http server that parses the JSON body and
 * answers a fixed JSON-RPC result (no MCP, no disk), driven like the json-rpc row.
 */
const ECHO_SERVER = `
const { createServer } = require('node:http');
const server = createServer((req, res) => {
  let body = '';
  req.on('data', (d) => { body += d; });
  req.on('end', () => {
    const { id } = JSON.parse(body);
    const out = JSON.stringify({ jsonrpc: '2.0', id, result: { structuredContent: {} } });
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(out), 'mcp-session-id': 'echo' });
    res.end(out);
  });
});
server.listen(0, '127.0.0.1', () => process.stderr.write('listening on http://127.0.0.1:' + server.address().port + '/mcp\\n'));
`;

async function httpFloor(): Promise<Row> {
  const proc = spawn(process.execPath, ['-e', ECHO_SERVER], { stdio: ['ignore', 'ignore', 'pipe'] });
  const url = await listeningUrl(proc);
  const senders = await Promise.all(AGENTS.map(() => jsonRpcSender(url, 'unused')));
  return timeSenders('floor: the same POSTs to a node:http echo server (no MCP, no disk)', proc, senders);
}

/** The URL a server process prints on stderr ("listening on http://…"). */
function listeningUrl(proc: ChildProcess): Promise<string> {
  let err = '';
  return new Promise<string>((resolveUrl, reject) => {
    proc.stderr!.on('data', (d: Buffer) => {
      err += d.toString();
      const m = /listening on (http:\S+)/.exec(err);
      if (m?.[1]) resolveUrl(m[1]);
    });
    proc.once('exit', () => reject(new Error(`server exited: ${err}`)));
  });
}

/** Warms the server up, times SENDS sends spread over the senders, then stops the server. */
async function timeSenders(what: string, proc: ChildProcess, senders: Sender[]): Promise<Row> {
  await Promise.all(senders.map((s) => s.send(Math.ceil(WARM_UP / senders.length))));
  const per = Math.floor(SENDS / senders.length);
  const cpu = cpuMeter(proc.pid);
  const latency = latencyMeter();
  const start = performance.now();
  await Promise.all(senders.map((s) => s.send(per)));
  const seconds = (performance.now() - start) / 1000;
  const used = cpu(per * senders.length);
  const slowest = latency();
  await Promise.all(senders.map((s) => s.close()));
  proc.kill('SIGTERM');
  return { what, sends: per * senders.length, seconds, ...used, ...slowest };
}

interface Sender {
  send(n: number): Promise<void>;
  close(): Promise<void>;
}

function _sender(kind: ClientKind, url: string, token: string): Promise<Sender> {
  if (kind === 'json-rpc') return jsonRpcSender(url, token);
  if (kind === 'json-rpc-2026')
    return Promise.resolve({ send: modernJsonRpcSender(url, token, BODY), close: async () => undefined });
  if (kind === 'sdk-2026') return modernSdkSender(url, token);
  return sdkSender(url, token, kind);
}

/** The SDK 2.4 client pinned to MCP 2026-07-28 (server/discover, then one stateless POST per send). */
async function modernSdkSender(url: string, token: string): Promise<Sender> {
  const client = new ModernClient(
    { name: 'bench', version: '0' },
    { versionNegotiation: { mode: { pin: '2026-07-28' } } },
  );
  await client.connect(
    new ModernTransport(new URL(url), {
      fetch: nodeHttpFetch,
      requestInit: { headers: { Authorization: `Bearer ${token}` } },
    }),
  );
  return {
    send: async (n) => {
      for (let i = 0; i < n; i++) {
        const result = await client.callTool({ name: 'send_message', arguments: { to: 'sink', body: BODY } });
        if (result.isError) throw new Error(JSON.stringify(result.content));
      }
    },
    close: () => client.close(),
  };
}

/** An agent that speaks the protocol by hand (support/json-rpc-sender.ts). */
async function jsonRpcSender(url: string, token: string): Promise<Sender> {
  return { send: await rawSender(url, token, BODY, timed), close: async () => undefined };
}

async function sdkSender(url: string, token: string, clientHttp: 'fetch' | 'node:http'): Promise<Sender> {
  const client = new Client({ name: 'bench', version: '0' });
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
    ...(clientHttp === 'node:http' ? { fetch: nodeHttpFetch } : {}),
  });
  await client.connect(transport);
  return { send: (n) => send(client, n), close: () => client.close() };
}

/** Starts counting CPU; the returned function gives µs per send for the server (Linux /proc) and this process. */
function cpuMeter(pid: number | undefined): (sends: number) => { serverCpu?: number; clientCpu: number } {
  const serverCpu = (): number | undefined => {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      return ((Number(fields[11]) + Number(fields[12])) * 1e6) / CLOCK_TICKS; // utime + stime
    } catch {
      return undefined;
    }
  };
  const server0 = serverCpu();
  const client0 = process.cpuUsage();
  return (sends) => {
    const server1 = serverCpu();
    const client = process.cpuUsage(client0);
    return {
      ...(server0 !== undefined && server1 !== undefined ? { serverCpu: (server1 - server0) / sends } : {}),
      clientCpu: (client.user + client.system) / sends,
    };
  };
}

/**
 * A `fetch` for the SDK client built on node:http with keep-alive. Node 20's global
 * fetch costs several ms of CPU per request here, and the 8 clients share 2 cores
 * with the server; this row shows what the server itself sustains.
 */
const nodeHttpFetch = ((input: string | URL, init: RequestInit = {}) =>
  new Promise<Response>((resolveResponse, reject) => {
    const headers: Record<string, string> = {};
    new Headers(init.headers).forEach((value, key) => {
      headers[key] = value;
    });
    const req = request(
      input,
      { method: init.method ?? 'GET', headers, agent: keepAlive, ...(init.signal ? { signal: init.signal } : {}) },
      (res) => {
        const out = new Headers();
        for (const [key, value] of Object.entries(res.headers))
          if (value !== undefined) out.set(key, Array.isArray(value) ? value.join(', ') : value);
        const empty = res.statusCode === 202 || res.statusCode === 204;
        if (empty) res.resume();
        resolveResponse(
          new Response(empty ? null : (Readable.toWeb(res) as ReadableStream), {
            status: res.statusCode ?? 0,
            headers: out,
          }),
        );
      },
    );
    req.on('error', reject);
    req.end(typeof init.body === 'string' ? init.body : undefined);
  })) as typeof fetch;

async function send(client: Client, n: number): Promise<void> {
  for (let i = 0; i < n; i++) {
    const sent = performance.now();
    const result = await client.callTool({ name: 'send_message', arguments: { to: 'sink', body: BODY } });
    if (result.isError) throw new Error(JSON.stringify(result.content));
    timed(performance.now() - sent);
  }
}

function print(rows: Row[], base: number, lineBytes: number): void {
  console.log(`Mailbox durable sends vs raw fsync'd appends of ${lineBytes}-byte lines (same disk, same run)\n`);
  console.log(
    '| what | sends | seconds | per second | ratio to baseline | ratio to INSERT … COMMIT | server CPU µs/send | clients CPU µs/send |',
  );
  console.log('|---|---:|---:|---:|---:|---:|---:|---:|');
  const us = (v: number | undefined) => (v === undefined ? '' : v.toFixed(0));
  for (const r of rows) {
    const rate = r.sends / r.seconds;
    console.log(
      `| ${r.what} | ${r.sends} | ${r.seconds.toFixed(2)} | ${rate.toFixed(0)} | ${(rate / base).toFixed(2)} | ${r.pgRatio === undefined ? '' : r.pgRatio.toFixed(2)} | ${us(r.serverCpu)} | ${us(r.clientCpu)} |`,
    );
  }
  console.log(`\nbaseline (mean of both runs): ${base.toFixed(0)} appends/s; goal: ratio ≥ 0.5`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
