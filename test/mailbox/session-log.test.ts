/**
 * `mailbox serve --session-log FILE`: the server's own record of each session — the
 * protocol version it answered `initialize` with (the client's when supported, else
 * the server's latest), each subscription, and each notification once the transport
 * took it. Real server processes, a real SDK client and raw JSON-RPC over stdio.
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { LATEST_PROTOCOL_VERSION, ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SessionRecord } from '../../src/mailbox/session-log.js';
import {
  call,
  type Connected,
  makeMailbox,
  stdioClient,
  type TestMailbox,
  tempDir,
  waitFor,
  witnessCommand,
} from './helpers.js';

const read = (file: string): SessionRecord[] =>
  existsSync(file)
    ? readFileSync(file, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as SessionRecord)
    : [];

/** Answers one raw `initialize` asking for `version`; returns the version the server answered. */
async function initializeAs(dir: string, log: string, version: string): Promise<string> {
  const [command, ...args] = witnessCommand();
  const child = spawn(command!, [...args, 'mailbox', 'serve', '--dir', dir, '--agent', 'bob', '--session-log', log], {
    stdio: ['pipe', 'pipe', 'ignore'],
  });
  let out = '';
  child.stdout.on('data', (d: Buffer) => {
    out += d.toString();
  });
  child.stdin.write(
    `${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: version, capabilities: {}, clientInfo: { name: 'raw-client', version: '9.9.9' } } })}\n`,
  );
  const line = await waitFor(
    () => out.split('\n').find((l) => l.includes('"id":1')),
    20_000,
    () => `an initialize answer (got ${out})`,
  );
  child.stdin.end();
  await new Promise((r) => child.once('exit', r));
  return (JSON.parse(line) as { result: { protocolVersion: string } }).result.protocolVersion;
}

describe('the session log', () => {
  let mb: TestMailbox;
  let log: string;
  let alice: Connected;
  let bob: Connected;

  beforeAll(async () => {
    mb = await makeMailbox(['alice', 'bob']);
    log = join(tempDir('witness-sessions-'), 'sessions.jsonl');
    alice = await stdioClient(mb.dir, 'alice');
    bob = await stdioClient(mb.dir, 'bob', ['--session-log', log]);
  });
  afterAll(async () => {
    await Promise.all([alice, bob].map((c) => c?.close()));
  });

  it('records the version answered to initialize, the client, a subscription and each notice sent', async () => {
    const first = read(log)[0];
    expect(first).toMatchObject({
      event: 'initialize',
      agent: 'bob',
      protocol_version: LATEST_PROTOCOL_VERSION,
      requested: LATEST_PROTOCOL_VERSION,
      client: { name: 'witness-test', version: '0.0.0' },
    });
    let notices = 0;
    bob.client.setNotificationHandler(ResourceUpdatedNotificationSchema, () => {
      notices++;
    });
    await bob.client.subscribeResource({ uri: 'mailbox://inbox' });
    expect(read(log).map((r) => r.event)).toEqual(['initialize', 'subscribe']);
    const sent = Date.now();
    const { id } = await call<{ id: string }>(alice.client, 'send_message', {
      to: 'bob',
      body: 'a body the log never holds',
    });
    await waitFor(
      () => notices > 0,
      10_000,
      () => 'a resources/updated notice',
    );
    const updated = await waitFor(
      () => read(log).find((r) => r.event === 'resource_updated'),
      10_000,
      () => 'a resource_updated record',
    );
    expect(Date.parse(updated.at)).toBeGreaterThanOrEqual(sent - 1000);
    expect(readFileSync(log, 'utf8')).not.toContain('a body the log never holds');
    expect(id).toMatch(/^msg_/);
  });

  it('an older version the server supports is what it answers and records; an unknown one gets its latest', async () => {
    const older = join(tempDir('witness-sessions-'), 'older.jsonl');
    expect(await initializeAs(mb.dir, older, '2025-03-26')).toBe('2025-03-26');
    expect(await initializeAs(mb.dir, older, '1999-01-01')).toBe(LATEST_PROTOCOL_VERSION);
    expect(
      read(older).map((r) => (r.event === 'initialize' ? [r.requested, r.protocol_version, r.client.name] : r.event)),
    ).toEqual([
      ['2025-03-26', '2025-03-26', 'raw-client'],
      ['1999-01-01', LATEST_PROTOCOL_VERSION, 'raw-client'],
    ]);
  });
});
