/**
 * Bounded memory: reading an inbox or the call log pages through
 * the file instead of loading it whole, so a 600 MB inbox line (more than a V8
 * string can hold) or a call log of that size neither fails every read nor costs
 * memory in proportion. The big files are sparse, so the test needs no disk space.
 */
import { appendFileSync, statSync, truncateSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openStore, verifyMailbox } from '../../src/mailbox/index.js';
import { call, makeMailbox, stdioClient } from './helpers.js';

const BIG = 600 * 1024 * 1024;

/** Appends one line of `bytes` NULs (sparse: it takes no disk space) and its newline. */
function appendHugeLine(file: string, bytes: number): void {
  truncateSync(file, statSync(file).size + bytes);
  appendFileSync(file, '\n');
}

/** The 600 MB line is far over the default unread quota: the setup sends without one. */
const NO_QUOTA = { maxUnreadBytes: 0 };

const rssMb = () => process.memoryUsage().rss / 1024 / 1024;

describe('bounded memory', () => {
  it('check_inbox with limit 1 works on a 600 MB inbox, and the huge line is skipped as damaged', async () => {
    const mb = await makeMailbox(['a', 'b']);
    const store = await openStore(mb.dir, { keyPath: mb.keyPath, limits: NO_QUOTA });
    const first = await store.send('a', { to: 'b', body: 'first' });
    appendHugeLine(join(mb.dir, 'inbox', 'b.jsonl'), BIG);
    const last = await store.send('a', { to: 'b', body: 'last' });
    await store.close();

    const b = await stdioClient(mb.dir, 'b');
    try {
      const one = await call<{ messages: Array<{ id: string }> }>(b.client, 'check_inbox', { limit: 1 });
      expect(one.messages.map((m) => m.id)).toEqual([first.id]);
      const next = await call<{ messages: Array<{ id: string }> }>(b.client, 'check_inbox', { limit: 1 });
      expect(next.messages.map((m) => m.id)).toEqual([last.id]);
    } finally {
      await b.close();
    }
  }, 120_000);

  it('an in-process read of a 600 MB inbox costs memory independent of its size', async () => {
    const mb = await makeMailbox(['a', 'b']);
    const store = await openStore(mb.dir, { keyPath: mb.keyPath, limits: NO_QUOTA });
    try {
      await store.send('a', { to: 'b', body: 'first' });
      appendHugeLine(join(mb.dir, 'inbox', 'b.jsonl'), BIG);
      const last = await store.send('a', { to: 'b', body: 'last' });
      const before = rssMb();
      await store.fetch('b', { limit: 1, peek: false, tool: 'check_inbox' });
      expect(await store.hasUnread('b')).toBe(true);
      expect((await store.fetch('b', { limit: 5, peek: false, tool: 'check_inbox' })).map((m) => m.id)).toEqual([
        last.id,
      ]);
      expect(rssMb() - before).toBeLessThan(150);
    } finally {
      await store.close();
    }
    const report = await verifyMailbox(mb.dir);
    expect(report.problems.map((p) => [p.kind, p.line])).toEqual([['corrupt', 2]]);
  }, 120_000);

  it('a server opens a mailbox whose call log holds a 600 MB line, and its receipts chain on', async () => {
    const mb = await makeMailbox(['a', 'b']);
    const store = await openStore(mb.dir, { keyPath: mb.keyPath });
    await store.send('a', { to: 'b', body: 'before' });
    await store.close();
    appendHugeLine(join(mb.dir, 'calls.jsonl'), BIG);
    const reopened = await openStore(mb.dir, { keyPath: mb.keyPath });
    try {
      const before = rssMb();
      await reopened.send('a', { to: 'b', body: 'after' });
      expect(rssMb() - before).toBeLessThan(150);
    } finally {
      await reopened.close();
    }
    const report = await verifyMailbox(mb.dir);
    expect(report.problems.map((p) => [p.kind, p.line])).toEqual([['corrupt', 2]]);
  }, 120_000);
});
