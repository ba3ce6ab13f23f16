/**
 * A read cursor edited to skip messages (cursors/<agent>.json, or the SQLite
 * cursors row) is reported by verify: every message before the cursor must have
 * been delivered by a read receipt that was not a peek. A cursor moved back (the
 * messages would be delivered again, as after a power loss between a read's receipt
 * and its cursor write) is a warning; a cursor inside a line or past the end is a
 * problem. A property: whatever honest reads happened, moving the cursor forward
 * to any later line boundary is reported as exactly the messages it skips.
 */
import { mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { openStore, verifyMailbox } from '../../src/mailbox/index.js';
import { makeMailbox } from './helpers.js';

const problems = async (dir: string) =>
  (await verifyMailbox(dir)).problems.map((p) => `${p.file.slice(dir.length + 1)}:${p.line}:${p.kind}`);

/** A JSONL mailbox where a sent b three messages and b read the first. */
async function readOne(peekFirst = false): Promise<{ dir: string; cursor: string; ends: number[] }> {
  const mb = await makeMailbox(['a', 'b']);
  const store = await openStore(mb.dir);
  for (const body of ['one', 'two', 'three']) await store.send('a', { to: 'b', body });
  if (peekFirst) await store.fetch('b', { limit: 3, peek: true, tool: 'check_inbox' });
  await store.fetch('b', { limit: 1, peek: false, tool: 'check_inbox' });
  await store.close();
  const inbox = readFileSync(join(mb.dir, 'inbox', 'b.jsonl'));
  const ends: number[] = [];
  for (let at = inbox.indexOf(0x0a); at >= 0; at = inbox.indexOf(0x0a, at + 1)) ends.push(at + 1);
  return { dir: mb.dir, cursor: join(mb.dir, 'cursors', 'b.json'), ends };
}

const moveCursor = (path: string, offset: number) =>
  writeFileSync(path, JSON.stringify({ ...(JSON.parse(readFileSync(path, 'utf8')) as object), offset }));

describe('read cursors (JSONL store)', () => {
  it('an honest cursor verifies clean', async () => {
    const { dir } = await readOne();
    expect(await verifyMailbox(dir)).toMatchObject({ ok: true, warnings: [] });
  });

  it('a cursor moved past one undelivered message is reported as skipped at that message', async () => {
    const { dir, cursor, ends } = await readOne();
    moveCursor(cursor, ends[1]!);
    expect(await problems(dir)).toEqual(['inbox/b.jsonl:2:skipped']);
    expect((await verifyMailbox(dir)).problems[0]!.message).toMatch(
      /before b's read cursor .* no read receipt delivered it/,
    );
  });

  it('a cursor moved to the end reports every message it skips', async () => {
    const { dir, cursor, ends } = await readOne();
    moveCursor(cursor, ends[2]!);
    expect(await problems(dir)).toEqual(['inbox/b.jsonl:2:skipped', 'inbox/b.jsonl:3:skipped']);
  });

  it('a peek is not a delivery: a cursor moved past peeked messages is reported', async () => {
    const { dir, cursor, ends } = await readOne(true);
    expect(await problems(dir)).toEqual([]);
    const calls = readFileSync(join(dir, 'calls.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { peek?: boolean; message_ids: string[] });
    expect(calls[3]).toMatchObject({ peek: true });
    expect(calls[4]!.peek).toBeUndefined();
    moveCursor(cursor, ends[2]!);
    expect(await problems(dir)).toEqual(['inbox/b.jsonl:2:skipped', 'inbox/b.jsonl:3:skipped']);
  });

  it('a cursor inside a line or past the end of the inbox is reported as modified', async () => {
    for (const where of ['inside', 'past'] as const) {
      const { dir, cursor, ends } = await readOne();
      moveCursor(cursor, where === 'inside' ? ends[0]! + 5 : ends[2]! + 100);
      const found = (await verifyMailbox(dir)).problems.filter((p) => p.kind === 'modified');
      expect(found).toEqual([
        expect.objectContaining({
          file: cursor,
          line: 0,
          message: expect.stringMatching(where === 'inside' ? /into the middle of a line/ : /past the end/),
        }),
      ]);
    }
  });

  it('a cursor moved back is a warning (messages delivered again), not a problem', async () => {
    const { dir, cursor } = await readOne();
    moveCursor(cursor, 0);
    const report = await verifyMailbox(dir);
    expect(report.problems).toEqual([]);
    expect(report.warnings.join('\n')).toMatch(
      /read cursor of b .* sits before message msg_.*, which .*calls\.jsonl:4 delivered: messages already delivered will be delivered again/,
    );
  });

  it('a cursor file with a repeated key is refused as corrupt, not read one way', async () => {
    const { dir, cursor, ends } = await readOne();
    writeFileSync(cursor, `{"offset":${ends[0]},"offset":${ends[2]},"delivered":1,"updated_at":"x"}`);
    expect(await problems(dir)).toEqual(['cursors/b.json:0:corrupt']);
  });

  it('a cursor that is not a regular file (a folder, a symbolic link) is reported, not skipped over', async () => {
    const { dir, cursor } = await readOne();
    rmSync(cursor);
    mkdirSync(cursor);
    expect(await problems(dir)).toEqual(['cursors/b.json:0:corrupt']);
    rmSync(cursor, { recursive: true });
    symlinkSync(join(dir, 'mailbox.json'), cursor);
    expect(await problems(dir)).toEqual(['cursors/b.json:0:corrupt']);
  });

  it('property: moving the cursor to any later line boundary reports exactly the messages skipped', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 6 }),
        fc.array(fc.record({ limit: fc.integer({ min: 1, max: 3 }), peek: fc.boolean() }), { maxLength: 4 }),
        fc.nat(),
        async (count, reads, pick) => {
          const mb = await makeMailbox(['a', 'b']);
          const store = await openStore(mb.dir);
          for (let i = 0; i < count; i++) await store.send('a', { to: 'b', body: `m${i}` });
          let delivered = 0;
          for (const r of reads) {
            const got = await store.fetch('b', { limit: r.limit, peek: r.peek, tool: 'check_inbox' });
            if (!r.peek) delivered += got.length;
          }
          await store.close();
          expect(await problems(mb.dir)).toEqual([]);
          if (delivered === count) return;
          const inbox = readFileSync(join(mb.dir, 'inbox', 'b.jsonl'));
          const ends: number[] = [];
          for (let at = inbox.indexOf(0x0a); at >= 0; at = inbox.indexOf(0x0a, at + 1)) ends.push(at + 1);
          const target = delivered + 1 + (pick % (count - delivered)); // messages 1..target are before the cursor
          const path = join(mb.dir, 'cursors', 'b.json');
          writeFileSync(path, JSON.stringify({ offset: ends[target - 1], delivered: target, updated_at: 'edited' }));
          const skipped = Array.from(
            { length: target - delivered },
            (_, k) => `inbox/b.jsonl:${delivered + k + 1}:skipped`,
          );
          expect(await problems(mb.dir)).toEqual(skipped);
        },
      ),
      { numRuns: 15, verbose: true },
    );
  }, 120_000);
});

