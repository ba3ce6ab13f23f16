/**
 * Helpers for fault tests. A small tmpfs for disk-full tests, mounted and removed by
 * the test itself (`mount -t tmpfs -o size=…`; needs root); `TMPFS_UNAVAILABLE`
 * says why mounting is impossible here (tests skip with that reason printed), or is
 * undefined. `fillDisk` takes all free space but `leaveBytes`, the way another
 * program would. `storedIds` lists what a store holds, whichever kind.
 */
import { execFileSync } from 'node:child_process';
import { closeSync, mkdirSync, openSync, rmSync, statfsSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { readSnapshot } from '../../src/mailbox/store/index.js';
import { cli, tempDir, type TestMailbox } from './helpers.js';

export interface Tmpfs {
  dir: string;
  unmount(): void;
}

export function mountTmpfs(sizeBytes: number): Tmpfs {
  const dir = tempDir('witness-tmpfs-');
  execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${sizeBytes}`, 'tmpfs', dir], { stdio: 'pipe' });
  return {
    dir,
    unmount: () => {
      execFileSync('umount', [dir], { stdio: 'pipe' });
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

function _probe(): string | undefined {
  try {
    mountTmpfs(64 * 1024).unmount();
    return undefined;
  } catch (error) {
    return `cannot mount a tmpfs here (${((error as Error).message.split('\n')[0] ?? '').trim()}); disk-full tests need root and mount(8)`;
  }
}

export const TMPFS_UNAVAILABLE = _probe();
if (TMPFS_UNAVAILABLE) console.warn(`skipping disk-full tests: ${TMPFS_UNAVAILABLE}`);

/** A mailbox whose directory is on `fs` (its key outside it, on the ordinary disk). */
export async function makeMailboxOn(
  fs: Tmpfs,
  agents: string[],
  store: 'jsonl' | 'sqlite',
  name = 'mb',
): Promise<TestMailbox> {
  const dir = join(fs.dir, name);
  const keyPath = join(tempDir(), 'mailbox.key');
  await cli(['mailbox', 'init', dir, '--key', keyPath, '--store', store]);
  const tokens: Record<string, string> = {};
  for (const agent of agents)
    tokens[agent] = JSON.parse((await cli(['mailbox', 'add-agent', dir, agent, '--json'])).out).token;
  return { dir, keyPath, tokens, cleanup: async () => {} };
}

/** Fills the file system holding `dir` until at most `leaveBytes` are free; returns the filler's path. */
export function fillDisk(dir: string, leaveBytes: number, name = 'filler'): string {
  mkdirSync(join(dir, '..', 'fill'), { recursive: true });
  const path = join(dir, '..', 'fill', name);
  const fd = openSync(path, 'a');
  try {
    const chunk = Buffer.alloc(64 * 1024, 0x66);
    for (;;) {
      const s = statfsSync(dir);
      const free = s.bavail * s.bsize - leaveBytes;
      if (free <= 0) break;
      try {
        writeSync(fd, chunk, 0, Math.min(chunk.length, free));
      } catch {
        break; // ENOSPC: full
      }
    }
  } finally {
    closeSync(fd);
  }
  return path;
}

/** Ids of every stored message, as the store holds them. */
export async function storedIds(dir: string): Promise<Set<string>> {
  const ids = new Set<string>();
  for (const inbox of (await readSnapshot(dir)).inboxes)
    for (const { text } of inbox.lines) ids.add((JSON.parse(text) as { id: string }).id);
  return ids;
}
