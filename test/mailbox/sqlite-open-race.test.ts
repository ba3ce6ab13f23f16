/**
 * One stdio server per agent: several server processes may open a new SQLite mailbox
 * at the same moment. Each switches the file to WAL mode and creates the schema, and
 * SQLite answers one of two such processes SQLITE_BUSY at once, without waiting
 * (where waiting could deadlock): the server died ("Connection closed" to its agent).
 * Four processes open 25 new mailboxes together; every open must succeed.
 */
import { spawn } from 'node:child_process';
import { copyFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { verifyMailbox } from '../../src/mailbox/index.js';
import { makeMailbox, tempDir, witnessCommand } from './helpers.js';

const ROUNDS = 25;
const PROCESSES = 4;

it('four processes opening a new SQLite mailbox at once all succeed, 25 times over', async () => {
  const mb = await makeMailbox([], { store: 'sqlite' });
  const root = tempDir();
  const dirs = Array.from({ length: ROUNDS }, (_, i) => {
    const dir = join(root, `mb${i}`);
    mkdirSync(dir);
    copyFileSync(join(mb.dir, 'mailbox.json'), join(dir, 'mailbox.json'));
    copyFileSync(join(mb.dir, 'agents.json'), join(dir, 'agents.json'));
    return dir;
  });
  const [node, importFlag, loader] = witnessCommand();
  const script = join(import.meta.dirname, '..', 'support', 'open-sqlite-stores.ts');
  // Far enough ahead for every child to have loaded its modules.
  const start = Date.now() + 8000;
  const outputs = await Promise.all(
    Array.from({ length: PROCESSES }, () => {
      const child = spawn(node!, [importFlag!, loader!, script, String(start), '150', mb.keyPath, ...dirs], { stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      child.stdout.on('data', (d: Buffer) => (out += d.toString()));
      child.stderr.on('data', (d: Buffer) => (out += d.toString()));
      return new Promise<{ code: number | null; out: string }>((resolve) => child.on('close', (code) => resolve({ code, out })));
    }),
  );
  expect(outputs).toEqual(Array.from({ length: PROCESSES }, () => ({ code: 0, out: '' })));
  for (const dir of dirs.slice(0, 3)) expect((await verifyMailbox(dir)).problems).toEqual([]);
}, 60_000);
