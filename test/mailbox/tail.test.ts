/**
 * `witness mailbox tail` reads a page at a time: an inbox holding
 * damaged records and a 600 MB line (sparse: no disk space) is followed without
 * failing, showing every real message once, in the JSONL and SQLite stores' ways of following.
 */
import { appendFileSync, statSync, truncateSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Message } from '../../src/mailbox/call-log.js';
import { formatMessage, openStore, tailMailbox } from '../../src/mailbox/index.js';
import { makeMailbox, waitFor } from './helpers.js';

describe('tail', () => {
  it('follows an inbox with damaged records and a 600 MB line, showing each real message once', async () => {
    const mb = await makeMailbox(['a', 'b']);
    const store = await openStore(mb.dir, { keyPath: mb.keyPath, limits: { maxUnreadBytes: 0 } });
    const inbox = join(mb.dir, 'inbox', 'b.jsonl');
    const shown: Message[] = [];
    const controller = new AbortController();
    let tail: Promise<void> | undefined;
    try {
      const first = await store.send('a', { to: 'b', body: 'first' });
      appendFileSync(inbox, 'null\n{"id":1}\n');
      truncateSync(inbox, statSync(inbox).size + 600 * 1024 * 1024);
      appendFileSync(inbox, '\n');
      const second = await store.send('a', { to: 'b', body: 'second' });
      tail = tailMailbox(mb.dir, (m) => shown.push(m), { fromStart: true, pollMs: 20, signal: controller.signal });
      await waitFor(
        () => shown.length >= 2,
        60_000,
        () => `tail to show 2 messages (shown: ${shown.length})`,
      );
      const third = await store.send('a', { to: 'b', body: 'third' });
      await waitFor(
        () => shown.length >= 3,
        20_000,
        () => 'tail to show the third message',
      );
      expect(shown.map((m) => m.id)).toEqual([first.id, second.id, third.id]);
    } finally {
      controller.abort();
      await tail;
      await store.close();
    }
  }, 90_000);

  it('without fromStart shows only messages stored after it started (sqlite)', async () => {
    const mb = await makeMailbox(['a', 'b'], { store: 'sqlite' });
    const store = await openStore(mb.dir, { keyPath: mb.keyPath });
    const shown: Message[] = [];
    const controller = new AbortController();
    let tail: Promise<void> | undefined;
    try {
      await store.send('a', { to: 'b', body: 'old' });
      tail = tailMailbox(mb.dir, (m) => shown.push(m), { pollMs: 20, signal: controller.signal });
      const sent: string[] = [];
      await waitFor(
        async () => {
          sent.push((await store.send('a', { to: 'b', body: `new ${sent.length}` })).id);
          return shown.length > 0;
        },
        20_000,
        () => 'tail to show a new message',
      );
      expect(shown.every((m) => sent.includes(m.id))).toBe(true);
    } finally {
      controller.abort();
      await tail;
      await store.close();
    }
  });
});

describe('formatMessage', () => {
  it("shows a reply's parent and thread by the ends of their ids, and nothing extra for a first message", () => {
    const first = {
      id: 'msg_00000000-0000-0000-0000-00000000aaaa',
      from: 'a',
      to: 'b',
      body: 'lunch?',
      sent_at: 't1',
      thread: 'msg_00000000-0000-0000-0000-00000000aaaa',
    };
    const reply = {
      id: 'msg_00000000-0000-0000-0000-00000000bbbb',
      from: 'b',
      to: 'a',
      body: 'yes',
      sent_at: 't2',
      thread: first.id,
      reply_to: first.id,
    };
    expect(formatMessage(first)).toBe('t1  a → b  lunch?');
    expect(formatMessage(reply)).toBe('t2  b → a  [re …0000aaaa, thread …0000aaaa]  yes');
  });
});
