/**
 * The mailbox over stdio, driven by the real MCP SDK client against real server
 * processes: tool schemas, identity binding, round trips, errors, ping, prefixes.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyMailbox } from '../../src/mailbox/index.js';
import { call, callError, cli, type Connected, makeMailbox, stdioClient, type TestMailbox } from './helpers.js';

describe('mailbox over stdio', () => {
  let mb: TestMailbox;
  let alice: Connected;
  let bob: Connected;

  beforeAll(async () => {
    mb = await makeMailbox(['alice', 'bob']);
    [alice, bob] = await Promise.all([stdioClient(mb.dir, 'alice'), stdioClient(mb.dir, 'bob')]);
  });
  afterAll(async () => {
    await Promise.all([alice?.close(), bob?.close()]);
  });

  it('lists seven tools, each with an input schema, an output schema and annotations', async () => {
    const { tools } = await alice.client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual([
      'ack_message',
      'check_inbox',
      'list_agents',
      'message_status',
      'send_message',
      'wait_for_message',
      'whoami',
    ]);
    for (const tool of tools) {
      expect(tool.inputSchema.type).toBe('object');
      expect(tool.outputSchema?.type).toBe('object');
      expect(tool.annotations?.title).toBeTruthy();
    }
    expect(tools.find((t) => t.name === 'list_agents')?.annotations?.readOnlyHint).toBe(true);
  });

  it('answers ping', async () => {
    await expect(alice.client.ping()).resolves.toBeDefined();
  });

  it('whoami returns the identity bound by --agent', async () => {
    expect(await call(bob.client, 'whoami')).toEqual({ name: 'bob' });
  });

  it('list_agents returns every registered agent and marks the caller', async () => {
    const { agents } = await call<{ agents: Array<{ name: string; you: boolean }> }>(alice.client, 'list_agents');
    expect(agents).toEqual([
      { name: 'alice', you: true },
      { name: 'bob', you: false },
    ]);
  });

  it('a message sent by one server process is read once by another, with the bound sender', async () => {
    const sent = await call<{ id: string; to: string; sent_at: string }>(alice.client, 'send_message', {
      to: 'bob',
      body: 'hello bob',
    });
    expect(sent.to).toBe('bob');
    const first = await call<{ messages: Array<{ id: string; from: string; body: string }> }>(
      bob.client,
      'check_inbox',
    );
    expect(first.messages).toEqual([expect.objectContaining({ id: sent.id, from: 'alice', body: 'hello bob' })]);
    expect((await call<{ messages: unknown[] }>(bob.client, 'check_inbox')).messages).toEqual([]);
  });

  it('a "from" argument cannot change the sender', async () => {
    const sent = await call<{ id: string }>(alice.client, 'send_message', { to: 'bob', body: 'spoof?', from: 'bob' });
    const { messages } = await call<{ messages: Array<{ id: string; from: string }> }>(bob.client, 'check_inbox');
    expect(messages.find((m) => m.id === sent.id)?.from).toBe('alice');
  });

  it('peek returns messages without marking them read', async () => {
    await call(alice.client, 'send_message', { to: 'bob', body: 'peek me' });
    const peeked = await call<{ messages: unknown[] }>(bob.client, 'check_inbox', { peek: true });
    expect(peeked.messages).toHaveLength(1);
    expect((await call<{ messages: unknown[] }>(bob.client, 'check_inbox')).messages).toHaveLength(1);
  });

  it('an unknown recipient is a tool error naming the known agents, and nothing is stored', async () => {
    const text = await callError(alice.client, 'send_message', { to: 'carol', body: 'x' });
    expect(text).toMatch(/Unknown recipient "carol".*known agents: alice, bob/);
    expect(() => readFileSync(join(mb.dir, 'inbox', 'carol.jsonl'))).toThrow();
  });

  it('wait_for_message returns as soon as mail from another process arrives', async () => {
    const waiting = call<{ messages: Array<{ body: string }>; timed_out: boolean }>(bob.client, 'wait_for_message', {
      timeout_ms: 20_000,
    });
    const started = Date.now();
    await call(alice.client, 'send_message', { to: 'bob', body: 'wake up' });
    const result = await waiting;
    expect(result.timed_out).toBe(false);
    expect(result.messages.map((m) => m.body)).toEqual(['wake up']);
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it('wait_for_message times out with an empty list when no mail comes', async () => {
    const result = await call<{ messages: unknown[]; timed_out: boolean }>(bob.client, 'wait_for_message', {
      timeout_ms: 200,
    });
    expect(result).toEqual({ messages: [], timed_out: true });
  });

  it('an agent registered while the servers run can receive mail at once', async () => {
    await cli(['mailbox', 'add-agent', mb.dir, 'carol2']);
    const sent = await call<{ to: string }>(alice.client, 'send_message', { to: 'carol2', body: 'welcome' });
    expect(sent.to).toBe('carol2');
  });

  it('every call so far left a receipt in the call log', async () => {
    const lines = readFileSync(join(mb.dir, 'calls.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines.map((l) => l.seq)).toEqual(lines.map((_, i) => i + 1));
    expect(lines.some((l) => l.tool === 'send_message' && !l.ok && l.error.code === 'NOT_FOUND')).toBe(true);
    expect(lines.every((l) => !('body' in l))).toBe(true);
    expect((await verifyMailbox(mb.dir)).problems).toEqual([]);
  });
});

describe('mailbox over stdio with --tool-prefix', () => {
  it('renames every tool and the renamed tools work', async () => {
    const mb = await makeMailbox(['a1', 'a2']);
    const c = await stdioClient(mb.dir, 'a1', ['--tool-prefix', 'mailbox_']);
    try {
      const { tools } = await c.client.listTools();
      expect(tools.map((t) => t.name).sort()).toEqual([
        'mailbox_ack_message',
        'mailbox_check_inbox',
        'mailbox_list_agents',
        'mailbox_message_status',
        'mailbox_send_message',
        'mailbox_wait_for_message',
        'mailbox_whoami',
      ]);
      expect(await call(c.client, 'mailbox_whoami')).toEqual({ name: 'a1' });
      // MCP 2025-11-25: an unknown tool is a protocol error (-32602), not a tool result.
      await expect(
        c.client.callTool({ name: 'send_message', arguments: { to: 'a2', body: 'x' } }),
      ).rejects.toMatchObject({
        code: -32602,
        message: expect.stringMatching(/Unknown tool "send_message"\. This server's tools: mailbox_whoami/),
      });
    } finally {
      await c.close();
    }
  });
});

describe('mailbox over stdio with the SQLite store', () => {
  it('serves the same round trip and verifies clean', async () => {
    const mb = await makeMailbox(['s1', 's2'], { store: 'sqlite' });
    const [s1, s2] = await Promise.all([stdioClient(mb.dir, 's1'), stdioClient(mb.dir, 's2')]);
    try {
      const sent = await call<{ id: string }>(s1.client, 'send_message', { to: 's2', body: 'via sqlite' });
      const { messages } = await call<{ messages: Array<{ id: string; from: string }> }>(s2.client, 'check_inbox');
      expect(messages).toEqual([expect.objectContaining({ id: sent.id, from: 's1' })]);
    } finally {
      await Promise.all([s1.close(), s2.close()]);
    }
    expect(await verifyMailbox(mb.dir)).toMatchObject({ ok: true, store: 'sqlite', messages: 1 });
  });
});
