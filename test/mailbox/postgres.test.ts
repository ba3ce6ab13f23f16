/**
 * What only a PostgreSQL mailbox has: creating it against a real server
 * (and refusing what would leak a password or mix two mailboxes), its schema's
 * version, wake-ups and the send rate shared by server processes, a listener that
 * survives a dropped connection, and verify catching edits made in the database.
 * The behaviour every store shares is in store-suite.ts.
 */
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openPool } from '../../src/attest/postgres.js';
import { isWitnessError } from '../../src/core/errors.js';
import {
  createRuntime,
  type MailboxRuntime,
  openStore,
  type PostgresStore,
  readConfig,
  tailMailbox,
  verifyMailbox,
} from '../../src/mailbox/index.js';
import type { Message } from '../../src/mailbox/call-log.js';
import { mailboxDatabaseUrl } from '../../src/mailbox/store/postgres/db.js';
import type { ToolContext } from '../../src/mailbox/tools/index.js';
import { type MailSignal, waitForMail } from '../../src/mailbox/tools/wait.js';
import { freshDatabase } from '../attest/postgres.js';
import { cli, makeMailbox, type TestMailbox, tempDir, waitFor } from './helpers.js';
import { withTables } from './raw-tables.js';

const made: TestMailbox[] = [];
afterAll(async () => {
  for (const mb of made) await mb.cleanup();
});
async function mailbox(agents = ['a', 'b']): Promise<TestMailbox> {
  const mb = await makeMailbox(agents, { store: 'postgres' });
  made.push(mb);
  return mb;
}
const fetchOpts = { limit: 20, peek: false, tool: 'check_inbox' as const };

/** A waiter's tool context, and a promise that settles once the waiter has gone to sleep (found no mail). */
function sleepingWaiter(runtime: MailboxRuntime, agent: string): { ctx: ToolContext; asleep: Promise<void> } {
  let fellAsleep!: () => void;
  const asleep = new Promise<void>((resolve) => (fellAsleep = resolve));
  const signal = runtime.mailSignal;
  const watched = Object.assign(Object.create(signal) as MailSignal, {
    wait: (...args: Parameters<MailSignal['wait']>) => {
      fellAsleep();
      return signal.wait(...args);
    },
  });
  return { ctx: { ...runtime, mailSignal: watched, agent, closing: runtime.closing.signal }, asleep };
}

