/**
 * A lock file left by a writer that died with the machine (its boot id is not this
 * boot's). Its intent may belong to a commit that finished and was acknowledged, so
 * recovery must keep what landed with its receipt and cut only what did not.
 * The states are built by hand, as a power loss could leave them on disk.
 */
import { spawnSync } from 'node:child_process';
import { appendFileSync, readFileSync, statSync, truncateSync, utimesSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readKeyFile } from '../../src/attest/keys.js';
import { signerFor } from '../../src/attest/signature.js';
import { openStore, verifyMailbox } from '../../src/mailbox/index.js';
import { intentLine } from '../../src/mailbox/store/jsonl/lock-intent.js';
import { cli, makeMailbox, type TestMailbox } from './helpers.js';

function sizes(mb: TestMailbox): Record<string, number> {
  return {
    'calls.jsonl': statSync(join(mb.dir, 'calls.jsonl')).size,
    'inbox/b.jsonl': statSync(join(mb.dir, 'inbox', 'b.jsonl')).size,
  };
}

/** A lock file as lock.ts writes it (its intent signed with the mailbox key, its write ending at call 2), owned by a process of an earlier boot (or this one). */
function leaveLock(mb: TestMailbox, files: Record<string, number>, boot: string): void {
  const dead = spawnSync(process.execPath, ['-e', '']).pid!;
  const owner = { pid: dead, host: hostname(), boot, start: '1', nonce: 'gone', since: Date.now() };
  const signer = signerFor(readKeyFile(mb.keyPath, { hmac: true }));
  writeFileSync(join(mb.dir, '.lock'), `${JSON.stringify(owner)}\n${intentLine(signer, 'gone', { files, to: 2 })}\n`);
}

async function send(mb: TestMailbox, body: string): Promise<void> {
  const store = await openStore(mb.dir, { keyPath: mb.keyPath });
  await store.send('a', { to: 'b', body });
  await store.close();
}

const bodies = (mb: TestMailbox) =>
  readFileSync(join(mb.dir, 'inbox', 'b.jsonl'), 'utf8')
    .split('\n')
    .slice(0, -1)
    .map((l) => (JSON.parse(l) as { body: string }).body);

describe('recovering a writer that died with the machine', () => {
  it('keeps a finished commit whose lock file survived the power loss', async () => {
    const mb = await makeMailbox(['a', 'b']);
    await send(mb, 'first');
    const before = sizes(mb);
    await send(mb, 'second (acknowledged)');
    leaveLock(mb, before, 'an-earlier-boot');
    expect((await cli(['mailbox', 'recover', mb.dir, '--json'])).out).toBe('{"recovered":true}\n');
    expect(bodies(mb)).toEqual(['first', 'second (acknowledged)']);
    expect((await verifyMailbox(mb.dir)).problems).toEqual([]);
  });

  it('the same lock from a process that died in this boot keeps the commit too: its receipt is complete and genuine (recovery never cuts one)', async () => {
    const mb = await makeMailbox(['a', 'b']);
    await send(mb, 'first');
    const before = sizes(mb);
    await send(mb, 'second');
    leaveLock(mb, before, readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim());
    await cli(['mailbox', 'recover', mb.dir]);
    expect(bodies(mb)).toEqual(['first', 'second']);
    expect((await verifyMailbox(mb.dir)).problems).toEqual([]);
  });

  it('cuts an inbox line whose receipt never landed', async () => {
    const mb = await makeMailbox(['a', 'b']);
    await send(mb, 'first');
    leaveLock(mb, sizes(mb), 'an-earlier-boot');
    appendFileSync(
      join(mb.dir, 'inbox', 'b.jsonl'),
      `${JSON.stringify({ id: 'msg_unreceipted', from: 'a', to: 'b', body: 'no receipt', sent_at: new Date().toISOString() })}\n`,
    );
    expect((await verifyMailbox(mb.dir)).problems.map((p) => p.kind)).toEqual(['orphan']);
    await cli(['mailbox', 'recover', mb.dir]);
    expect(bodies(mb)).toEqual(['first']);
    expect((await verifyMailbox(mb.dir)).problems).toEqual([]);
  });

  it('cuts a torn receipt and the inbox line it was for', async () => {
    const mb = await makeMailbox(['a', 'b']);
    await send(mb, 'first');
    const before = sizes(mb);
    await send(mb, 'second');
    truncateSync(join(mb.dir, 'calls.jsonl'), statSync(join(mb.dir, 'calls.jsonl')).size - 20); // the receipt's last page did not land
    leaveLock(mb, before, 'an-earlier-boot');
    await cli(['mailbox', 'recover', mb.dir]);
    expect(bodies(mb)).toEqual(['first']);
    expect(readFileSync(join(mb.dir, 'calls.jsonl'), 'utf8').endsWith('\n')).toBe(true);
    expect((await verifyMailbox(mb.dir)).problems).toEqual([]);
  });

  it('stops at a garbled receipt (pages landed out of order) and cuts the inbox line it was for', async () => {
    const mb = await makeMailbox(['a', 'b']);
    await send(mb, 'first');
    const before = sizes(mb);
    await send(mb, 'second');
    const calls = join(mb.dir, 'calls.jsonl');
    const lines = readFileSync(calls, 'utf8').split('\n').slice(0, -1);
    writeFileSync(calls, `${[...lines.slice(0, -1), '\u0000'.repeat(lines.at(-1)!.length)].join('\n')}\n`);
    leaveLock(mb, before, 'an-earlier-boot');
    await cli(['mailbox', 'recover', mb.dir]);
    expect(bodies(mb)).toEqual(['first']);
    expect((await verifyMailbox(mb.dir)).problems).toEqual([]);
  });

  it("with the lock file's content lost too, cuts inbox lines at the end that have no receipt", async () => {
    const mb = await makeMailbox(['a', 'b']);
    await send(mb, 'first');
    appendFileSync(
      join(mb.dir, 'inbox', 'b.jsonl'),
      `${JSON.stringify({ id: 'msg_unreceipted', from: 'a', to: 'b', body: 'no receipt', sent_at: new Date().toISOString() })}\n`,
    );
    const lock = join(mb.dir, '.lock');
    writeFileSync(lock, ''); // created (durable with the inbox sync), content never written back
    utimesSync(lock, new Date(Date.now() - 60_000), new Date(Date.now() - 60_000));
    expect((await cli(['mailbox', 'recover', mb.dir, '--json'])).out).toBe('{"recovered":true}\n');
    expect(bodies(mb)).toEqual(['first']);
    expect((await verifyMailbox(mb.dir)).problems).toEqual([]);
  });
});
