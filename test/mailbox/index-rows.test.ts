/**
 * What a database mailbox keeps beside its signed log must not become a new truth when
 * someone with database access (not the key) edits it. Deleting the rows that pointed
 * at an acknowledgement made message_status say `read` and let the recipient ack again
 * as if for the first time; changing a message row's id column left verify OK while
 * the recipient could no longer ack or reply. Each case runs on SQLite and PostgreSQL.
 */
import { describe, expect, it } from 'vitest';
import { isWitnessError } from '../../src/core/errors.js';
import { openStore, verifyMailbox } from '../../src/mailbox/index.js';
import { makeMailbox, type TestStore } from './helpers.js';
import { type Sql, withTables } from './raw-tables.js';

/** Deletes every index row pointing at `id`'s receipts that a version of the store keeps (ack pointers, mentions). */
async function deleteIndexRows(kind: 'sqlite' | 'postgres', sql: Sql, id: string, tool?: string): Promise<void> {
  if (kind === 'sqlite') {
    const exists = await sql("SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'acks'");
    if (exists.length > 0) await sql('DELETE FROM acks WHERE message_id = ?', [id]);
    return;
  }
  const exists = await sql("SELECT to_regclass('mailbox_mentions') IS NOT NULL AS there");
  if (exists[0]?.there)
    await sql(
      `DELETE FROM mailbox_mentions WHERE message_id = ?${tool ? ' AND tool = ?' : ''}`,
      tool ? [id, tool] : [id],
    );
}

