/**
 * `witness mailbox export` / `import`: a mailbox moves between any two
 * stores with every receipt still verifying, its agents' tokens still working and
 * its readers' positions kept; servers go on extending the same chain; an import is
 * all or nothing, and a cut-off, edited or foreign export is refused or reported.
 */
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openStore, verifyMailbox } from '../../src/mailbox/index.js';
import { freshDatabase } from '../attest/postgres.js';
import { cli, makeMailbox, type TestMailbox, type TestStore, tempDir } from './helpers.js';

const cleanups: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const c of cleanups) await c();
});

const fetchOpts = (limit = 20) => ({ limit, peek: false, tool: 'check_inbox' as const });

/** A mailbox with a little of everything: keyed and plain sends, reads, a failed call, unread mail. */
async function busyMailbox(store: TestStore): Promise<TestMailbox> {
  const mb = await makeMailbox(['alice', 'bob', 'carol'], { store });
  cleanups.push(mb.cleanup);
  const s = await openStore(mb.dir, { keyPath: mb.keyPath });
  try {
    await s.send('alice', { to: 'bob', body: 'one', idempotencyKey: 'k1' });
    await s.send('carol', { to: 'bob', body: 'two' });
    await s.send('alice', { to: 'carol', body: 'três ✓' });
    await s.fetch('bob', fetchOpts(1));
    await s.send('bob', { to: 'nobody', body: 'x' }).catch(() => undefined);
    await s.record('carol', 'whoami', { ok: true });
    await s.send('bob', { to: 'alice', body: 'unread' });
  } finally {
    await s.close();
  }
  return mb;
}

/** Exports `dir` and returns the file and its lines after the header (the part that must not change). */
async function exportOf(dir: string): Promise<{ file: string; body: string[] }> {
  const file = join(tempDir(), 'export.jsonl');
  await cli(['mailbox', 'export', dir, '--out', file]);
  return { file, body: readFileSync(file, 'utf8').trimEnd().split('\n').slice(1) };
}

async function importInto(
  file: string,
  store: TestStore,
  keyPath: string,
  expectCode = 0,
): Promise<{ dir: string; out: string; err: string }> {
  const dir = join(tempDir(), `imported-${store}`);
  let target: string = store;
  if (store === 'postgres') {
    const db = await freshDatabase('imported');
    cleanups.push(db.drop);
    target = db.url;
  }
  const { out, err } = await cli(['mailbox', 'import', file, dir, '--store', target, '--key', keyPath], expectCode);
  return { dir, out, err };
}

