/**
 * Two rules the store engine keeps for every store kind: `message_status` asked by
 * an agent decides access (sender or recipient) before it checks any receipt, so
 * another pair's real id costs what a made-up id costs and gets the same answer; and
 * an agent acknowledges only a message it has read (a read, a peek, a thread read),
 * never one it has not yet been shown.
 */
import { describe, expect, it } from 'vitest';
import type { Signer } from '../../src/attest/signature.js';
import { signerFor } from '../../src/attest/signature.js';
import { isWitnessError } from '../../src/core/errors.js';
import { loadKey } from '../../src/mailbox/config.js';
import { JsonlStore, type MailboxStore, PostgresStore, readConfig, SqliteStore } from '../../src/mailbox/index.js';
import { makeMailbox, type TestStore } from './helpers.js';

const read = (limit = 20, peek = false) => ({ limit, peek, tool: 'check_inbox' as const });

/** The mailbox's own signer, counting the signatures it checks. */
function countingSigner(dir: string, keyPath: string): Signer & { checks: number } {
  const signer = signerFor(loadKey(readConfig(dir), keyPath));
  const counting = {
    alg: signer.alg,
    kid: signer.kid,
    checks: 0,
    sign: (m: Uint8Array) => signer.sign(m),
    verify: (m: Uint8Array, s: string | Uint8Array) => {
      counting.checks++;
      return signer.verify(m, s);
    },
  };
  return counting;
}

async function open(kind: TestStore, dir: string, signer: Signer): Promise<MailboxStore> {
  if (kind === 'postgres') return PostgresStore.open(dir, readConfig(dir), signer);
  return kind === 'sqlite' ? new SqliteStore(dir, signer) : new JsonlStore(dir, signer);
}

async function withStore(
  kind: TestStore,
  fn: (store: MailboxStore, signer: Signer & { checks: number }) => Promise<void>,
): Promise<void> {
  const mb = await makeMailbox(['alice', 'bob', 'carol'], { store: kind });
  const signer = countingSigner(mb.dir, mb.keyPath);
  const store = await open(kind, mb.dir, signer);
  try {
    await fn(store, signer);
  } finally {
    await store.close();
    await mb.cleanup();
  }
}

async function refusal(work: Promise<unknown>): Promise<{ code: string; message: string }> {
  try {
    await work;
  } catch (error) {
    if (isWitnessError(error)) return { code: error.code, message: error.message };
    throw error;
  }
  throw new Error('expected a refusal');
}

for (const kind of ['jsonl', 'sqlite', 'postgres'] as const) {
  describe(`${kind} store`, () => {
    it('message_status asked by a third agent answers nothing, checking no receipt: the same as a made-up id', async () => {
      await withStore(kind, async (store, signer) => {
        const sent = await store.send('alice', { to: 'bob', body: 'for bob only' });
        await store.fetch('bob', read());
        await store.ack('bob', sent.id, 'done');
        signer.checks = 0;
        expect(await store.status(sent.id, 'carol')).toBeUndefined();
        expect(signer.checks).toBe(0);
        expect(await store.status('msg_00000000-0000-4000-8000-000000000000', 'carol')).toBeUndefined();
        expect(signer.checks).toBe(0);
        // The pair itself still gets the full, checked status.
        expect(await store.status(sent.id, 'alice')).toMatchObject({ state: 'acknowledged', from: 'alice', to: 'bob' });
        expect(signer.checks).toBeGreaterThan(0);
        expect((await store.status(sent.id, 'bob'))?.state).toBe('acknowledged');
        expect((await store.status(sent.id))?.state).toBe('acknowledged'); // the operator's status: no asker
      });
    });

    it('ack_message of a message never read is refused, saying to read it first, and acknowledges nothing; after a read it is accepted', async () => {
      await withStore(kind, async (store) => {
        const sent = await store.send('alice', { to: 'bob', body: 'read me first' });
        const refused = await refusal(store.ack('bob', sent.id, 'too early'));
        expect(refused.code).toBe('USAGE');
        expect(refused.message).toMatch(/has not been read yet.*check_inbox/);
        expect((await store.status(sent.id))?.state).toBe('stored'); // nothing acknowledged
        await store.fetch('bob', read());
        expect(await store.ack('bob', sent.id, 'now')).toMatchObject({
          id: sent.id,
          reply: 'now',
          deduplicated: false,
        });
        expect((await store.status(sent.id))?.acknowledged?.reply).toBe('now');
      });
    });

    it('a peek or a thread read counts as reading: the message can be acknowledged though the cursor did not move', async () => {
      await withStore(kind, async (store) => {
        const peeked = await store.send('alice', { to: 'bob', body: 'peeked' });
        const threaded = await store.send('carol', { to: 'bob', body: 'in a thread' });
        const unread = await store.send('carol', { to: 'bob', body: 'never shown' });
        expect((await store.fetch('bob', read(1, true))).map((m) => m.id)).toEqual([peeked.id]);
        expect((await store.fetch('bob', { ...read(), thread: threaded.thread! })).map((m) => m.id)).toEqual([
          threaded.id,
        ]);
        expect((await store.ack('bob', peeked.id)).deduplicated).toBe(false);
        expect((await store.ack('bob', threaded.id)).deduplicated).toBe(false);
        expect((await refusal(store.ack('bob', unread.id))).code).toBe('USAGE');
        expect(await store.hasUnread('bob')).toBe(true); // nothing was marked read
      });
    });
  });
}
