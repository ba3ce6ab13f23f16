/**
 * Delivery states a sender can check: a message's life through
 * every state over real MCP clients and server processes, each answer traced to its
 * receipt by `witness mailbox verify --explain ID`; a third agent asking for another's
 * message gets the same refusal as for a message that does not exist, and nothing
 * leaks; a reply stays in its thread.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DeliveryStatus } from '../../src/mailbox/index.js';
import { call, callError, cli, type Connected, makeMailbox, stdioClient, type TestMailbox } from './helpers.js';

describe('message_status and ack_message over MCP (stdio, one server process per agent)', () => {
  let mb: TestMailbox;
  let alice: Connected;
  let bob: Connected;
  let carol: Connected;

  beforeAll(async () => {
    mb = await makeMailbox(['alice', 'bob', 'carol']);
    [alice, bob, carol] = await Promise.all([
      stdioClient(mb.dir, 'alice'),
      stdioClient(mb.dir, 'bob'),
      stdioClient(mb.dir, 'carol'),
    ]);
  });
  afterAll(async () => {
    await Promise.all([alice, bob, carol].map((c) => c?.close()));
  });

  it('stored → read → acknowledged, each state backed by a receipt that verify --explain traces', async () => {
    const sent = await call<{ id: string; thread: string }>(alice.client, 'send_message', {
      to: 'bob',
      body: 'please review PR 12',
    });
    expect(sent.thread).toBe(sent.id);
    expect(await call<DeliveryStatus>(alice.client, 'message_status', { message_id: sent.id })).toMatchObject({
      state: 'stored',
      from: 'alice',
      to: 'bob',
    });

    const inbox = await call<{ messages: Array<{ id: string; acknowledged: boolean; thread: string }> }>(
      bob.client,
      'check_inbox',
      {},
    );
    expect(inbox.messages).toEqual([expect.objectContaining({ id: sent.id, acknowledged: false, thread: sent.id })]);
    expect((await call<DeliveryStatus>(alice.client, 'message_status', { message_id: sent.id })).state).toBe('read');

    const ack = await call<{ deduplicated: boolean; reply: string }>(bob.client, 'ack_message', {
      message_id: sent.id,
      reply: 'LGTM, merged',
    });
    expect(ack).toMatchObject({ deduplicated: false, reply: 'LGTM, merged' });
    const status = await call<DeliveryStatus>(alice.client, 'message_status', { message_id: sent.id });
    expect(status).toMatchObject({ state: 'acknowledged', acknowledged: { reply: 'LGTM, merged' } });
    // The recipient's later reads say it was acknowledged.
    const again = await call<{ messages: Array<{ id: string; acknowledged: boolean }> }>(bob.client, 'check_inbox', {
      thread: sent.id,
    });
    expect(again.messages).toEqual([expect.objectContaining({ id: sent.id, acknowledged: true })]);

    const { out } = await cli(['mailbox', 'verify', mb.dir, '--explain', sent.id]);
    expect(out).toMatch(new RegExp(`${sent.id} from alice to bob: acknowledged`));
    expect(out).toMatch(/record +\S+inbox\/bob\.jsonl:1 \(the record its send receipt signed\)/);
    for (const [tool, agent, seq] of [
      ['send_message', 'alice', status.stored.seq],
      ['check_inbox', 'bob', status.read!.seq],
      ['ack_message', 'bob', status.acknowledged!.seq],
    ] as const) {
      expect(out).toMatch(
        new RegExp(
          `calls\\.jsonl:${seq}  ${tool} by ${agent} at \\S+ \\(seq ${seq}\\): signature valid, chain holds here`,
        ),
      );
    }
    expect(out).toMatch(/^OK: /m);
    const report = JSON.parse((await cli(['mailbox', 'verify', mb.dir, '--explain', sent.id, '--json'])).out) as {
      explain: { status: DeliveryStatus };
    };
    expect(report.explain.status).toEqual(status); // the server's answer is what verify derives
  });

  it('witness mailbox status of an id no send stored exits 1, as its help says, with one line', async () => {
    const run = await cli(['mailbox', 'status', mb.dir, 'msg_does_not_exist'], -1);
    expect([run.code, run.out]).toEqual([1, '']);
    expect(run.err.trim().split('\n')).toEqual([
      expect.stringMatching(/No genuine send receipt stores msg_does_not_exist/),
    ]);
  });

  it('a third agent is refused exactly as for a message that does not exist, and learns nothing', async () => {
    const sent = await call<{ id: string }>(alice.client, 'send_message', {
      to: 'bob',
      body: 'private: the launch code is 0000',
    });
    const theirs = await callError(carol.client, 'message_status', { message_id: sent.id });
    const missing = await callError(carol.client, 'message_status', {
      message_id: 'msg_00000000-0000-0000-0000-000000000000',
    });
    expect(theirs.replace(sent.id, 'X')).toBe(missing.replace('msg_00000000-0000-0000-0000-000000000000', 'X'));
    expect(theirs).not.toMatch(/alice|bob|launch|stored|read/);
    expect(await callError(carol.client, 'ack_message', { message_id: sent.id })).toMatch(
      /is not a message you received/,
    );
    expect((await call<DeliveryStatus>(alice.client, 'message_status', { message_id: sent.id })).state).toBe('stored'); // carol's attempts changed nothing
    expect((await cli(['mailbox', 'verify', mb.dir])).out).toMatch(/^OK: /m);
  });

  it("a read receipt that also lists other mail is shown by its hash only: the sender never sees the recipient's other messages", async () => {
    const mine = await call<{ id: string }>(alice.client, 'send_message', { to: 'bob', body: 'from alice' });
    const other = await call<{ id: string }>(carol.client, 'send_message', { to: 'bob', body: 'from carol' });
    await call(bob.client, 'check_inbox', {});
    const status = await call<DeliveryStatus>(alice.client, 'message_status', { message_id: mine.id });
    expect(status.state).toBe('read');
    expect(status.read).toEqual({
      at: expect.any(String),
      seq: expect.any(Number),
      line_sha256: expect.stringMatching(/^[0-9a-f]{64}$/),
    });
    expect(JSON.stringify(status)).not.toContain(other.id);
  });

  it('replies keep the thread; check_inbox by thread shows the conversation', async () => {
    const q = await call<{ id: string }>(alice.client, 'send_message', { to: 'bob', body: 'lunch?' });
    await call(bob.client, 'check_inbox', {});
    const a = await call<{ id: string; thread: string }>(bob.client, 'send_message', {
      to: 'alice',
      body: 'yes, 12:30',
      reply_to: q.id,
    });
    expect(a.thread).toBe(q.id);
    expect(await callError(carol.client, 'send_message', { to: 'alice', body: 'x', reply_to: q.id })).toMatch(
      /reply_to .* is not a message you received/,
    );
    const got = await call<{ messages: Array<{ body: string; reply_to: string; thread: string }> }>(
      alice.client,
      'check_inbox',
      { thread: q.id },
    );
    expect(got.messages).toEqual([expect.objectContaining({ body: 'yes, 12:30', reply_to: q.id, thread: q.id })]);
  });
});
