/**
 * The mailbox page's live feed (view/mailbox-model.ts) against a real JSONL mailbox:
 * an honest send is never pushed to the page as "no genuine send receipt" (a store
 * writes the inbox line before its receipt, and a poll can fall between the two),
 * while an inbox line that no receipt ever stores is still shown, with no state.
 */
import { appendFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type MailboxStore, openStore } from '../../src/mailbox/index.js';
import { MailboxFeed, type MailboxMessage } from '../../src/view/mailbox-model.js';
import { makeMailbox, type TestMailbox, waitFor } from '../mailbox/helpers.js';

describe('the mailbox feed', () => {
  let mb: TestMailbox;
  let store: MailboxStore;
  let feed: MailboxFeed;
  const pushed: MailboxMessage[] = [];

  beforeAll(async () => {
    mb = await makeMailbox(['alice', 'bob']);
    store = await openStore(mb.dir);
    feed = await MailboxFeed.open(mb.dir, { pollMs: 5 });
    feed.onUpdate((u) => pushed.push(...u.messages));
    feed.follow();
  }, 60_000);
  afterAll(async () => {
    await feed?.close();
    await store?.close();
    await mb?.cleanup();
  });

  const until = (done: () => boolean, what: string) => waitFor(done, 20_000, () => what);

  it('pushes each honest send with its state, never without one, however often it polls', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 40; i++) ids.push((await store.send('alice', { to: 'bob', body: `honest ${i}` })).id);
    await until(() => ids.every((id) => pushed.some((m) => m.id === id)), 'every honest send on the page');
    const states = pushed.filter((m) => ids.includes(m.id)).map((m) => m.status?.state ?? null);
    expect(states.filter((s) => s === null)).toEqual([]);
  });

  it('still shows an inbox line no receipt stores, with no state, once the grace has passed', async () => {
    const inbox = join(mb.dir, 'inbox', 'bob.jsonl');
    const last = JSON.parse(readFileSync(inbox, 'utf8').trim().split('\n').at(-1) as string) as { id: string };
    const forgedId = `${last.id.slice(0, -4)}f0f0`;
    appendFileSync(inbox, `${JSON.stringify({ ...last, id: forgedId, body: 'planted, never sent' })}\n`);
    const readAt = Date.now();
    await until(() => pushed.some((m) => m.id === forgedId), 'the planted line on the page');
    expect(Date.now() - readAt).toBeGreaterThanOrEqual(1500);
    expect(pushed.find((m) => m.id === forgedId)?.status).toBeNull();
  });
});
