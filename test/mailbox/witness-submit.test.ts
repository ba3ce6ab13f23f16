/**
 * Mailbox servers submitting to witnesses, end to end with real processes: two
 * `witness anchor serve` (SQLite state), two `witness mailbox serve --http` on one
 * PostgreSQL mailbox, real MCP clients. Shutdown submits the final checkpoint; a
 * restore of the database to an earlier dump is caught by `verify --witness
 * --witness-url` (TRUNCATED, then INCONSISTENT after more sends), and both witnesses
 * refuse the servers' next checkpoints with the protocol's codes (409, then 422).
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newSigningKey, writeKeyFile } from '../../src/attest/keys.js';
import { mailboxVerifierKey, readWitnessed } from '../../src/mailbox/index.js';
import {
  call,
  cli,
  type Connected,
  httpClient,
  type HttpServerProcess,
  makeMailbox,
  startHttp,
  type TestMailbox,
  tempDir,
  waitFor,
  witnessCommand,
} from './helpers.js';

interface WitnessProcess {
  url: string;
  vkey: string;
  proc: ChildProcess;
}

let mb: TestMailbox;
let work: string;
const witnesses: WitnessProcess[] = [];
const running: HttpServerProcess[] = [];
const clients: Connected[] = [];

async function startWitness(name: string, logVkey: string): Promise<WitnessProcess> {
  const keyPath = join(work, `${name.replace(/\W/g, '_')}.key.json`);
  writeKeyFile(keyPath, newSigningKey(`${name}-operator`));
  const [command, ...args] = witnessCommand();
  const proc = spawn(
    command!,
    [
      ...args,
      'anchor',
      'serve',
      '--key',
      keyPath,
      '--name',
      name,
      '--state',
      join(work, `${name.replace(/\W/g, '_')}.db`),
      '--log',
      logVkey,
      '--json',
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let out = '';
  let err = '';
  proc.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  proc.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const line = await waitFor(
    () => out.includes('\n') && out.split('\n')[0],
    20_000,
    () => `witness ${name} did not start: ${err}`,
  );
  const ready = JSON.parse(line) as { url: string; vkey: string };
  return { url: ready.url, vkey: ready.vkey, proc };
}

/** Both mailbox servers, each submitting to both witnesses. */
async function startServers(extra: string[]): Promise<HttpServerProcess[]> {
  const flags = witnesses.flatMap((w) => ['--witness', w.url, '--witness-key', w.vkey]);
  const servers: HttpServerProcess[] = [];
  for (let i = 0; i < 2; i++) servers.push(await startHttp(mb.dir, ['--rate-limit', '0', ...flags, ...extra]));
  running.push(...servers);
  return servers;
}

async function stopAll(servers: HttpServerProcess[]): Promise<void> {
  await Promise.all(servers.map((s) => s.stop()));
}

/** `n` sends through each server (alice on the first, bob on the second). */
async function sendThrough(servers: HttpServerProcess[], n: number, tag: string): Promise<void> {
  const [a, b] = await Promise.all([
    httpClient(servers[0]!.url, mb.tokens.alice!),
    httpClient(servers[1]!.url, mb.tokens.bob!),
  ]);
  clients.push(a, b);
  await Promise.all(
    Array.from({ length: n }, (_, i) => [
      call(a.client, 'send_message', { to: 'bob', body: `${tag} a${i}` }),
      call(b.client, 'send_message', { to: 'alice', body: `${tag} b${i}` }),
    ]).flat(),
  );
  await Promise.all([a.close(), b.close()]);
}

/** The size a witness holds for the mailbox (its GET /checkpoint), 0 for none. */
async function witnessedSize(w: WitnessProcess, origin: string): Promise<number> {
  const res = await fetch(`${w.url}/checkpoint?origin=${encodeURIComponent(origin)}`);
  const text = await res.text();
  return res.status === 200 ? Number(text.split('\n')[1]) : 0;
}

/** Call-log lines stored now. */
async function logSize(): Promise<number> {
  const note = (await cli(['mailbox', 'checkpoint', mb.dir])).out;
  return Number(note.split('\n')[1]);
}

