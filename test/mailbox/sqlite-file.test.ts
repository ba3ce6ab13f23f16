/**
 * The SQLite store's file is opened like the JSONL store's: an
 * agent that can write the mailbox folder plants a symbolic link at
 * `mailbox.sqlite` (or at a file SQLite opens beside it), and neither a server nor
 * a verifier may write or read the file it points to.
 */
import { existsSync, mkdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { dirname, join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { isWitnessError } from '../../src/core/errors.js';
import { openStore, verifyMailbox } from '../../src/mailbox/index.js';
import { cli, makeMailbox, type TestMailbox } from './helpers.js';

/** Another program's database next to the mailbox folder (outside it): what the link points to. */
function victimDatabase(mb: TestMailbox): { path: string; bytes: Buffer } {
  const path = join(dirname(mb.dir), 'victim.db');
  const db = new Database(path);
  db.exec("CREATE TABLE precious (v TEXT); INSERT INTO precious VALUES ('keep me')");
  db.close();
  return { path, bytes: readFileSync(path) };
}

/** A mailbox whose store has been used once, then its database replaced by a link. */
async function plantedLink(target: (mb: TestMailbox) => string, at = 'mailbox.sqlite'): Promise<TestMailbox> {
  const mb = await makeMailbox(['a', 'b'], { store: 'sqlite' });
  const store = await openStore(mb.dir, { keyPath: mb.keyPath });
  await store.send('a', { to: 'b', body: 'before' });
  await store.close();
  if (at === 'mailbox.sqlite')
    for (const f of ['mailbox.sqlite', 'mailbox.sqlite-wal', 'mailbox.sqlite-shm'])
      rmSync(join(mb.dir, f), { force: true });
  symlinkSync(target(mb), join(mb.dir, at));
  return mb;
}

describe('mailbox.sqlite is opened only as a regular file', () => {
  it('a symlink at mailbox.sqlite to another database: the store refuses to open, and the database is untouched', async () => {
    let victim: { path: string; bytes: Buffer } | undefined;
    const mb = await plantedLink((m) => {
      victim = victimDatabase(m);
      return victim.path;
    });
    let error: unknown;
    try {
      await (await openStore(mb.dir, { keyPath: mb.keyPath })).close();
    } catch (e) {
      error = e;
    }
    expect(isWitnessError(error, 'IO'), String(error)).toBe(true);
    expect((error as Error).message).toMatch(/mailbox\.sqlite.*symbolic link.*remove/i);
    expect(readFileSync(victim!.path)).toEqual(victim!.bytes);
    expect(existsSync(`${victim!.path}-wal`)).toBe(false);
    expect(existsSync(`${victim!.path}-shm`)).toBe(false);
  });

  it('a dangling symlink at mailbox.sqlite: nothing is created where it points', async () => {
    const mb = await plantedLink((m) => join(dirname(m.dir), 'created-outside.db'));
    await expect(openStore(mb.dir, { keyPath: mb.keyPath })).rejects.toThrow(/symbolic link/);
    expect(existsSync(join(dirname(mb.dir), 'created-outside.db'))).toBe(false);
  });

  it('a symlink at mailbox.sqlite-wal (which SQLite opens by name) is refused too', async () => {
    const mb = await plantedLink((m) => join(dirname(m.dir), 'wal-target'), 'mailbox.sqlite-wal');
    await expect(openStore(mb.dir, { keyPath: mb.keyPath })).rejects.toThrow(/mailbox\.sqlite-wal.*symbolic link/);
    expect(existsSync(join(dirname(mb.dir), 'wal-target'))).toBe(false);
  });

  it('a folder at mailbox.sqlite is refused as not a regular file', async () => {
    const mb = await makeMailbox(['a', 'b'], { store: 'sqlite' });
    rmSync(join(mb.dir, 'mailbox.sqlite'), { force: true });
    mkdirSync(join(mb.dir, 'mailbox.sqlite'));
    await expect(openStore(mb.dir, { keyPath: mb.keyPath })).rejects.toThrow(/not a regular file/);
  });

  it('verify does not read through a link at mailbox.sqlite (it would vouch for another mailbox)', async () => {
    const other = await makeMailbox(['a', 'b'], { store: 'sqlite' });
    const store = await openStore(other.dir, { keyPath: other.keyPath });
    await store.send('a', { to: 'b', body: 'elsewhere' });
    await store.close();
    const mb = await plantedLink(() => join(other.dir, 'mailbox.sqlite'));
    await expect(verifyMailbox(mb.dir, { keyPath: mb.keyPath })).rejects.toThrow(/symbolic link/);
    // With the other mailbox's key, verify stops at the key (it is not this mailbox's) and vouches for nothing either.
    expect((await verifyMailbox(mb.dir, { keyPath: other.keyPath })).ok).toBe(false);
    const run = await cli(['mailbox', 'verify', mb.dir, '--key', mb.keyPath], -1);
    expect(run.code).not.toBe(0);
    expect(run.err.trim().split('\n')).toHaveLength(1);
    expect(run.err).toMatch(/mailbox\.sqlite.*symbolic link/);
  });
});
