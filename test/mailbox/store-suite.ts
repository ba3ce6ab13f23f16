/**
 * One behavioural suite for every MailboxStore implementation (JSONL files, SQLite
 * and PostgreSQL), run against real stores on a real disk and a real database
 * server. `store.test.ts` runs it once per kind.
 */
import { describe, expect, it } from 'vitest';
import { isWitnessError } from '../../src/core/errors.js';
import { openStore, verifyMailbox } from '../../src/mailbox/index.js';
import type { MailboxStore } from '../../src/mailbox/store/types.js';
import { makeMailbox, type TestStore } from './helpers.js';

const fetchOpts = (limit = 20, peek = false) => ({ limit, peek, tool: 'check_inbox' as const });

async function withStore(
  kind: TestStore,
  agents: string[],
  fn: (store: MailboxStore, dir: string, keyPath: string) => Promise<void>,
): Promise<void> {
  const mb = await makeMailbox(agents, { store: kind });
  try {
    const store = await openStore(mb.dir, { keyPath: mb.keyPath });
    try {
      await fn(store, mb.dir, mb.keyPath);
    } finally {
      await store.close();
    }
  } finally {
    await mb.cleanup();
  }
}

export function runStoreSuite(kind: TestStore): void {
  describe(`${kind} store`, () => {
    it('delivers a sent message once, oldest first, with its sender and time', async () => {
      await withStore(kind, ['a', 'b'], async (store) => {
        const s1 = await store.send('a', { to: 'b', body: 'one' });
        const s2 = await store.send('a', { to: 'b', body: 'two' });
        const got = await store.fetch('b', fetchOpts());
        expect(got.map((m) => [m.id, m.from, m.to, m.body, m.sent_at])).toEqual([
          [s1.id, 'a', 'b', 'one', s1.sent_at],
          [s2.id, 'a', 'b', 'two', s2.sent_at],
        ]);
        expect(await store.fetch('b', fetchOpts())).toEqual([]);
      });
    });

    it('peek leaves messages unread and limit returns only that many', async () => {
      await withStore(kind, ['a', 'b'], async (store) => {
        for (const body of ['1', '2', '3']) await store.send('a', { to: 'b', body });
        expect((await store.fetch('b', fetchOpts(2, true))).map((m) => m.body)).toEqual(['1', '2']);
        expect((await store.fetch('b', fetchOpts(2))).map((m) => m.body)).toEqual(['1', '2']);
        expect((await store.fetch('b', fetchOpts(2))).map((m) => m.body)).toEqual(['3']);
      });
    });

    it('hasUnread is true exactly while unread mail waits', async () => {
      await withStore(kind, ['a', 'b'], async (store) => {
        expect(await store.hasUnread('b')).toBe(false);
        await store.send('a', { to: 'b', body: 'x' });
        expect(await store.hasUnread('b')).toBe(true);
        await store.fetch('b', fetchOpts());
        expect(await store.hasUnread('b')).toBe(false);
      });
    });

    it('refuses an unknown recipient with NOT_FOUND, stores nothing and logs a failed call', async () => {
      await withStore(kind, ['a', 'b'], async (store, dir) => {
        const error = await store.send('a', { to: 'zed', body: 'x' }).catch((e: unknown) => e);
        expect(isWitnessError(error, 'NOT_FOUND')).toBe(true);
        expect((error as Error).message).toMatch(/known agents: a, b/);
        expect(await store.fetch('zed', fetchOpts())).toEqual([]);
        const report = await verifyMailbox(dir);
        expect(report.problems).toEqual([]);
        expect(report.messages).toBe(0);
      });
    });

    it('a retried send with the same idempotency key returns the first message and stores it once', async () => {
      await withStore(kind, ['a', 'b'], async (store) => {
        const first = await store.send('a', { to: 'b', body: 'once', idempotencyKey: 'k1' });
        const again = await store.send('a', { to: 'b', body: 'once', idempotencyKey: 'k1' });
        expect(again).toEqual({ ...first, deduplicated: true });
        expect((await store.fetch('b', fetchOpts())).map((m) => m.id)).toEqual([first.id]);
      });
    });

    it('idempotency keys hold across two store instances (two server processes) on one directory', async () => {
      await withStore(kind, ['a', 'b'], async (store, dir, keyPath) => {
        const first = await store.send('a', { to: 'b', body: 'x', idempotencyKey: 'shared' });
        const other = await openStore(dir, { keyPath });
        try {
          expect((await other.send('a', { to: 'b', body: 'x', idempotencyKey: 'shared' })).id).toBe(first.id);
        } finally {
          await other.close();
        }
      });
    });

    it('the same key from a different sender is a different message', async () => {
      await withStore(kind, ['a', 'b'], async (store) => {
        const fromA = await store.send('a', { to: 'b', body: 'x', idempotencyKey: 'k' });
        const fromB = await store.send('b', { to: 'b', body: 'x', idempotencyKey: 'k' });
        expect(fromB.id).not.toBe(fromA.id);
      });
    });

    it('concurrent sends from two instances lose nothing and keep one valid chain', async () => {
      await withStore(kind, ['a', 'b', 'c'], async (store, dir, keyPath) => {
        const other = await openStore(dir, { keyPath });
        try {
          const sends = [];
          for (let i = 0; i < 60; i++) {
            sends.push(store.send('a', { to: 'c', body: `a${i}` }));
            sends.push(other.send('b', { to: 'c', body: `b${i}` }));
          }
          const ids = (await Promise.all(sends)).map((s) => s.id);
          const got = await store.fetch('c', fetchOpts(100));
          const rest = await store.fetch('c', fetchOpts(100));
          expect(new Set([...got, ...rest].map((m) => m.id))).toEqual(new Set(ids));
        } finally {
          await other.close();
        }
        const report = await verifyMailbox(dir);
        expect(report.problems).toEqual([]);
        expect(report.messages).toBe(120);
      });
    });

    it('messages and read positions survive closing and reopening', async () => {
      await withStore(kind, ['a', 'b'], async (store, dir, keyPath) => {
        await store.send('a', { to: 'b', body: 'read' });
        await store.send('a', { to: 'b', body: 'unread' });
        await store.fetch('b', fetchOpts(1));
        await store.close();
        const reopened = await openStore(dir, { keyPath });
        try {
          expect((await reopened.fetch('b', fetchOpts())).map((m) => m.body)).toEqual(['unread']);
        } finally {
          await reopened.close();
        }
      });
    });

    it('a message goes stored → read → acknowledged, each state from its genuine receipt; a second ack keeps the first', async () => {
      await withStore(kind, ['a', 'b'], async (store, dir) => {
        const sent = await store.send('a', { to: 'b', body: 'do the thing' });
        expect(await store.status(sent.id)).toMatchObject({ id: sent.id, from: 'a', to: 'b', state: 'stored' });
        await store.fetch('a', fetchOpts()); // another agent's read shows nothing of it
        expect((await store.status(sent.id))?.state).toBe('stored');
        await store.fetch('b', fetchOpts(20, true)); // a peek shows it to the recipient: read
        const read = await store.status(sent.id);
        expect(read?.state).toBe('read');
        await store.fetch('b', fetchOpts());
        expect((await store.status(sent.id))?.read).toEqual(read?.read); // the first read is the one that counts
        expect(read?.read?.line).toBeDefined(); // a read of this message alone: its line is shown
        expect(await store.acknowledged('b', [sent.id])).toEqual(new Set());
        const ack = await store.ack('b', sent.id, 'done ✓');
        expect(ack).toMatchObject({ id: sent.id, reply: 'done ✓', deduplicated: false });
        expect(await store.ack('b', sent.id, 'again')).toMatchObject({
          id: sent.id,
          acknowledged_at: ack.acknowledged_at,
          reply: 'done ✓',
          deduplicated: true,
        });
        const status = await store.status(sent.id);
        expect(status).toMatchObject({
          state: 'acknowledged',
          acknowledged: { reply: 'done ✓', at: ack.acknowledged_at },
        });
        expect(status!.stored.seq < status!.read!.seq && status!.read!.seq < status!.acknowledged!.seq).toBe(true);
        expect(await store.acknowledged('b', [sent.id, 'msg_other'])).toEqual(new Set([sent.id]));
        expect(await store.acknowledged('a', [sent.id])).toEqual(new Set()); // the sender did not acknowledge it
        expect((await verifyMailbox(dir)).problems).toEqual([]);
      });
    });

    it('only the recipient acknowledges, and only a message it received; a refusal stores nothing', async () => {
      await withStore(kind, ['a', 'b', 'c'], async (store) => {
        const sent = await store.send('a', { to: 'b', body: 'for b' });
        for (const [agent, id] of [
          ['c', sent.id],
          ['a', sent.id],
          ['b', 'msg_00000000-0000-0000-0000-000000000000'],
        ] as const) {
          const error = await store.ack(agent, id).catch((e: unknown) => e);
          expect(isWitnessError(error, 'NOT_FOUND') && error.message).toMatch(/is not a message you received/);
        }
        expect((await store.status(sent.id))?.state).toBe('stored');
      });
    });

    it("a reply joins its parent's thread; reply_to must be a message the sender received; a thread read returns the conversation and moves nothing", async () => {
      await withStore(kind, ['a', 'b'], async (store, dir) => {
        const first = await store.send('a', { to: 'b', body: 'question' });
        expect(first.thread).toBe(first.id);
        const other = await store.send('a', { to: 'b', body: 'unrelated' });
        const reply = await store.send('b', { to: 'a', body: 'answer', replyTo: first.id });
        expect(reply.thread).toBe(first.id);
        const again = await store.send('a', { to: 'b', body: 'follow-up', replyTo: reply.id });
        expect(again.thread).toBe(first.id);
        const error = await store.send('a', { to: 'b', body: 'x', replyTo: first.id }).catch((e: unknown) => e); // a sent it, did not receive it
        expect(isWitnessError(error, 'NOT_FOUND') && error.message).toMatch(
          /reply_to .* is not a message you received/,
        );
        const thread = await store.fetch('b', { ...fetchOpts(), thread: first.id });
        expect(thread.map((m) => m.body)).toEqual(['question', 'follow-up']);
        expect(thread[1]).toMatchObject({ reply_to: reply.id, thread: first.id });
        expect((await store.fetch('b', fetchOpts())).map((m) => m.id)).toEqual([first.id, other.id, again.id]); // nothing was marked read
        expect((await verifyMailbox(dir)).problems).toEqual([]);
      });
    });

    it('verify is clean after sends, reads and recorded calls', async () => {
      await withStore(kind, ['a', 'b'], async (store, dir) => {
        await store.send('a', { to: 'b', body: 'x' });
        await store.record('b', 'whoami', { ok: true });
        await store.fetch('b', fetchOpts());
        const report = await verifyMailbox(dir);
        expect(report).toMatchObject({ ok: true, calls: 3, messages: 1, problems: [] });
      });
    });
  });
}