describe('witness mailbox init --store postgres', () => {
  it('creates a mailbox whose folder holds only mailbox.json, naming the database', async () => {
    const mb = await mailbox();
    expect(readdirSync(mb.dir)).toEqual(['mailbox.json']);
    expect(readConfig(mb.dir)).toMatchObject({ store: 'postgres', database: mb.database });
  });

  it('refuses a URL with a password (mailbox.json is readable), creating nothing', async () => {
    const dir = join(tempDir(), 'mb');
    const key = join(tempDir(), 'k.json');
    const { err } = await cli(['mailbox', 'init', dir, '--key', key, '--store', 'postgres://me:s3cret@127.0.0.1/x'], 2);
    expect(err).toMatch(/holds a password.*WITNESS_DATABASE_URL/);
    expect(err).not.toMatch(/s3cret/);
    expect(existsSync(dir) || existsSync(key)).toBe(false);
  });

  it('refuses a database that already holds a mailbox, creating no key and no folder', async () => {
    const first = await mailbox();
    const dir = join(tempDir(), 'mb');
    const key = join(tempDir(), 'k.json');
    const { err } = await cli(['mailbox', 'init', dir, '--key', key, '--store', first.database!], 2);
    expect(err).toMatch(/already holds mailbox/);
    expect(existsSync(dir) || existsSync(key)).toBe(false);
  });

  it('says which database cannot be reached (exit 1; a host that does not resolve, exit 2) and that WITNESS_DATABASE_URL is unset (exit 2)', async () => {
    const dir = join(tempDir(), 'mb');
    expect((await cli(['mailbox', 'init', dir, '--store', 'postgres:///witness_no_such_db'], 1)).err).toMatch(
      /Cannot reach the mailbox database at postgres:\/\/\/witness_no_such_db: database "witness_no_such_db" does not exist/,
    );
    // A host name that does not resolve is an address the caller gave: exit 2, as docs/errors.md says for ENOTFOUND.
    expect((await cli(['mailbox', 'init', dir, '--store', 'postgres://nosuch.invalid/db'], 2)).err).toMatch(
      /Cannot reach the mailbox database at postgres:\/\/nosuch\.invalid\/db: .*ENOTFOUND/,
    );
    const saved = process.env.WITNESS_DATABASE_URL;
    delete process.env.WITNESS_DATABASE_URL;
    try {
      expect((await cli(['mailbox', 'init', dir, '--store', 'postgres'], 2)).err).toMatch(
        /WITNESS_DATABASE_URL, which is not set/,
      );
    } finally {
      if (saved !== undefined) process.env.WITNESS_DATABASE_URL = saved;
    }
    expect(existsSync(dir)).toBe(false);
  });

  it("a mailbox.json pointed at another mailbox's database is refused by serve and verify", async () => {
    const [one, two] = [await mailbox(), await mailbox()];
    const config = readConfig(one.dir);
    writeFileSync(join(one.dir, 'mailbox.json'), JSON.stringify({ ...config, database: two.database }));
    const error = await openStore(one.dir, { keyPath: one.keyPath }).catch((e: unknown) => e);
    expect(isWitnessError(error, 'INVALID_INPUT') && error.message).toMatch(
      /holds mailbox .*not this folder's mailbox/,
    );
    expect((await cli(['mailbox', 'verify', one.dir], 2)).err).toMatch(/holds mailbox/);
  });

  it('a database at the previous schema version (1) is refused on open without a change, then upgraded by `mailbox migrate`, its existing receipts indexed for message_status', async () => {
    const mb = await mailbox();
    const store = await openStore(mb.dir, { keyPath: mb.keyPath });
    const sent = await store.send('a', { to: 'b', body: 'before the upgrade' });
    await store.fetch('b', fetchOpts);
    await store.close();
    // As a version-1 database was: no index of the lines that name a message, and the version table says 1.
    await withTables('postgres', mb.dir, (sql) =>
      sql(
        "DROP INDEX mailbox_calls_ids; DROP FUNCTION mailbox_call_ids(text); UPDATE witness_schema SET version = 1 WHERE component = 'mailbox'",
      ),
    );
    const refused = await openStore(mb.dir, { keyPath: mb.keyPath }).catch((e: unknown) => e);
    expect(isWitnessError(refused, 'USAGE') && refused.message).toMatch(
      /schema is at version 1, older than this Witness's 3; run `witness mailbox migrate .*mb` as a role that may create tables/,
    );
    expect(
      (
        await withTables('postgres', mb.dir, (sql) =>
          sql("SELECT version FROM witness_schema WHERE component = 'mailbox'"),
        )
      )[0],
    ).toEqual({ version: 1 });
    expect((await cli(['mailbox', 'migrate', mb.dir])).out).toMatch(/from version 1 to 3/);
    const upgraded = await openStore(mb.dir, { keyPath: mb.keyPath });
    try {
      expect(await upgraded.status(sent.id)).toMatchObject({ id: sent.id, from: 'a', to: 'b', state: 'read' });
      expect(
        (
          await withTables('postgres', mb.dir, (sql) =>
            sql("SELECT version FROM witness_schema WHERE component = 'mailbox'"),
          )
        )[0],
      ).toEqual({ version: 3 });
    } finally {
      await upgraded.close();
    }
  });

  it('a database whose mailbox schema is newer than this build is refused', async () => {
    const mb = await mailbox();
    await withTables('postgres', mb.dir, (sql) =>
      sql("UPDATE witness_schema SET version = 99 WHERE component = 'mailbox'"),
    );
    const error = await openStore(mb.dir, { keyPath: mb.keyPath }).catch((e: unknown) => e);
    expect(isWitnessError(error, 'INVALID_INPUT') && error.message).toMatch(
      /mailbox schema is version 99, newer than this Witness knows \(3\)/,
    );
  });
});

