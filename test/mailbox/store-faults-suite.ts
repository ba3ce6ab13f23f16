/**
 * The shared store suite's second half: hostile input and damaged data, run against
 * every store. A send that fails stores nothing; a damaged inbox line is
 * skipped and counted, never fatal; a recipient's unread quota refuses further sends
 * with a clear error and a failure receipt.
 */
import { randomUUID } from 'node:crypto';
import { appendFileSync, readFileSync, truncateSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isWitnessError } from '../../src/core/errors.js';
import { openStore, verifyMailbox } from '../../src/mailbox/index.js';
import type { MailboxLimits } from '../../src/mailbox/limits.js';
import { readSnapshot } from '../../src/mailbox/store/index.js';
import type { MailboxStore } from '../../src/mailbox/store/types.js';
import { canonicalSha256Hex } from '../../src/core/hash.js';
import { forgedCallLine } from './forge.js';
import { withTables } from './raw-tables.js';
import { makeMailbox, type TestStore } from './helpers.js';

const fetchOpts = (limit = 20, peek = false) => ({ limit, peek, tool: 'check_inbox' as const });

type Kind = TestStore;

async function withStore(
  kind: Kind,
  limits: Partial<MailboxLimits>,
  fn: (store: MailboxStore, dir: string) => Promise<void>,
): Promise<void> {
  const mb = await makeMailbox(['a', 'b'], { store: kind });
  try {
    const store = await openStore(mb.dir, { keyPath: mb.keyPath, limits });
    try {
      await fn(store, mb.dir);
    } finally {
      await store.close();
    }
  } finally {
    await mb.cleanup();
  }
}

/** The call log as parsed records, whichever store holds it. */
async function calls(dir: string): Promise<Array<Record<string, unknown>>> {
  return (await readSnapshot(dir)).calls.map((c) => JSON.parse(c.text) as Record<string, unknown>);
}

/** Appends damaged records to b's inbox, as a broken tool or a hostile agent could. */
async function damageInbox(kind: Kind, dir: string, lines: string[]): Promise<void> {
  if (kind === 'jsonl') {
    appendFileSync(join(dir, 'inbox', 'b.jsonl'), lines.map((l) => `${l}\n`).join(''));
    return;
  }
  await withTables(kind, dir, async (sql) => {
    for (const [i, text] of lines.entries())
      await sql('INSERT INTO messages (id, recipient, text) VALUES (?, ?, ?)', [`junk${i}`, 'b', text]);
  });
}

/**
 * What an attacker who can write the store (not its key) plants so that a keyed send
 * of a's to b under `key` would be answered "duplicate": an idempotency record — a
 * send line signed by a stranger's key (JSONL), an idempotency row and such a line
 * (SQLite, PostgreSQL) — naming a message id, and with `withMessage` that message
 * too. Returns the forged id.
 */
async function forgeIdempotency(kind: Kind, dir: string, key: string, withMessage: boolean): Promise<string> {
  const id = `msg_${randomUUID()}`;
  const sentAt = new Date().toISOString();
  const message = { id, from: 'a', to: 'b', body: 'never sent', sent_at: sentAt, idempotency_key: key };
  const entry = {
    ts: sentAt,
    agent: 'a',
    tool: 'send_message',
    ok: true,
    message_ids: [id],
    to: ['b'],
    digests: [canonicalSha256Hex(message)],
    idempotency_key: key,
  };
  if (kind === 'jsonl') {
    const last = readFileSync(join(dir, 'calls.jsonl'), 'utf8').trimEnd().split('\n').at(-1)!;
    if (withMessage) appendFileSync(join(dir, 'inbox', 'b.jsonl'), `${JSON.stringify(message)}\n`);
    appendFileSync(join(dir, 'calls.jsonl'), `${forgedCallLine(last, entry, 2)}\n`);
    return id;
  }
  await withTables(kind, dir, async (sql) => {
    const last = (await sql('SELECT seq, text FROM calls ORDER BY seq DESC LIMIT 1'))[0] as {
      seq: number | string;
      text: string;
    };
    await sql('INSERT INTO calls (seq, text) VALUES (?, ?)', [
      Number(last.seq) + 1,
      forgedCallLine(last.text, entry, 2),
    ]);
    await sql('INSERT INTO idempotency VALUES (?, ?, ?, ?, ?)', ['a', key, id, 'b', sentAt]);
    if (withMessage)
      await sql('INSERT INTO messages (id, recipient, text) VALUES (?, ?, ?)', [id, 'b', JSON.stringify(message)]);
  });
  return id;
}

