/**
 * Bad input — hostile agent names, oversized bodies, unknown recipients, rate
 * overruns, malformed JSON-RPC — is refused with an error that says what was wrong,
 * and nothing already stored is lost.
 */
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyMailbox } from '../../src/mailbox/index.js';
import {
  call,
  callError,
  cli,
  type Connected,
  makeMailbox,
  stdioClient,
  type TestMailbox,
  waitFor,
  witnessCommand,
} from './helpers.js';

const BAD_NAMES: Array<[string, string, RegExp]> = [
  ['a path escape', '../x', /path separator/],
  ['a path separator', 'a/b', /path separator/],
  ['an empty name', '', /empty/],
  ['65 characters', 'x'.repeat(65), /65 characters; at most 64/],
  ['a NUL character', 'ab\0c', /NUL/],
  ['a Cyrillic lookalike letter', 'аlice', /non-ASCII.*lookalike/],
  ['a leading dot', '.hidden', /not 1–64 ASCII/],
];

interface RawReply {
  id: unknown;
  error?: { code: number; message: string };
  result?: { isError?: boolean; content?: Array<{ text: string }> };
}

/** A stdio server driven with raw lines; `replies(n)` waits for n reply lines. */
function rawStdio(
  dir: string,
  agent: string,
): { proc: ChildProcessWithoutNullStreams; replies(n: number): Promise<RawReply[]> } {
  const [command, ...args] = witnessCommand();
  const proc = spawn(command!, [...args, 'mailbox', 'serve', '--dir', dir, '--agent', agent], {
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let out = '';
  proc.stdout.on('data', (d: Buffer) => {
    out += d.toString();
  });
  const lines = () => out.split('\n').filter(Boolean);
  const replies = async (n: number) => {
    await waitFor(
      () => lines().length >= n,
      20_000,
      () => `${n} replies, got: ${out}`,
    );
    return lines().map((l) => JSON.parse(l) as RawReply);
  };
  return { proc, replies };
}

describe('bad input', () => {
  let mb: TestMailbox;
  let alice: Connected;

  beforeAll(async () => {
    mb = await makeMailbox(['alice', 'bob']);
    alice = await stdioClient(mb.dir, 'alice', ['--max-body-bytes', '1024', '--rate-limit', '60']);
    await call(alice.client, 'send_message', { to: 'bob', body: 'stored before the bad input' });
  });
  afterAll(async () => {
    await alice?.close();
  });

  for (const [what, name, reason] of BAD_NAMES) {
    it(`add-agent refuses ${what} with exit 2 and the rule`, async () => {
      const { err } = await cli(['mailbox', 'add-agent', mb.dir, name], 2);
      expect(err).toMatch(reason);
      expect(err).toMatch(/Use 1–64 ASCII letters/);
    });

    it(`send_message refuses the recipient ${what} as a tool error`, async () => {
      expect(await callError(alice.client, 'send_message', { to: name, body: 'x' })).toMatch(reason);
    });
  }

  it('serve refuses an --agent that is not registered, naming the fix', async () => {
    const { err } = await cli(['mailbox', 'serve', '--dir', mb.dir, '--agent', 'mallory'], 2);
    expect(err).toMatch(/"mallory" is not registered.*witness mailbox add-agent/);
  });

  it('refuses a body over the limit, saying the size and the limit', async () => {
    expect(await callError(alice.client, 'send_message', { to: 'bob', body: 'é'.repeat(600) })).toMatch(
      /1200 bytes; the limit is 1024/,
    );
  });

  it('refuses a missing body with a validation error', async () => {
    expect(await callError(alice.client, 'send_message', { to: 'bob' })).toMatch(/body/);
  });

  it('refuses sends beyond the per-minute rate with a retry time', async () => {
    const mb2 = await makeMailbox(['p', 'q']);
    const p = await stdioClient(mb2.dir, 'p', ['--rate-limit', '3']);
    try {
      for (let i = 0; i < 3; i++) await call(p.client, 'send_message', { to: 'q', body: `${i}` });
      expect(await callError(p.client, 'send_message', { to: 'q', body: 'one too many' })).toMatch(
        /Rate limit: p may send 3 messages per minute. Try again in \d+ ms/,
      );
    } finally {
      await p.close();
    }
    const refused = readFileSync(join(mb2.dir, 'calls.jsonl'), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { ok: boolean; error?: { code: string } })
      .filter((c) => !c.ok);
    expect(refused.map((c) => c.error?.code)).toEqual(['RATE_LIMITED']);
  });

  it('answers a line that is not JSON with a parse error and keeps serving', async () => {
    const { proc, replies } = rawStdio(mb.dir, 'bob');
    try {
      proc.stdin.write('{"jsonrpc": "2.0", "id": 1, "method": \n');
      proc.stdin.write('{"hello": "world"}\n');
      proc.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'ping' })}\n`);
      const got = await replies(3);
      expect(got[0]).toMatchObject({
        id: null,
        error: { code: -32700, message: expect.stringMatching(/Parse error/) },
      });
      expect(got[1]).toMatchObject({ id: null, error: { code: -32600 } });
      expect(got[2]).toMatchObject({ id: 7, result: {} });
    } finally {
      proc.kill();
    }
  });

  it('over stdio, a tools/call without params and a mistyped argument are answered and leave receipts', async () => {
    const { proc, replies } = rawStdio(mb.dir, 'bob');
    const bobsRefusals = () =>
      readFileSync(join(mb.dir, 'calls.jsonl'), 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { agent: string; tool: string; ok: boolean })
        .filter((c) => c.agent === 'bob' && !c.ok)
        .map((c) => c.tool);
    const before = bobsRefusals();
    try {
      proc.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call' })}\n`);
      proc.stdin.write(
        `${JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'check_inbox', arguments: { limit: -5 } } })}\n`,
      );
      const got = await replies(2);
      expect(got.find((r) => r.id === 1)).toMatchObject({ error: { code: -32602 } });
      expect(got.find((r) => r.id === 2)?.result).toMatchObject({
        isError: true,
        content: [{ text: expect.stringMatching(/limit: must be at least 1/) }],
      });
      expect(bobsRefusals()).toEqual([...before, 'unknown_tool', 'check_inbox']);
    } finally {
      proc.kill();
    }
  });

  it('after all of it, the earlier message is intact and verify is clean', async () => {
    const lines = readFileSync(join(mb.dir, 'inbox', 'bob.jsonl'), 'utf8')
      .trim()
      .split('\n');
    expect(lines.map((l) => (JSON.parse(l) as { body: string }).body)).toEqual(['stored before the bad input']);
    expect((await verifyMailbox(mb.dir)).problems).toEqual([]);
  });
});