function witnessFlags(): string[] {
  return witnesses.flatMap((w) => ['--witness', w.vkey, '--witness-url', w.url]);
}

async function verifyCodes(): Promise<{ code: number; problems: string[] }> {
  const r = await cli(['verify', mb.dir, ...witnessFlags(), '--json'], -1);
  return {
    code: r.code,
    problems: (JSON.parse(r.out) as { problems: Array<{ code: string }> }).problems.map((p) => p.code),
  };
}

beforeAll(async () => {
  work = tempDir('witness-submit-');
  mb = await makeMailbox(['alice', 'bob'], { store: 'postgres' });
  const logVkey = mailboxVerifierKey(mb.dir);
  witnesses.push(await startWitness('w1.example/witness', logVkey), await startWitness('w2.example/witness', logVkey));
}, 60_000);

afterAll(async () => {
  await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
  await stopAll(running);
  for (const w of witnesses) w.proc.kill('SIGTERM');
  await mb?.cleanup();
});

describe('mailbox servers submitting to two witnesses (one PostgreSQL mailbox)', () => {
  it('submits the final checkpoint on shutdown, and a rollback to an earlier dump is caught and refused', {
    timeout: 180_000,
  }, async () => {
    const origin = `witness.mailbox/${(JSON.parse(readFileSync(join(mb.dir, 'mailbox.json'), 'utf8')) as { id: string }).id}`;
    // Phase 1: neither the receipt count nor the interval is reached; only the shutdown submits.
    let servers = await startServers(['--witness-every', '100000', '--witness-interval', '3600']);
    await sendThrough(servers, 6, 'one');
    expect(await witnessedSize(witnesses[0]!, origin)).toBe(0);
    await stopAll(servers);
    const first = await logSize();
    expect(first).toBeGreaterThanOrEqual(12);
    for (const w of witnesses) expect(await witnessedSize(w, origin)).toBe(first);
    expect(await verifyCodes()).toEqual({ code: 0, problems: [] });

    const dump = join(work, 'mailbox.dump');
    execFileSync('pg_dump', ['-Fc', '-d', mb.database!, '-f', dump]);

    // Phase 2: submissions every 5 receipts; the witnesses follow both servers' appends.
    servers = await startServers(['--witness-every', '5', '--witness-interval', '1']);
    await sendThrough(servers, 10, 'two');
    const second = await logSize();
    for (const w of witnesses)
      await waitFor(
        async () => (await witnessedSize(w, origin)) === second,
        20_000,
        () => `witness ${w.url} to cosign size ${second}`,
      );
    await stopAll(servers);

    // The database goes back to the dump: the log is the first phase's again.
    execFileSync('pg_restore', ['--clean', '--if-exists', '-d', mb.database!, dump]);
    expect(await logSize()).toBe(first);
    const rolledBack = await verifyCodes();
    expect(rolledBack.code).toBe(1);
    expect(rolledBack.problems).toEqual(['TRUNCATED', 'TRUNCATED']);

    // Servers on the rolled-back database: the witnesses hold more (409), then, past
    // their size, refuse the other history (422).
    servers = await startServers(['--witness-every', '5', '--witness-interval', '1']);
    for (const w of witnesses)
      await waitFor(
        () => readWitnessed(mb.dir, w.vkey)?.last?.status === 409,
        20_000,
        () => `a 409 from ${w.url}`,
      );
    await sendThrough(servers, 15, 'three');
    expect(await logSize()).toBeGreaterThan(second);
    for (const w of witnesses)
      await waitFor(
        () => readWitnessed(mb.dir, w.vkey)?.last?.status === 422,
        20_000,
        () => `a 422 from ${w.url}`,
      );
    await stopAll(servers);
    for (const w of witnesses) expect(await witnessedSize(w, origin)).toBe(second);
    const forked = await verifyCodes();
    expect(forked.code).toBe(1);
    expect(forked.problems).toEqual(['INCONSISTENT', 'INCONSISTENT']);
    const status = await cli(['mailbox', 'status', mb.dir], 1);
    expect(status.out).toMatch(/refused \(422\)/);
  });
});
