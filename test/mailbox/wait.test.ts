/**
 * `wait_for_message` leaves exactly one receipt per call, whatever
 * the inbox holds while it waits: a torn last line (a write in progress or a crash),
 * damaged lines, or a message that arrives part-way through. Real server process,
 * real MCP client.
 */
import { appendFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyMailbox } from '../../src/mailbox/index.js';
import { call, type Connected, makeMailbox, stdioClient, type TestMailbox } from './helpers.js';

interface Logged {
  tool: string;
  agent: string;
  message_ids: string[];
}

const logged = (mb: TestMailbox): Logged[] =>
  readFileSync(join(mb.dir, 'calls.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Logged);
const waits = (mb: TestMailbox) => logged(mb).filter((c) => c.tool === 'wait_for_message');

describe('wait_for_message', () => {
  let mb: TestMailbox;
  let a: Connected;
  let b: Connected;

  beforeAll(async () => {
    mb = await makeMailbox(['a', 'b']);
    [a, b] = await Promise.all([stdioClient(mb.dir, 'a'), stdioClient(mb.dir, 'b')]);
    await call(a.client, 'send_message', { to: 'b', body: 'read before the tests' });
    await call(b.client, 'check_inbox', {});
  });
  afterAll(async () => {
    await Promise.all([a?.close(), b?.close()]);
  });

  it('with a torn inbox tail, times out after one receipt instead of one per poll', async () => {
    appendFileSync(join(mb.dir, 'inbox', 'b.jsonl'), '{"id":"msg_torn","from":"a","to":"b","bo');
    const before = waits(mb).length;
    const got = await call<{ messages: unknown[]; timed_out: boolean }>(b.client, 'wait_for_message', {
      timeout_ms: 1500,
    });
    expect(got).toEqual({ messages: [], timed_out: true });
    expect(waits(mb).length - before).toBe(1);
  });

  it('with damaged lines unread, times out after one receipt', async () => {
    await call(a.client, 'send_message', { to: 'b', body: 'clears the torn tail' });
    await call(b.client, 'check_inbox', {});
    appendFileSync(join(mb.dir, 'inbox', 'b.jsonl'), 'null\n{"id":1}\n');
    const before = waits(mb).length;
    const got = await call<{ timed_out: boolean }>(b.client, 'wait_for_message', { timeout_ms: 1000 });
    expect(got.timed_out).toBe(true);
    expect(waits(mb).length - before).toBe(1);
  });

  it('a message that arrives during the wait is returned with one receipt that lists it', async () => {
    const before = waits(mb).length;
    const waiting = call<{ messages: Array<{ id: string; body: string }> }>(b.client, 'wait_for_message', {
      timeout_ms: 20_000,
    });
    const [sent, got] = await Promise.all([
      call<{ id: string }>(a.client, 'send_message', { to: 'b', body: 'arrived' }),
      waiting,
    ]);
    expect(got.messages.map((m) => m.id)).toEqual([sent.id]);
    const mine = waits(mb).slice(before);
    expect(mine.map((c) => c.message_ids)).toEqual([[sent.id]]);
    expect((await verifyMailbox(mb.dir)).problems.map((p) => p.kind).every((k) => k === 'corrupt')).toBe(true); // the hand-written damaged lines
  });
});