describe('export and import between stores', () => {
  it('jsonl → postgres → sqlite → jsonl: every hop verifies clean and exports the same records', async () => {
    const source = await busyMailbox('jsonl');
    const first = await exportOf(source.dir);
    let from = first.file;
    for (const store of ['postgres', 'sqlite', 'jsonl'] as const) {
      const { dir, out } = await importInto(from, store, source.keyPath);
      expect(out).toMatch(/Imported 3 agents, 7 call receipts, 4 messages and 1 read positions .*\nverify: OK/);
      const again = await exportOf(dir);
      expect(again.body).toEqual(first.body);
      from = again.file;
    }
  });

  for (const store of ['sqlite', 'postgres'] as const) {
    it(`a ${store} mailbox imported as jsonl and back serves on: reads resume where they were, keys still deduplicate, the chain goes on`, async () => {
      const source = await busyMailbox(store);
      const moved = await importInto(
        (await exportOf(source.dir)).file,
        store === 'sqlite' ? 'postgres' : 'sqlite',
        source.keyPath,
      );
      const s = await openStore(moved.dir, { keyPath: source.keyPath });
      try {
        expect((await s.fetch('bob', fetchOpts())).map((m) => m.body)).toEqual(['two']); // 'one' was read before the move
        expect((await s.send('alice', { to: 'bob', body: 'one', idempotencyKey: 'k1' })).deduplicated).toBe(true);
        expect((await s.agents()).map((a) => a.token_sha256)).toEqual(
          (await (await openStore(source.dir, { keyPath: source.keyPath })).agents()).map((a) => a.token_sha256),
        );
        await s.send('carol', { to: 'alice', body: 'after the move' });
      } finally {
        await s.close();
      }
      const report = await verifyMailbox(moved.dir);
      expect(report.problems).toEqual([]);
      expect(report.calls).toBe(10);
    });
  }

  it('an export with an edited message is refused (exit 1) naming what verify found, and leaves nothing', async () => {
    const source = await busyMailbox('jsonl');
    const { file } = await exportOf(source.dir);
    writeFileSync(file, readFileSync(file, 'utf8').replace('three', 'THREE').replace('três', 'tres'));
    const { dir, err } = await importInto(file, 'sqlite', source.keyPath, 1);
    expect(err).toMatch(/does not verify \(1 problem\(s\)\):\n.*modified: message msg_.* differs from what/);
    expect(err).toMatch(/Nothing was imported/);
    expect(() => readdirSync(dir)).toThrow(/ENOENT/);
    expect(readdirSync(dirname(dir))).toEqual([]); // no staging folder either
  });

  it('refuses a cut-off export, a line that is not a record, and records out of order, leaving nothing behind', async () => {
    const source = await busyMailbox('jsonl');
    const { file } = await exportOf(source.dir);
    const lines = readFileSync(file, 'utf8').trimEnd().split('\n');
    const cases: Array<[string[], RegExp]> = [
      [lines.slice(0, -1), /no end line: the export was cut off/],
      [
        [...lines.slice(0, 3), '{"oops":1}', ...lines.slice(3)],
        /:4: cannot import: it is not a record of witness-mailbox-export\/1/,
      ],
      [[lines[0]!, lines.at(-3)!, ...lines.slice(1)], /a message line comes after|an? \w+ line comes after/],
      [
        [...lines.slice(0, -1), '{"end":{"agents":3,"calls":1,"messages":4,"cursors":1}}'],
        /end line counts 1 calls but it holds 7/,
      ],
      [[lines[0]!, '{"message":"{}","to":"../escape"}', ...lines.slice(1)], /to is not an agent name/],
    ];
    for (const [content, message] of cases) {
      writeFileSync(file, `${content.join('\n')}\n`);
      for (const store of ['jsonl', 'postgres'] as const) {
        const { dir, err } = await importInto(file, store, source.keyPath, 2);
        expect(err).toMatch(message);
        expect(err).toMatch(/Nothing was imported/);
        expect(() => readdirSync(dir)).toThrow(/ENOENT/);
      }
    }
  });

  it("refuses a key file that is not the mailbox's, and a folder that is not empty", async () => {
    const source = await busyMailbox('jsonl');
    const other = await makeMailbox([], {});
    const { file } = await exportOf(source.dir);
    expect((await cli(['mailbox', 'import', file, join(tempDir(), 'x'), '--key', other.keyPath], 2)).err).toMatch(
      /has id .* but the exported mailbox signs with/,
    );
    const full = tempDir();
    writeFileSync(join(full, 'something'), 'x');
    expect((await cli(['mailbox', 'import', file, full, '--key', source.keyPath], 2)).err).toMatch(
      /is not empty; import into a new folder/,
    );
  });

  it('export refuses a mailbox it cannot carry exactly (a torn last line), naming the fix', async () => {
    const source = await busyMailbox('jsonl');
    writeFileSync(
      join(source.dir, 'inbox', 'alice.jsonl'),
      `${readFileSync(join(source.dir, 'inbox', 'alice.jsonl'), 'utf8')}{"id":"msg_half`,
    );
    const out = join(tempDir(), 'e.jsonl');
    const { err } = await cli(['mailbox', 'export', source.dir, '--out', out], 1);
    expect(err).toMatch(
      /Cannot export .* exactly: .*alice.jsonl:2 is an unterminated last line\. Nothing was exported; run `witness mailbox recover/,
    );
    expect(() => readFileSync(out)).toThrow(/ENOENT/);
  });
});
