/**
 * Several real server processes appending to one mailbox directory at once, and a
 * writer killed with SIGKILL in the middle of a burst. Nothing acknowledged may be
 * lost, no line may be torn or interleaved, and verify must come out clean.
 */
import { spawnSync } from 'node:child_process';
import { appendFileSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readKeyFile } from '../../src/attest/keys.js';
import { signerFor } from '../../src/attest/signature.js';
import { verifyMailbox } from '../../src/mailbox/index.js';
import { intentLine } from '../../src/mailbox/store/jsonl/lock-intent.js';
import { call, cli, type Connected, makeMailbox, stdioClient, waitFor } from './helpers.js';

/** Sends `count` messages with `window` requests in flight; returns the acknowledged ids. */
async function burst(
  c: Connected,
  to: string,
  count: number,
  window: number,
  acked: string[],
  tag: string,
): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const i = next++;
      const sent = await call<{ id: string }>(c.client, 'send_message', { to, body: `${tag}-${i}` });
      acked.push(sent.id);
    }
  };
  await Promise.all(Array.from({ length: window }, worker));
}

function inboxLines(dir: string, agent: string): string[] {
  return readFileSync(join(dir, 'inbox', `${agent}.jsonl`), 'utf8')
    .split('\n')
    .slice(0, -1);
}

describe('several server processes on one directory', () => {
  it('4 processes × 500 sends give exactly 2000 whole, unique lines and a clean verify', async () => {
    const writers = ['w1', 'w2', 'w3', 'w4'];
    const mb = await makeMailbox([...writers, 'sink']);
    const clients = await Promise.all(writers.map((w) => stdioClient(mb.dir, w)));
    try {
      const acked: string[] = [];
      await Promise.all(clients.map((c, i) => burst(c, 'sink', 500, 8, acked, writers[i]!)));
      expect(acked).toHaveLength(2000);
    } finally {
      await Promise.all(clients.map((c) => c.close()));
    }
    const lines = inboxLines(mb.dir, 'sink');
    expect(lines).toHaveLength(2000);
    const messages = lines.map((l) => JSON.parse(l) as { id: string; from: string });
    expect(new Set(messages.map((m) => m.id)).size).toBe(2000);
    for (const w of writers) expect(messages.filter((m) => m.from === w)).toHaveLength(500);
    const report = await verifyMailbox(mb.dir);
    expect(report.problems).toEqual([]);
    expect(report).toMatchObject({ ok: true, messages: 2000, calls: 2000 });
  }, 180_000);

  it('a writer killed with SIGKILL mid-burst loses no acknowledged message and leaves a clean mailbox', async () => {
    const mb = await makeMailbox(['k1', 'k2', 'k3', 'sink']);
    const [victim, ...others] = await Promise.all(['k1', 'k2', 'k3'].map((w) => stdioClient(mb.dir, w)));
    const acked: string[] = [];
    const victimAcked: string[] = [];
    const victimRun = burst(victim!, 'sink', 400, 8, victimAcked, 'k1').catch(() => 'killed');
    const othersRun = Promise.all(others.map((c, i) => burst(c, 'sink', 300, 8, acked, `k${i + 2}`)));
    await waitFor(
      () => victimAcked.length >= 100,
      60_000,
      () => 'the victim to send 100 messages',
    );
    process.kill(victim!.pid!, 'SIGKILL');
    expect(await victimRun).toBe('killed');
    await othersRun; // the survivors must get past a lock the victim may have died holding
    await Promise.all(others.map((c) => c.close()));
    await cli(['mailbox', 'recover', mb.dir]);
    const stored = new Set(inboxLines(mb.dir, 'sink').map((l) => (JSON.parse(l) as { id: string }).id));
    for (const id of [...acked, ...victimAcked]) expect(stored.has(id)).toBe(true);
    expect(readFileSync(join(mb.dir, 'calls.jsonl'), 'utf8').endsWith('\n')).toBe(true);
    expect((await verifyMailbox(mb.dir)).problems).toEqual([]);
  }, 180_000);

  it('a torn last line (a write cut off by a crash) is cut before the next append and verify is clean', async () => {
    const mb = await makeMailbox(['a', 'b']);
    const a = await stdioClient(mb.dir, 'a');
    try {
      await call(a.client, 'send_message', { to: 'b', body: 'before' });
      appendFileSync(join(mb.dir, 'inbox', 'b.jsonl'), '{"id":"msg_torn","from":"a","to":"b","bo');
      appendFileSync(join(mb.dir, 'calls.jsonl'), '{"v":1,"seq":2,"ts":"20');
      expect((await verifyMailbox(mb.dir)).problems.map((p) => p.kind)).toEqual(['corrupt', 'corrupt']);
      await call(a.client, 'send_message', { to: 'b', body: 'after' });
    } finally {
      await a.close();
    }
    expect(inboxLines(mb.dir, 'b').map((l) => (JSON.parse(l) as { body: string }).body)).toEqual(['before', 'after']);
    expect((await verifyMailbox(mb.dir)).problems).toEqual([]);
  });

  it('the unfinished write of a writer that died holding the lock is rolled back', async () => {
    const mb = await makeMailbox(['a', 'b']);
    const a = await stdioClient(mb.dir, 'a');
    await call(a.client, 'send_message', { to: 'b', body: 'acknowledged' });
    await a.close();
    const inbox = join(mb.dir, 'inbox', 'b.jsonl');
    const calls = join(mb.dir, 'calls.jsonl');
    const dead = spawnSync(process.execPath, ['-e', '']).pid!; // a pid that no longer runs
    const intent = { files: { 'calls.jsonl': statSync(calls).size, 'inbox/b.jsonl': statSync(inbox).size }, to: 2 };
    const owner = { pid: dead, host: hostname(), boot: '', start: '1', nonce: 'dead', since: Date.now() };
    const line = intentLine(signerFor(readKeyFile(mb.keyPath, { hmac: true })), 'dead', intent);
    writeFileSync(join(mb.dir, '.lock'), `${JSON.stringify(owner)}\n${line}\n`); // as lock.ts writes it
    appendFileSync(
      inbox,
      `${JSON.stringify({ id: 'msg_unacked', from: 'a', to: 'b', body: 'never acknowledged', sent_at: new Date().toISOString() })}\n`,
    );
    expect((await verifyMailbox(mb.dir)).problems.map((p) => p.kind)).toEqual(['orphan']);
    expect((await cli(['mailbox', 'recover', mb.dir, '--json'])).out).toBe('{"recovered":true}\n');
    expect(inboxLines(mb.dir, 'b')).toHaveLength(1);
    expect((await verifyMailbox(mb.dir)).problems).toEqual([]);
  });
});