describe('several server processes on one PostgreSQL mailbox', () => {
  it('a wait in one process wakes on a send committed by another, without polling', async () => {
    const mb = await mailbox();
    const [waiter, sender] = [
      await createRuntime({ dir: mb.dir, keyPath: mb.keyPath }),
      await createRuntime({ dir: mb.dir, keyPath: mb.keyPath }),
    ];
    try {
      expect((waiter.store as PostgresStore).pollMs).toBe(1000); // listening: the poll is only the fallback
      const { ctx, asleep } = sleepingWaiter(waiter, 'b');
      const waiting = waitForMail(ctx, 10, 20_000);
      await asleep;
      const sent = await sender.store.send('a', { to: 'b', body: 'across processes' });
      const acked = Date.now();
      const got = await waiting;
      expect(got.map((m) => m.id)).toEqual([sent.id]);
      expect(Date.now() - acked).toBeLessThan(500); // woken by the notification: the fallback poll sleeps 1000 ms
    } finally {
      await Promise.all([waiter.store.close(), sender.store.close()]);
    }
  });

  it('the listener reconnects after its connection is killed, wakes everyone once, and keeps waking', async () => {
    const mb = await mailbox();
    const [waiter, sender] = [
      await createRuntime({ dir: mb.dir, keyPath: mb.keyPath }),
      await createRuntime({ dir: mb.dir, keyPath: mb.keyPath }),
    ];
    try {
      const store = waiter.store as PostgresStore;
      await withTables('postgres', mb.dir, (sql) =>
        sql(
          "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query LIKE 'LISTEN%' AND datname = current_database()",
        ),
      );
      await waitFor(
        () => store.pollMs === 50,
        10_000,
        () => 'the listener to notice its connection is gone',
      );
      await waitFor(
        () => store.pollMs === 1000,
        10_000,
        () => 'the listener to reconnect',
      );
      const { ctx, asleep } = sleepingWaiter(waiter, 'b');
      const waiting = waitForMail(ctx, 10, 20_000);
      await asleep;
      const sent = await sender.store.send('a', { to: 'b', body: 'after the reconnection' });
      const acked = Date.now();
      expect((await waiting).map((m) => m.id)).toEqual([sent.id]);
      expect(Date.now() - acked).toBeLessThan(500);
    } finally {
      await Promise.all([waiter.store.close(), sender.store.close()]);
    }
  });

  it('the send rate per agent holds across processes: two servers share one bucket', async () => {
    const mb = await mailbox();
    const limits = { sendsPerMinute: 5 };
    const [one, two] = [
      await createRuntime({ dir: mb.dir, keyPath: mb.keyPath, limits }),
      await createRuntime({ dir: mb.dir, keyPath: mb.keyPath, limits }),
    ];
    try {
      const takes = await Promise.allSettled(Array.from({ length: 12 }, (_, i) => (i % 2 ? one : two).rate.take('a')));
      expect(takes.filter((t) => t.status === 'fulfilled')).toHaveLength(5);
      const refused = takes.find((t) => t.status === 'rejected') as PromiseRejectedResult;
      expect(refused.reason.message).toMatch(/Rate limit: a may send 5 messages per minute\. Try again in \d+ ms/);
      await one.rate.take('b'); // another agent's bucket is its own
    } finally {
      await Promise.all([one.store.close(), two.store.close()]);
    }
  });

  it('agents added while a server runs can be sent to at once (the commit rereads a changed agent list)', async () => {
    const mb = await mailbox(['a']);
    const store = await openStore(mb.dir, { keyPath: mb.keyPath });
    try {
      expect((await store.agents()).map((a) => a.name)).toEqual(['a']);
      await cli(['mailbox', 'add-agent', mb.dir, 'late']);
      expect((await store.send('a', { to: 'late', body: 'welcome' })).deduplicated).toBe(false);
      await waitFor(
        async () => (await store.agents()).some((a) => a.name === 'late'),
        5000,
        () => 'the agent list to show late',
      );
    } finally {
      await store.close();
    }
  });
});

