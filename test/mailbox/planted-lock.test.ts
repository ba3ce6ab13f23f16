/**
 * A lock file is in a folder agents may be able to write. One planted with a dead pid
 * and an intent "every file was empty before my write" must not make recovery (or a
 * server start) cut acknowledged mail: the intent must be signed by the mailbox key,
 * and even a genuine one never cuts a complete entry whose receipt verifies. A forged
 * or stale intent is reported (exit 1, a verify problem while the lock is there).
 */
import { spawnSync } from 'node:child_process';
import { appendFileSync, existsSync, readFileSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readKeyFile } from '../../src/attest/keys.js';
import { signerFor } from '../../src/attest/signature.js';
import { openStore, verifyMailbox } from '../../src/mailbox/index.js';
import { intentLine } from '../../src/mailbox/store/jsonl/lock-intent.js';
import { cli, makeMailbox, type TestMailbox } from './helpers.js';

const THIS_BOOT = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();

/** 10 sends and 4 reads: 14 receipts, 10 messages in bob's inbox. */
async function busyMailbox(): Promise<TestMailbox> {
  const mb = await makeMailbox(['alice', 'bob']);
  const store = await openStore(mb.dir, { keyPath: mb.keyPath });
  for (let i = 0; i < 10; i++) {
    await store.send('alice', { to: 'bob', body: `message ${i}` });
    if (i % 3 === 0) await store.fetch('bob', { limit: 5, peek: false, tool: 'check_inbox' });
  }
  await store.close();
  return mb;
}

function plantLock(mb: TestMailbox, intentText: string, boot = THIS_BOOT, nonce = 'planted'): void {
  const dead = spawnSync(process.execPath, ['-e', '']).pid!;
  const owner = { pid: dead, host: hostname(), boot, start: '1', nonce, since: Date.now() };
  writeFileSync(join(mb.dir, '.lock'), `${JSON.stringify(owner)}\n${intentText}\n`);
}

const everythingEmpty = { 'calls.jsonl': 0, 'inbox/bob.jsonl': 0, 'inbox/alice.jsonl': 0 };
const signer = (mb: TestMailbox) => signerFor(readKeyFile(mb.keyPath, { hmac: true }));
const lines = (path: string) => readFileSync(path, 'utf8').split('\n').length - 1;