/**
 * Ids a caller names (message_id, reply_to, thread, idempotency_key) with a NUL
 * character or of any length: refused at the tool, naming the field, on every store.
 * PostgreSQL cannot hold U+0000 in text: before, such a call reached the database and
 * came back as "the database refused the write … check the database server".
 */
describe.each(['jsonl', 'sqlite', 'postgres'] as const)('hostile ids on the %s store', (store) => {
  let mb: TestMailbox;
  let alice: Connected;
  let sent: string;

  beforeAll(async () => {
    mb = await makeMailbox(['alice', 'bob'], { store });
    alice = await stdioClient(mb.dir, 'alice');
    sent = (
      await call<{ id: string }>(alice.client, 'send_message', { to: 'bob', body: 'stored before the hostile ids' })
    ).id;
  });
  afterAll(async () => {
    await alice?.close();
    await mb?.cleanup();
  });

  const cases: Array<[string, string, Record<string, unknown>, RegExp]> = [
    [
      'a NUL in idempotency_key',
      'send_message',
      { to: 'bob', body: 'x', idempotency_key: 'k\0ey' },
      /^The idempotency_key contains a NUL character/,
    ],
    [
      'a lone surrogate in idempotency_key',
      'send_message',
      { to: 'bob', body: 'x', idempotency_key: 'k\ud800' },
      /^arguments\.idempotency_key holds a lone surrogate/,
    ],
    [
      'a NUL in reply_to',
      'send_message',
      { to: 'bob', body: 'x', reply_to: 'msg_\0' },
      /^reply_to must be a message id from this mailbox .*it contains a NUL character/,
    ],
    ['a NUL in message_status', 'message_status', { message_id: 'msg_\0' }, /^message_id must be a message id .*NUL/],
    [
      'a 257-character message_id',
      'message_status',
      { message_id: 'm'.repeat(257) },
      /^message_id must be a message id from this mailbox \(1–256 characters, no NUL character\); it has 257/,
    ],
    [
      'a NUL in ack_message',
      'ack_message',
      { message_id: 'msg_\0', reply: 'r' },
      /^message_id must be a message id .*NUL/,
    ],
    ['a NUL in the thread filter', 'check_inbox', { thread: 't\0' }, /^thread must be a message id .*NUL/],
  ];
  for (const [what, tool, args, message] of cases) {
    it(`refuses ${what}, naming the field`, async () => {
      expect(await callError(alice.client, tool, args)).toMatch(message);
    });
  }

  it('after all of it, the earlier message is intact and verify is clean', async () => {
    expect(await call(alice.client, 'message_status', { message_id: sent })).toMatchObject({ state: 'stored' });
    await alice.close();
    expect((await verifyMailbox(mb.dir)).problems).toEqual([]);
  });
});
