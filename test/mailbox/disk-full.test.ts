/**
 * Disk full: a mailbox on a small tmpfs that another program has
 * filled. With 1 and 8 sends in flight, on the JSONL and SQLite stores (the ones on this disk), every acknowledged send must
 * be in its inbox, every other send must fail with a clear IO error, the store must
 * be left as it was before the failed commit (verify clean), and once space is freed
 * sends work again.
 */
import { rmSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { isWitnessError } from '../../src/core/errors.js';
import { openStore, verifyMailbox } from '../../src/mailbox/index.js';
import type { MailboxStore } from '../../src/mailbox/store/types.js';
import { fillDisk, makeMailboxOn, mountTmpfs, storedIds, TMPFS_UNAVAILABLE } from './faults.js';

/** `count` sends with `inFlight` outstanding at a time; the ids acknowledged and the errors. */
async function sendMany(
  store: MailboxStore,
  count: number,
  inFlight: number,
): Promise<{ acked: string[]; errors: unknown[] }> {
  const acked: string[] = [];
  const errors: unknown[] = [];
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const i = next++;
      try {
        acked.push((await store.send('a', { to: 'b', body: `message ${i} ${'x'.repeat(300)}` })).id);
      } catch (error) {
        errors.push(error);
      }
    }
  };
  await Promise.all(Array.from({ length: inFlight }, worker));
  return { acked, errors };
}

describe.skipIf(TMPFS_UNAVAILABLE !== undefined)('a full disk', () => {
  for (const kind of ['jsonl', 'sqlite'] as const) {
    for (const inFlight of [1, 8]) {
      it(`${kind}, ${inFlight} in flight: every acknowledged send is stored, the rest fail with IO, and sends work again once space is freed`, async () => {
        const fs = mountTmpfs(2 * 1024 * 1024);
        try {
          const mb = await makeMailboxOn(fs, ['a', 'b'], kind);
          const store = await openStore(mb.dir, { keyPath: mb.keyPath });
          try {
            await store.send('a', { to: 'b', body: 'before' }); // files exist; the disk then fills up
            const filler = fillDisk(mb.dir, 24 * 1024);
            const { acked, errors } = await sendMany(store, 300, inFlight);
            expect(errors.length).toBeGreaterThan(0);
            for (const e of errors) {
              expect(isWitnessError(e, 'IO'), String(e)).toBe(true);
              expect((e as Error).message).toMatch(/disk .*is full.*free/i);
            }
            const fetchError = await store
              .fetch('b', { limit: 5, peek: false, tool: 'check_inbox' })
              .catch((e: unknown) => e);
            if (fetchError instanceof Error) expect(isWitnessError(fetchError, 'IO')).toBe(true);
            const stored = await storedIds(mb.dir);
            expect(acked.filter((id) => !stored.has(id))).toEqual([]);
            expect((await verifyMailbox(mb.dir, { keyPath: mb.keyPath })).problems).toEqual([]);

            rmSync(filler);
            const after = await store.send('a', { to: 'b', body: 'after' });
            expect((await storedIds(mb.dir)).has(after.id)).toBe(true);
            const report = await verifyMailbox(mb.dir, { keyPath: mb.keyPath });
            expect(report.problems).toEqual([]);
            const read = new Set(
              (await store.fetch('b', { limit: 100, peek: false, tool: 'check_inbox' })).map((m) => m.id),
            );
            const more = new Set(
              (await store.fetch('b', { limit: 100, peek: false, tool: 'check_inbox' })).map((m) => m.id),
            );
            const all = new Set([
              ...read,
              ...more,
              ...(fetchError instanceof Error ? [] : (fetchError as Array<{ id: string }>).map((m) => m.id)),
            ]);
            for (const id of [...acked, after.id]) expect(all.has(id)).toBe(true);
          } finally {
            await store.close();
          }
        } finally {
          fs.unmount();
        }
      }, 60_000);
    }
  }
});