describe('read cursors (SQLite store)', () => {
  it('a cursors row moved past undelivered messages is reported as skipped; moved back, a warning', async () => {
    const mb = await makeMailbox(['a', 'b'], { store: 'sqlite' });
    const store = await openStore(mb.dir);
    for (const body of ['one', 'two', 'three']) await store.send('a', { to: 'b', body });
    await store.fetch('b', { limit: 1, peek: false, tool: 'check_inbox' });
    await store.close();
    expect(await verifyMailbox(mb.dir)).toMatchObject({ ok: true, warnings: [] });
    const db = new Database(join(mb.dir, 'mailbox.sqlite'));
    db.prepare(
      "UPDATE cursors SET pos = (SELECT max(pos) FROM messages WHERE recipient = 'b') WHERE agent = 'b'",
    ).run();
    db.close();
    expect((await verifyMailbox(mb.dir)).problems.map((p) => `${p.file.split('#')[1]}:${p.line}:${p.kind}`)).toEqual([
      'messages[b]:2:skipped',
      'messages[b]:3:skipped',
    ]);
    const db2 = new Database(join(mb.dir, 'mailbox.sqlite'));
    db2.prepare("UPDATE cursors SET pos = 0 WHERE agent = 'b'").run();
    db2.close();
    const back = await verifyMailbox(mb.dir);
    expect(back.problems).toEqual([]);
    expect(back.warnings.join('\n')).toMatch(/read cursor of b .* will be delivered again/);
  });
});
