/**
 * The per-recipient quota through a real server: no sender can
 * fill another agent's inbox until it cannot be read. The limits come from
 * `serve --max-unread-messages / --max-unread-bytes`; a refused send is a tool error
 * naming the recipient, the limit and what to do, and leaves a failure receipt.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { verifyMailbox } from '../../src/mailbox/index.js';
import { call, callError, cli, makeMailbox, stdioClient } from './helpers.js';

describe('per-recipient quota', () => {
  it('serve --max-unread-messages 2 refuses a third unread message to one recipient until it reads', async () => {
    const mb = await makeMailbox(['a', 'b']);
    const a = await stdioClient(mb.dir, 'a', ['--max-unread-messages', '2']);
    const b = await stdioClient(mb.dir, 'b');
    try {
      await call(a.client, 'send_message', { to: 'b', body: 'one' });
      await call(a.client, 'send_message', { to: 'b', body: 'two' });
      expect(await callError(a.client, 'send_message', { to: 'b', body: 'three' })).toMatch(
        /b's inbox is full: b has 2 unread messages and the limit is 2.*Wait until b reads/,
      );
      await call(b.client, 'check_inbox', { limit: 1 });
      await call(a.client, 'send_message', { to: 'b', body: 'three, later' });
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
    const sends = readFileSync(join(mb.dir, 'calls.jsonl'), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { tool: string; ok: boolean; error?: { code: string } });
    expect(sends.filter((c) => c.tool === 'send_message').map((c) => c.ok)).toEqual([true, true, false, true]);
    expect(sends.find((c) => !c.ok)?.error?.code).toBe('QUOTA_EXCEEDED');
    expect((await verifyMailbox(mb.dir)).problems).toEqual([]);
  });

  it('serve --max-unread-bytes refuses a message that would pass it', async () => {
    const mb = await makeMailbox(['a', 'b']);
    const a = await stdioClient(mb.dir, 'a', ['--max-unread-bytes', '500']);
    try {
      await call(a.client, 'send_message', { to: 'b', body: 'x'.repeat(200) });
      expect(await callError(a.client, 'send_message', { to: 'b', body: 'y'.repeat(200) })).toMatch(
        /unread bytes.*limit of 500/,
      );
    } finally {
      await a.close();
    }
  });

  it('refuses a negative or fractional quota with exit 2', async () => {
    const mb = await makeMailbox(['a']);
    expect(
      (await cli(['mailbox', 'serve', '--dir', mb.dir, '--agent', 'a', '--max-unread-messages', '-1'], 2)).err,
    ).toMatch(/--max-unread-messages/);
    expect(
      (await cli(['mailbox', 'serve', '--dir', mb.dir, '--agent', 'a', '--max-unread-bytes', '1.5'], 2)).err,
    ).toMatch(/--max-unread-bytes/);
  });
});