describe('a planted lock intent', () => {
  for (const [when, boot] of [
    ['died in this boot', THIS_BOOT],
    ['died with the machine', 'an-earlier-boot'],
  ] as const) {
    it(`without the mailbox key's signature is reported and cuts nothing acknowledged (owner ${when})`, async () => {
      const mb = await busyMailbox();
      plantLock(mb, JSON.stringify({ intent: { files: everythingEmpty, restore: {} } }), boot);
      const before = await verifyMailbox(mb.dir);
      expect(before.problems.map((p) => [p.file, p.kind])).toEqual([['.lock', 'forged']]);
      const { out, err } = await cli(['mailbox', 'recover', mb.dir, '--json'], 1);
      expect(JSON.parse(out)).toMatchObject({ recovered: true, intent: 'forged', cut: {} });
      expect(err).toMatch(
        /\.lock held an intent that was not obeyed: it carries no signature.*nothing acknowledged was removed/,
      );
      expect(existsSync(join(mb.dir, '.lock'))).toBe(false);
      const after = await verifyMailbox(mb.dir);
      expect(after.problems).toEqual([]);
      expect([after.calls, after.messages]).toEqual([14, 10]);
    });
  }

  it('signed by another key is forged too', async () => {
    const mb = await busyMailbox();
    const other = await makeMailbox(['x']);
    plantLock(mb, intentLine(signer(other), 'planted', { files: everythingEmpty, to: 0 }));
    expect((await cli(['mailbox', 'recover', mb.dir], 1)).err).toMatch(
      /signature does not verify under the mailbox key/,
    );
    expect((await verifyMailbox(mb.dir)).calls).toBe(14);
  });

  it('signed by the mailbox key but for another lock owner is forged', async () => {
    const mb = await busyMailbox();
    plantLock(mb, intentLine(signer(mb), 'some-other-owner', { files: everythingEmpty, to: 0 }), THIS_BOOT, 'planted');
    expect((await cli(['mailbox', 'recover', mb.dir], 1)).err).toMatch(/for this lock's owner/);
    expect((await verifyMailbox(mb.dir)).calls).toBe(14);
  });

  it('genuine but copied from an earlier write (stale) is reported and cuts nothing acknowledged', async () => {
    const mb = await busyMailbox();
    plantLock(mb, intentLine(signer(mb), 'planted', { files: everythingEmpty, to: 0 }));
    const { out, err } = await cli(['mailbox', 'recover', mb.dir, '--json'], 1);
    expect(JSON.parse(out)).toMatchObject({ intent: 'stale', cut: {} });
    expect(err).toMatch(
      /genuine intent of an earlier write \(it ends at call 0, the log holds genuine calls up to 14\)/,
    );
    const after = await verifyMailbox(mb.dir);
    expect([after.problems, after.calls, after.messages]).toEqual([[], 14, 10]);
  });

  it('a server start with a planted lock serves, warns, and keeps every message', async () => {
    const mb = await busyMailbox();
    plantLock(mb, JSON.stringify({ intent: { files: everythingEmpty } }));
    const store = await openStore(mb.dir, { keyPath: mb.keyPath }); // a commit breaks the lock as a server start does
    await store.send('alice', { to: 'bob', body: 'after' });
    await store.close();
    const after = await verifyMailbox(mb.dir);
    expect([after.problems, after.calls, after.messages]).toEqual([[], 15, 11]);
  });
});

describe('a planted lock that poses as a live writer', () => {
  const unsigned = JSON.stringify({ intent: { files: { 'calls.jsonl': 0 }, to: 1 }, sig: 'AAAA' });
  const plant = (mb: TestMailbox, owner: Record<string, unknown>) =>
    writeFileSync(join(mb.dir, '.lock'), `${JSON.stringify({ nonce: 'n', ...owner })}\n${unsigned}\n`);
  const ownStart = () => readFileSync('/proc/self/stat', 'utf8').split(') ')[1]!.split(' ')[19]!;

  for (const [what, owner] of [
    [
      'on another host, with a start time in the future',
      { pid: 1, host: 'elsewhere', boot: '', start: '', since: 99999999999999 },
    ],
    [
      'on this host, a live pid without the start time every writer here records',
      { pid: 1, host: hostname(), boot: THIS_BOOT, start: '', since: Date.now() },
    ],
  ] as const)
    it(`${what}: verify says forged, recover breaks it (exit 1) and cuts nothing`, async () => {
      const mb = await busyMailbox();
      plant(mb, owner);
      const before = await verifyMailbox(mb.dir);
      expect(before.problems.map((p) => [p.file, p.code])).toEqual([['.lock', 'FORGED']]);
      const { out } = await cli(['mailbox', 'recover', mb.dir, '--json'], 1);
      expect(JSON.parse(out)).toMatchObject({ recovered: true, intent: 'forged', cut: {} });
      expect(existsSync(join(mb.dir, '.lock'))).toBe(false);
      const after = await verifyMailbox(mb.dir);
      expect([after.problems, after.calls, after.messages]).toEqual([[], 14, 10]);
    });

  for (const [when, seconds] of [
    ['dated in the future', 3600],
    ['older than the grace a writer gets to finish its record', -60],
  ] as const)
    it(`whose owner record is not a writer's (its time mistyped) and ${when} is broken, cutting nothing`, async () => {
      const mb = await busyMailbox();
      plant(mb, { pid: 1, host: 'elsewhere', boot: '', start: '', since: 'now' });
      const at = Date.now() / 1000 + seconds;
      utimesSync(join(mb.dir, '.lock'), at, at);
      expect((await verifyMailbox(mb.dir)).warnings).toContainEqual(expect.stringMatching(/died holding the lock/));
      expect(JSON.parse((await cli(['mailbox', 'recover', mb.dir, '--json'])).out)).toMatchObject({ recovered: true });
      expect(existsSync(join(mb.dir, '.lock'))).toBe(false);
      const after = await verifyMailbox(mb.dir);
      expect([after.problems, after.calls, after.messages]).toEqual([[], 14, 10]);
    });

  it('copied from a live process of this host: verify still says forged (a writer at work signs its intent)', async () => {
    const mb = await busyMailbox();
    plant(mb, { pid: process.pid, host: hostname(), boot: THIS_BOOT, start: ownStart(), since: Date.now() });
    const report = await verifyMailbox(mb.dir);
    expect(report.problems.map((p) => [p.file, p.code])).toEqual([['.lock', 'FORGED']]);
    expect(report.problems[0]!.message).toMatch(/claims a writer at work \(pid \d+ on .*remove the \.lock file/);
  });
});

describe('an honest writer that died mid-commit (its intent signed)', () => {
  function honestLock(mb: TestMailbox, files: Record<string, number>, to: number): void {
    plantLock(mb, intentLine(signer(mb), 'honest', { files, to }), THIS_BOOT, 'honest');
  }
  const sizes = (mb: TestMailbox) => ({
    'calls.jsonl': statSync(join(mb.dir, 'calls.jsonl')).size,
    'inbox/bob.jsonl': statSync(join(mb.dir, 'inbox', 'bob.jsonl')).size,
  });

  it('has its inbox line without a receipt and its torn receipt cut, and nothing else', async () => {
    const mb = await busyMailbox();
    const files = sizes(mb);
    honestLock(mb, files, 15);
    appendFileSync(
      join(mb.dir, 'inbox', 'bob.jsonl'),
      `${JSON.stringify({ id: 'msg_unacked', from: 'alice', to: 'bob', body: 'never acknowledged', sent_at: new Date().toISOString() })}\n`,
    );
    appendFileSync(join(mb.dir, 'calls.jsonl'), '{"v":2,"seq":15,"ts":"'); // the receipt's write was cut short
    const { out } = await cli(['mailbox', 'recover', mb.dir, '--json']);
    expect(JSON.parse(out)).toEqual({ recovered: true });
    expect(sizes(mb)).toEqual(files);
    const after = await verifyMailbox(mb.dir);
    expect([after.problems, after.calls, after.messages]).toEqual([[], 14, 10]);
  });

  it('keeps a write all of whose receipts landed complete (nobody was answered, nothing is half done)', async () => {
    const mb = await makeMailbox(['alice', 'bob']);
    const store = await openStore(mb.dir, { keyPath: mb.keyPath });
    await store.send('alice', { to: 'bob', body: 'first' });
    const files = sizes(mb);
    await store.send('alice', { to: 'bob', body: 'second' });
    await store.close();
    honestLock(mb, files, 2);
    await cli(['mailbox', 'recover', mb.dir]);
    expect(lines(join(mb.dir, 'inbox', 'bob.jsonl'))).toBe(2);
    expect((await verifyMailbox(mb.dir)).problems).toEqual([]);
  });
});