for (const kind of ['sqlite', 'postgres'] as const satisfies readonly TestStore[]) {
  describe(`${kind}: index rows beside the log`, () => {
    it('with the rows that pointed at an acknowledgement deleted, the status is still acknowledged and a second ack is a duplicate', async () => {
      const mb = await makeMailbox(['alice', 'bob'], { store: kind });
      try {
        let store = await openStore(mb.dir, { keyPath: mb.keyPath });
        const sent = await store.send('alice', { to: 'bob', body: 'please confirm' });
        await store.fetch('bob', { limit: 10, peek: false, tool: 'check_inbox' });
        const first = await store.ack('bob', sent.id, 'done');
        await store.close();
        await withTables(kind, mb.dir, (sql) => deleteIndexRows(kind, sql, sent.id, 'ack_message'));
        store = await openStore(mb.dir, { keyPath: mb.keyPath });
        try {
          expect((await store.status(sent.id))?.state).toBe('acknowledged');
          expect(await store.acknowledged('bob', [sent.id])).toEqual(new Set([sent.id]));
          const again = await store.ack('bob', sent.id, 'done again');
          expect(again).toMatchObject({ deduplicated: true, acknowledged_at: first.acknowledged_at, reply: 'done' });
        } finally {
          await store.close();
        }
        expect((await verifyMailbox(mb.dir)).problems).toEqual([]);
      } finally {
        await mb.cleanup();
      }
    });

    it('with every row pointing at a message deleted, its status still comes from the log', async () => {
      const mb = await makeMailbox(['alice', 'bob'], { store: kind });
      try {
        let store = await openStore(mb.dir, { keyPath: mb.keyPath });
        const sent = await store.send('alice', { to: 'bob', body: 'read me' });
        await store.fetch('bob', { limit: 10, peek: false, tool: 'check_inbox' });
        await store.close();
        await withTables(kind, mb.dir, (sql) => deleteIndexRows(kind, sql, sent.id));
        store = await openStore(mb.dir, { keyPath: mb.keyPath });
        try {
          expect((await store.status(sent.id))?.state).toBe('read');
        } finally {
          await store.close();
        }
      } finally {
        await mb.cleanup();
      }
    });

    it('a message row whose id column was changed is reported by verify, naming the row', async () => {
      const mb = await makeMailbox(['alice', 'bob'], { store: kind });
      try {
        const store = await openStore(mb.dir, { keyPath: mb.keyPath });
        const sent = await store.send('alice', { to: 'bob', body: 'ack me' });
        await store.close();
        await withTables(kind, mb.dir, (sql) =>
          sql('UPDATE messages SET id = ? WHERE id = ?', ['msg_renamed', sent.id]),
        );
        const report = await verifyMailbox(mb.dir);
        expect(report.problems.map((p) => [p.kind, p.line])).toEqual([['modified', 1]]);
        expect(report.problems[0]!.file).toMatch(/#messages\[bob\]$/);
        expect(report.problems[0]!.message).toContain(
          `id column says "msg_renamed" but its text (what the receipt signed) is message ${sent.id}`,
        );
        const reopened = await openStore(mb.dir, { keyPath: mb.keyPath });
        try {
          const error = await reopened.ack('bob', sent.id).catch((e: unknown) => e);
          expect(isWitnessError(error, 'NOT_FOUND')).toBe(true); // what the server can no longer do, and why verify must say so
        } finally {
          await reopened.close();
        }
      } finally {
        await mb.cleanup();
      }
    });

    it('a deleted idempotency row is reported, and so is the second message a retry then stored', async () => {
      const mb = await makeMailbox(['alice', 'bob'], { store: kind });
      try {
        let store = await openStore(mb.dir, { keyPath: mb.keyPath });
        const sent = await store.send('alice', { to: 'bob', body: 'once', idempotencyKey: 'k1' });
        await store.close();
        await withTables(kind, mb.dir, (sql) => sql('DELETE FROM idempotency'));
        const report = await verifyMailbox(mb.dir);
        expect(report.problems.map((p) => p.kind)).toEqual(['deleted']);
        expect(report.problems[0]!.file).toMatch(/#idempotency$/);
        expect(report.problems[0]!.message).toMatch(
          new RegExp(`row \\(sender "alice", key "k1"\\) is missing: .* receipts message ${sent.id}`),
        );
        store = await openStore(mb.dir, { keyPath: mb.keyPath });
        const retry = await store.send('alice', { to: 'bob', body: 'once', idempotencyKey: 'k1' });
        await store.close();
        expect(retry.id).not.toBe(sent.id); // the store could not see the first send: verify must say so
        const after = await verifyMailbox(mb.dir);
        expect(after.problems.map((p) => p.kind)).toEqual(['modified']);
        expect(after.problems[0]!.message).toContain(
          `message ${retry.id} was stored as a new send under alice's key "k1", though message ${sent.id}`,
        );
      } finally {
        await mb.cleanup();
      }
    });

    it('an edited idempotency row is reported as modified, an added one as orphan', async () => {
      const mb = await makeMailbox(['alice', 'bob'], { store: kind });
      try {
        const store = await openStore(mb.dir, { keyPath: mb.keyPath });
        const sent = await store.send('alice', { to: 'bob', body: 'once', idempotencyKey: 'k1' });
        await store.close();
        await withTables(kind, mb.dir, async (sql) => {
          await sql('UPDATE idempotency SET id = ? WHERE key = ?', ['msg_elsewhere', 'k1']);
          await sql('INSERT INTO idempotency VALUES (?, ?, ?, ?, ?)', [
            'bob',
            'k2',
            sent.id,
            'bob',
            '2026-01-01T00:00:00.000Z',
          ]);
        });
        const report = await verifyMailbox(mb.dir);
        expect(report.problems.map((p) => p.kind).sort()).toEqual(['modified', 'orphan']);
        expect(report.problems.map((p) => p.message).join('\n')).toMatch(
          /row \(sender "alice", key "k1"\) points at message msg_elsewhere/,
        );
        expect(report.problems.map((p) => p.message).join('\n')).toMatch(
          /row \(sender "bob", key "k2"\) points at message .*no genuine send_message receipt/,
        );
      } finally {
        await mb.cleanup();
      }
    });
  });
}