/** Removes every stored message of b's, as an agent editing the store could. */
async function emptyInbox(kind: Kind, dir: string): Promise<void> {
  if (kind === 'jsonl') {
    truncateSync(join(dir, 'inbox', 'b.jsonl'), 0);
    return;
  }
  await withTables(kind, dir, (sql) => sql("DELETE FROM messages WHERE recipient = 'b'").then(() => {}));
}

const DAMAGED = [
  'null',
  '42',
  '"a string"',
  '[1,2]',
  '{"id":"msg_x"}',
  '{"id":"msg_dup","from":"a","to":"b","body":"x","sent_at":"t","id":"msg_other"}',
  '{not json',
];

export function runStoreFaultsSuite(kind: Kind): void {
  describe(`${kind} store: faults and hostile input`, () => {
    for (const [what, input] of [
      ['body', { to: 'b', body: 'bad \ud800 body' }],
      ['idempotency key', { to: 'b', body: 'fine', idempotencyKey: 'k\udc00' }],
    ] as const) {
      it(`a lone surrogate in the ${what} fails the send and stores nothing (no "error but stored")`, async () => {
        await withStore(kind, {}, async (store, dir) => {
          const error = await store.send('a', input).catch((e: unknown) => e);
          expect(isWitnessError(error)).toBe(true);
          expect(await store.fetch('b', fetchOpts())).toEqual([]);
          expect((await calls(dir)).filter((c) => c.tool === 'send_message').map((c) => c.ok)).toEqual([false]);
          const report = await verifyMailbox(dir);
          expect(report.problems).toEqual([]);
          expect(report.messages).toBe(0);
        });
      });
    }

    it('damaged inbox records (null, non-objects, non-messages, duplicate keys) are skipped and counted in the receipt; reads go on', async () => {
      await withStore(kind, {}, async (store, dir) => {
        const first = await store.send('a', { to: 'b', body: 'first' });
        await damageInbox(kind, dir, DAMAGED);
        const last = await store.send('a', { to: 'b', body: 'last' });
        expect((await store.fetch('b', fetchOpts(1))).map((m) => m.id)).toEqual([first.id]);
        expect((await store.fetch('b', fetchOpts(5))).map((m) => m.id)).toEqual([last.id]);
        expect(await store.fetch('b', fetchOpts())).toEqual([]);
        const reads = (await calls(dir)).filter((c) => c.tool === 'check_inbox');
        expect(reads.map((c) => [c.message_ids, c.skipped])).toEqual([
          [[first.id], undefined],
          [[last.id], DAMAGED.length],
          [[], undefined],
        ]);
      });
    });

    for (const withMessage of [false, true]) {
      it(`a forged idempotency record (${withMessage ? 'with a planted message' : 'naming no stored message'}) does not make a keyed send "duplicate": the send is stored and delivered`, async () => {
        await withStore(kind, {}, async (store, dir) => {
          await store.send('a', { to: 'b', body: 'first' });
          const forged = await forgeIdempotency(kind, dir, 'k', withMessage);
          const sent = await store.send('a', { to: 'b', body: 'real', idempotencyKey: 'k' });
          expect(sent.deduplicated).toBe(false);
          expect(sent.id).not.toBe(forged);
          expect(await store.send('a', { to: 'b', body: 'real', idempotencyKey: 'k' })).toMatchObject({
            id: sent.id,
            deduplicated: true,
          });
          expect((await store.fetch('b', fetchOpts())).filter((m) => m.body === 'real').map((m) => m.id)).toEqual([
            sent.id,
          ]);
          // verify reports the planted evidence, and nothing about the real send
          const problems = (await verifyMailbox(dir)).problems;
          expect(problems.length).toBeGreaterThan(0);
          expect(problems.filter((p) => p.message.includes(sent.id))).toEqual([]);
        });
      });
    }

    it('a keyed send whose message was removed from the store is stored again on retry, not answered "duplicate"', async () => {
      await withStore(kind, {}, async (store, dir) => {
        const first = await store.send('a', { to: 'b', body: 'lost', idempotencyKey: 'k1' });
        await emptyInbox(kind, dir);
        const again = await store.send('a', { to: 'b', body: 'lost', idempotencyKey: 'k1' });
        expect(again.deduplicated).toBe(false);
        expect(again.id).not.toBe(first.id);
        expect((await store.fetch('b', fetchOpts())).map((m) => m.id)).toEqual([again.id]);
      });
    });

    it('hasUnread counts only readable messages', async () => {
      await withStore(kind, {}, async (store, dir) => {
        await damageInbox(kind, dir, ['null', '{"id":"msg_x"}']);
        expect(await store.hasUnread('b')).toBe(false);
        await store.send('a', { to: 'b', body: 'real' });
        expect(await store.hasUnread('b')).toBe(true);
      });
    });

    it('a recipient with maxUnreadMessages unread refuses more, naming the recipient, the limit and what to do, with a failure receipt', async () => {
      await withStore(kind, { maxUnreadMessages: 3 }, async (store, dir) => {
        for (let i = 0; i < 3; i++) await store.send('a', { to: 'b', body: `m${i}` });
        const error = await store.send('a', { to: 'b', body: 'one too many' }).catch((e: unknown) => e);
        expect(isWitnessError(error)).toBe(true);
        expect((error as Error).message).toMatch(/b.*3 unread messages.*limit.*3.*(read|wait)/i);
        expect((await store.send('b', { to: 'a', body: 'other inboxes are not affected' })).to).toBe('a');
        const failed = (await calls(dir)).filter((c) => c.tool === 'send_message' && c.ok === false);
        expect(failed).toHaveLength(1);
        expect((failed[0]!.error as { message: string }).message).toMatch(/3 unread messages/);
        await store.fetch('b', fetchOpts(2));
        await store.send('a', { to: 'b', body: 'fits again' });
        expect((await store.fetch('b', fetchOpts())).map((m) => m.body)).toEqual(['m2', 'fits again']);
        expect((await verifyMailbox(dir)).problems).toEqual([]);
      });
    });

    it('a recipient over maxUnreadBytes refuses more; a group of sends cannot overshoot it together', async () => {
      await withStore(kind, { maxUnreadBytes: 2000 }, async (store, dir) => {
        const results = await Promise.allSettled(
          Array.from({ length: 10 }, (_, i) => store.send('a', { to: 'b', body: `${i}`.repeat(400) })),
        );
        const accepted = results.filter((r) => r.status === 'fulfilled').length;
        expect(accepted).toBeGreaterThan(0);
        expect(accepted).toBeLessThan(10);
        for (const r of results)
          if (r.status === 'rejected') expect((r.reason as Error).message).toMatch(/b.*unread bytes.*2000/);
        expect(
          (await readSnapshot(dir)).inboxes
            .flatMap((i) => i.lines)
            .reduce((n, l) => n + Buffer.byteLength(l.text) + 1, 0),
        ).toBeLessThanOrEqual(2000);
      });
    });

    it('0 means no quota', async () => {
      await withStore(kind, { maxUnreadMessages: 0, maxUnreadBytes: 0 }, async (store) => {
        for (let i = 0; i < 30; i++) await store.send('a', { to: 'b', body: 'x' });
        expect(await store.fetch('b', fetchOpts(100))).toHaveLength(30);
      });
    });
  });
}