describe('verify and tail on PostgreSQL', () => {
  it('reports edits made in the database by row: a changed body, a deleted receipt, a planted message', async () => {
    const mb = await mailbox();
    const store = await openStore(mb.dir, { keyPath: mb.keyPath });
    const sent: Array<{ id: string }> = [];
    try {
      for (const body of ['one', 'two', 'three']) sent.push(await store.send('a', { to: 'b', body }));
    } finally {
      await store.close();
    }
    expect((await verifyMailbox(mb.dir)).problems).toEqual([]);
    await withTables('postgres', mb.dir, async (sql) => {
      await sql('UPDATE messages SET text = replace(text, \'"one"\', \'"ONE"\') WHERE id = ?', [sent[0]!.id]);
      await sql('DELETE FROM calls WHERE seq = 2');
      await sql('INSERT INTO messages (id, recipient, text) VALUES (?, ?, ?)', [
        'msg_planted',
        'b',
        JSON.stringify({ id: 'msg_planted', from: 'a', to: 'b', body: 'x', sent_at: 't' }),
      ]);
    });
    const report = await verifyMailbox(mb.dir);
    expect(report.ok).toBe(false);
    const kinds = report.problems.map((p) => `${p.kind} ${p.file.replace(/^postgres:.*#/, '#')}`);
    expect(kinds).toEqual(expect.arrayContaining(['modified #messages[b]', 'orphan #messages[b]']));
    expect(report.problems.some((p) => p.file.endsWith('#calls') && /deleted|modified|reordered/.test(p.kind))).toBe(
      true,
    );
    // Locations are the URL (password hidden) and the table, never the scheme twice.
    for (const p of report.problems) expect(p.file).toMatch(/^postgres(ql)?:\/\/[^#]*#/);
  });

  it('tail follows messages sent by a server, new ones only unless --all', async () => {
    const mb = await mailbox();
    const store = await openStore(mb.dir, { keyPath: mb.keyPath });
    try {
      await store.send('a', { to: 'b', body: 'before' });
      const seen: Message[] = [];
      const controller = new AbortController();
      const tail = tailMailbox(mb.dir, (m) => seen.push(m), { signal: controller.signal, pollMs: 20 });
      await waitFor(async () => {
        await store.send('a', { to: 'b', body: 'after' });
        return seen.length > 0;
      }, 10_000);
      controller.abort();
      await tail;
      expect(seen.every((m) => m.body === 'after')).toBe(true);
      const all: Message[] = [];
      const c2 = new AbortController();
      const tail2 = tailMailbox(mb.dir, (m) => all.push(m), { signal: c2.signal, fromStart: true, pollMs: 20 });
      await waitFor(() => all.length >= 2, 10_000);
      c2.abort();
      await tail2;
      expect(all[0]!.body).toBe('before');
    } finally {
      await store.close();
    }
  });

  it('the store keeps messages, cursors and receipts in one transaction: a failed group leaves nothing', async () => {
    const mb = await mailbox();
    const store = await openStore(mb.dir, { keyPath: mb.keyPath });
    try {
      await store.send('a', { to: 'b', body: 'kept' });
      // A constraint the store never expects makes the database refuse the next commit as a whole.
      await withTables('postgres', mb.dir, (sql) =>
        sql("ALTER TABLE messages ADD CONSTRAINT no_boom CHECK (text NOT LIKE '%boom%')"),
      );
      const error = await store.send('a', { to: 'b', body: 'boom' }).catch((e: unknown) => e);
      expect(isWitnessError(error, 'IO') && error.message).toMatch(
        /refused the write .*not stored and nothing of it was acknowledged/,
      );
      expect((await store.fetch('b', fetchOpts)).map((m) => m.body)).toEqual(['kept']);
    } finally {
      await store.close();
    }
    expect((await verifyMailbox(mb.dir)).problems).toEqual([]);
  });

  it("a read outside a commit that the database fails is the mailbox's IO error, and changes nothing", async () => {
    const mb = await mailbox();
    const store = await openStore(mb.dir, { keyPath: mb.keyPath });
    try {
      await store.send('a', { to: 'b', body: 'kept' });
      await withTables('postgres', mb.dir, (sql) => sql('ALTER TABLE messages RENAME TO messages_away'));
      // One at a time: a read started before the previous one's rejection is handled would be an unhandled rejection.
      for (const read of [
        () => store.hasUnread('b'),
        () => store.inboxMark('b'),
        () => store.inboxSince('b', '', 10),
      ]) {
        const error = await read().catch((e: unknown) => e);
        expect(isWitnessError(error, 'IO') && error.message).toMatch(
          /failed a read \(42P01: .*\): nothing was changed\. Check the database server/,
        );
      }
      await withTables('postgres', mb.dir, (sql) => sql('ALTER TABLE messages_away RENAME TO mailbox_messages'));
      expect((await store.fetch('b', fetchOpts)).map((m) => m.body)).toEqual(['kept']);
    } finally {
      await store.close();
    }
    expect((await verifyMailbox(mb.dir)).problems).toEqual([]);
  });
});

describe('a fresh database per mailbox', () => {
  it("the mailbox's URL is the one its mailbox.json names", async () => {
    const db = await freshDatabase('mburl');
    try {
      const dir = join(tempDir(), 'mb');
      await cli(['mailbox', 'init', dir, '--key', join(tempDir(), 'k.json'), '--store', db.url]);
      expect(mailboxDatabaseUrl(readConfig(dir))).toBe(db.url);
      const pool = await openPool(db.url, { purpose: 'test' });
      try {
        expect((await pool.query("SELECT version FROM witness_schema WHERE component = 'mailbox'")).rows).toEqual([
          { version: 3 },
        ]);
      } finally {
        await pool.end();
      }
    } finally {
      await db.drop();
    }
  });
});
