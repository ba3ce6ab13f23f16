/**
 * Processes that open one new SQLite file at the same moment: stdio mailbox servers
 * (one per agent) on a new SQLite mailbox, verifiers on a new nonce store. Each
 * switches the file to WAL mode and creates its tables, and SQLite answers one of
 * two such processes SQLITE_BUSY at once, without waiting (where waiting could
 * deadlock): the mailbox server died ("Connection closed" to its agent), the verifier
 * failed. Four processes open 25 new files together; every open must succeed.
 */
import { spawn } from 'node:child_process';
import { copyFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { verifyMailbox } from '../../src/mailbox/index.js';
import { makeMailbox, tempDir, witnessCommand } from '../mailbox/helpers.js';

const ROUNDS = 25;
const PROCESSES = 4;

/** Runs PROCESSES children that open each of `paths` together; what each printed, and its exit code. */
async function openTogether(
  kind: 'mailbox' | 'nonces',
  args: string[],
): Promise<Array<{ code: number | null; out: string }>> {
  const [node, importFlag, loader] = witnessCommand();
  const script = join(import.meta.dirname, '..', 'support', 'open-sqlite-stores.ts');
  // Far enough ahead for every child to have loaded its modules.
  const start = Date.now() + 8000;
  return Promise.all(
    Array.from({ length: PROCESSES }, () => {
      const child = spawn(node!, [importFlag!, loader!, script, kind, String(start), '150', ...args], {
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let out = '';
      child.stdout.on('data', (d: Buffer) => (out += d.toString()));
      child.stderr.on('data', (d: Buffer) => (out += d.toString()));
      return new Promise<{ code: number | null; out: string }>((resolve) =>
        child.on('close', (code) => resolve({ code, out })),
      );
    }),
  );
}

const allFine = Array.from({ length: PROCESSES }, () => ({ code: 0, out: '' }));

describe('processes opening one new SQLite file at once all succeed, 25 times over', () => {
  it('stdio mailbox servers on a new SQLite mailbox', async () => {
    const mb = await makeMailbox([], { store: 'sqlite' });
    const root = tempDir();
    const dirs = Array.from({ length: ROUNDS }, (_, i) => {
      const dir = join(root, `mb${i}`);
      mkdirSync(dir);
      for (const file of ['mailbox.json', 'agents.json']) copyFileSync(join(mb.dir, file), join(dir, file));
      return dir;
    });
    expect(await openTogether('mailbox', [mb.keyPath, ...dirs])).toEqual(allFine);
    for (const dir of dirs.slice(0, 3)) expect((await verifyMailbox(dir)).problems).toEqual([]);
  }, 60_000);

  it('verifiers on a new nonce store', async () => {
    const root = tempDir();
    expect(
      await openTogether(
        'nonces',
        Array.from({ length: ROUNDS }, (_, i) => join(root, `nonces${i}.db`)),
      ),
    ).toEqual(allFine);
  }, 60_000);
});
