/**
 * Path escapes. Agents may be able to write the mailbox directory
 * but not the rest of the home directory: nothing they put there — a crafted stale
 * `.lock` whose intent names `../` paths, symbolic links in place of inbox, cursor or
 * temporary files, a symlinked `inbox/` — may make a server or `recover` truncate,
 * write or delete a file outside the mailbox directory.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, renameSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isWitnessError } from '../../src/core/errors.js';
import { openStore } from '../../src/mailbox/index.js';
import { call, cli, makeMailbox, stdioClient, type TestMailbox } from './helpers.js';

const THIS_BOOT = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();

/** Files next to the mailbox directory (outside it) that an attack would hit. */
function victims(mb: TestMailbox): Record<string, string> {
  const outside = dirname(mb.dir);
  const files: Record<string, string> = {};
  for (const name of ['victim.txt', 'victim.json', 'keep.txt', 'evil-target.jsonl']) {
    const path = join(outside, name);
    writeFileSync(path, `precious ${name} content, no newline at the end`);
    files[path] = readFileSync(path, 'utf8');
  }
  return files;
}

function expectUntouched(files: Record<string, string>): void {
  for (const [path, content] of Object.entries(files)) {
    expect(existsSync(path), `${path} still exists`).toBe(true);
    expect(readFileSync(path, 'utf8'), path).toBe(content);
  }
}

/** A stale lock (its owner is dead) whose intent names paths outside the directory. */
function craftLock(mb: TestMailbox, boot: string): void {
  const dead = spawnSync(process.execPath, ['-e', '']).pid!;
  const owner = { pid: dead, host: hostname(), boot, start: '1', nonce: 'crafted', since: Date.now() };
  const intent = {
    files: {
      '../victim.txt': 0,
      'inbox/../../keep.txt': 3,
      [join(dirname(mb.dir), 'victim.json')]: 1,
      'calls.jsonl': 0,
    },
    restore: { '../victim.json': 'overwritten', '../keep.txt': null, 'cursors/../../victim.txt': null },
  };
  writeFileSync(join(mb.dir, '.lock'), `${JSON.stringify(owner)}\n${JSON.stringify({ intent })}\n`);
}

describe('nothing outside the mailbox directory is touched', () => {
  for (const [when, boot] of [
    ['died in this boot', THIS_BOOT],
    ['died with the machine (an earlier boot)', 'an-earlier-boot'],
  ] as const) {
    it(`recover with a crafted stale .lock whose owner ${when} refuses its ../ paths`, async () => {
      const mb = await makeMailbox(['a', 'b']);
      const store = await openStore(mb.dir, { keyPath: mb.keyPath });
      await store.send('a', { to: 'b', body: 'kept' });
      await store.close();
      const files = victims(mb);
      craftLock(mb, boot);
      expect((await cli(['mailbox', 'recover', mb.dir], 1)).err).toMatch(/not obeyed/);
      expectUntouched(files);
      expect(existsSync(join(mb.dir, '.lock'))).toBe(false);
    });
  }

  it('a serve start with a crafted stale .lock touches nothing outside and serves', async () => {
    const mb = await makeMailbox(['a', 'b']);
    const files = victims(mb);
    craftLock(mb, THIS_BOOT);
    const a = await stdioClient(mb.dir, 'a');
    try {
      await call(a.client, 'send_message', { to: 'b', body: 'after recovery' });
    } finally {
      await a.close();
    }
    expectUntouched(files);
  });

  it('recover without a readable intent does not follow a symlinked inbox file', async () => {
    const mb = await makeMailbox(['a', 'b']);
    const files = victims(mb);
    symlinkSync(join(dirname(mb.dir), 'evil-target.jsonl'), join(mb.dir, 'inbox', 'evil.jsonl'));
    const lock = join(mb.dir, '.lock');
    writeFileSync(lock, '');
    utimesSync(lock, new Date(Date.now() - 60_000), new Date(Date.now() - 60_000));
    await cli(['mailbox', 'recover', mb.dir]);
    expectUntouched(files);
  });

  it('a symlink at inbox/b.jsonl makes the send fail clearly and writes nothing through it', async () => {
    const mb = await makeMailbox(['a', 'b']);
    const files = victims(mb);
    symlinkSync(join(dirname(mb.dir), 'victim.txt'), join(mb.dir, 'inbox', 'b.jsonl'));
    const store = await openStore(mb.dir, { keyPath: mb.keyPath });
    try {
      const error = await store.send('a', { to: 'b', body: 'x' }).catch((e: unknown) => e);
      expect(isWitnessError(error, 'IO')).toBe(true);
      expect((error as Error).message).toMatch(/inbox\/b\.jsonl.*(symbolic link|not a regular file).*remove/i);
      expect((await store.send('b', { to: 'a', body: 'other inboxes still work' })).to).toBe('a');
    } finally {
      await store.close();
    }
    expectUntouched(files);
  });

  it('a symlinked inbox/ folder makes the send fail clearly and creates nothing outside', async () => {
    const mb = await makeMailbox(['a', 'b']);
    const elsewhere = join(dirname(mb.dir), 'elsewhere');
    mkdirSync(elsewhere);
    renameSync(join(mb.dir, 'inbox'), join(mb.dir, 'inbox.old'));
    symlinkSync(elsewhere, join(mb.dir, 'inbox'));
    const store = await openStore(mb.dir, { keyPath: mb.keyPath });
    try {
      const error = await store.send('a', { to: 'b', body: 'x' }).catch((e: unknown) => e);
      expect(isWitnessError(error, 'IO')).toBe(true);
      expect((error as Error).message).toMatch(/inbox.*(symbolic link|not a (regular )?(file|folder|directory))/i);
    } finally {
      await store.close();
    }
    expect(existsSync(join(elsewhere, 'b.jsonl'))).toBe(false);
  });

  it('a symlinked cursor file or cursor temporary file is neither read through nor written through', async () => {
    const mb = await makeMailbox(['a', 'b']);
    const files = victims(mb);
    const store = await openStore(mb.dir, { keyPath: mb.keyPath });
    try {
      await store.send('a', { to: 'b', body: 'one' });
      symlinkSync(join(dirname(mb.dir), 'victim.json'), join(mb.dir, 'cursors', `b.json.${process.pid}.tmp`));
      expect((await store.fetch('b', { limit: 10, peek: false, tool: 'check_inbox' })).map((m) => m.body)).toEqual([
        'one',
      ]);
      expectUntouched(files);
      await store.send('a', { to: 'a', body: 'two' });
      symlinkSync(join(dirname(mb.dir), 'victim.json'), join(mb.dir, 'cursors', 'a.json'));
      const error = await store.fetch('a', { limit: 10, peek: false, tool: 'check_inbox' }).catch((e: unknown) => e);
      expect(isWitnessError(error, 'IO')).toBe(true);
      expect((error as Error).message).toMatch(/cursors\/a\.json.*(symbolic link|not a regular file)/i);
    } finally {
      await store.close();
    }
    expectUntouched(files);
  });
});
