/**
 * The viewer's pages for a mailbox (live), a delegation path and an E12 results file,
 * in headless Chromium: real mailbox store and witness, real receipts and forgeries,
 * a real E12 run over its three loopback processes. Each page: no console error, no
 * request off 127.0.0.1 (or the bundle's folder), reached by keyboard.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runE12 } from '../../src/a2a/e12.js';
import { writeDirectoryFile } from '../../src/attest/key-directory.js';
import { newSigningKey } from '../../src/attest/keys.js';
import { forge, forgedLeaf, honestPath } from '../../src/attest/testing/world.js';
import { createMatrixWorld } from '../../src/attest/testing/index.js';
import { cosigner } from '../../src/attest/tlog/cosignature.js';
import { serveWitness, Witness, type WitnessServer } from '../../src/attest/tlog/witness.js';
import { memoryIo } from '../../src/cli/io.js';
import { runMain } from '../../src/cli/main.js';
import { mailboxVerifierKey, type MailboxStore, openStore, WitnessSubmitter } from '../../src/mailbox/index.js';
import { e12Answers } from '../../src/view/e12-model.js';
import { MailboxFeed } from '../../src/view/mailbox-model.js';
import { evidenceAnswers, recogniseViewed } from '../../src/view/open.js';
import { startViewServer, type ViewServer } from '../../src/view/server.js';
import { CHROMIUM, hasChromium, type OpenedPage, openPage } from '../support/browser.js';
import { makeMailbox, type TestMailbox, tempDir } from '../mailbox/helpers.js';
import { cellsOf, checkedVisit } from './pages.js';

if (!hasChromium)
  console.warn(`skipping the browser tests of witness view: ${CHROMIUM} is missing (apt-get install chromium)`);

const base = (s: ViewServer) => s.url.slice(0, s.url.indexOf('/?'));
/** Opens `url` and checks it, then that nothing failed and nothing left the machine. */
const visit = (url: string, local: (u: string) => boolean, check: (o: OpenedPage) => Promise<void>) =>
  checkedVisit(() => openPage(url, 'main[data-page]'), local, check);
const rowsOf = cellsOf;

describe.skipIf(!hasChromium)('the mailbox page', () => {
  let mb: TestMailbox;
  let witness: Witness;
  let ws: WitnessServer;
  let store: MailboxStore;
  let feed: MailboxFeed;
  let server: ViewServer;
  beforeAll(async () => {
    mb = await makeMailbox(['alice', 'bob']);
    witness = await Witness.open({
      logs: [mailboxVerifierKey(mb.dir)],
      cosigner: cosigner(newSigningKey('w-operator'), 'w.example/w'),
      state: join(tempDir('witness-state-'), 'w.db'),
    });
    ws = await serveWitness(witness);
    const submitter = await WitnessSubmitter.start(mb.dir, {
      witnesses: [{ url: ws.url, vkey: witness.cosignerKey }],
      everyReceipts: 1,
      everySeconds: 3600,
    });
    const watched = submitter.watch(await openStore(mb.dir));
    const first = await watched.send('alice', { to: 'bob', body: 'first: the plan' });
    await watched.send('alice', { to: 'bob', body: 'second: the numbers' });
    await watched.fetch('bob', { limit: 1, peek: false, tool: 'check_inbox' });
    await watched.ack('bob', first.id, 'on it');
    await watched.close();
    await submitter.close();
    store = await openStore(mb.dir);
    feed = await MailboxFeed.open(mb.dir, { pollMs: 50 });
    server = await startViewServer({ kind: 'mailbox', feed });
  }, 60_000);
  afterAll(async () => {
    await server?.close();
    await feed?.close();
    await store?.close();
    await ws?.close();
    await witness?.close();
    await mb?.cleanup();
  });

  it("shows each message with its states and receipts, verify's verdict and the witnessed checkpoint; a message sent while it is open appears without reload", async () => {
    await visit(
      server.url,
      (u) => u.startsWith(`${base(server)}/`) || u.startsWith('data:'),
      async ({ page }) => {
        await page.waitForSelector('main[data-page="mailbox"]');
        expect(
          await page.locator('#verdict').textContent(),
          JSON.stringify(await rowsOf(page, 'table.problems')),
        ).toMatch(/^valid: \d+ call receipts, 2 messages, .*requiring a checkpoint cosigned by w\.example\/w/);
        const witnessed = await rowsOf(page, 'table.witnessed');
        expect(witnessed[0]?.slice(0, 2)).toEqual(['w.example/w', expect.stringMatching(/^\d+$/)]);
        const rows = await rowsOf(page, 'table.messages');
        expect(rows.map((r) => [r[3], r[4]])).toEqual([
          ['second: the numbers', 'stored'],
          ['first: the plan', 'acknowledged'],
        ]);
        expect(rows[1]?.[7]).toMatch(/^seq \d+ · .* · reply: on it$/);
        await page.waitForFunction(() =>
          (globalThis as unknown as { document: { getElementById(id: string): { textContent: string } } }).document
            .getElementById('live')
            .textContent.startsWith('live'),
        );
        const sent = await store.send('bob', { to: 'alice', body: 'third: sent while the page is open' });
        await page.waitForSelector(`table.messages tr[data-id="${sent.id}"]`, { timeout: 20_000 });
        expect((await rowsOf(page, 'table.messages'))[0]?.slice(3, 5)).toEqual([
          'third: sent while the page is open',
          'stored',
        ]);
        // Keyboard: Tab reaches a message, Enter opens its receipts.
        for (let i = 0; i < 60; i++) {
          await page.keyboard.press('Tab');
          if (
            await page.evaluate(
              () =>
                (globalThis as unknown as { document: { activeElement: { className: string } } }).document.activeElement
                  .className === 'message',
            )
          )
            break;
        }
        await page.keyboard.press('Enter');
        await page.waitForSelector('main[data-page="message"]');
        expect(await page.locator('table.receipt.stored').count()).toBe(1);
      },
    );
  });

  it('a bundle of the mailbox opens from file:// as a snapshot, saying it is not followed', async () => {
    const io = memoryIo(mb.dir);
    expect(await runMain(['view', 'bundle', mb.dir, '-o', join(mb.dir, '..', 'mb-view')], io), io.err).toBe(0);
    await visit(
      `file://${join(mb.dir, '..', 'mb-view')}/index.html`,
      (u) => u.startsWith('file://') || u.startsWith('data:'),
      async ({ page }) => {
        expect(await page.locator('#live').textContent()).toMatch(/snapshot.*not followed/);
        expect((await rowsOf(page, 'table.messages')).length).toBeGreaterThanOrEqual(2);
      },
    );
  });
});

describe.skipIf(!hasChromium)('the delegation graph', () => {
  it('a dag path with one forged edge shows that edge as forged with COSIGNATURE_MISSING, the others ok (server and file:// bundle)', async () => {
    const world = createMatrixWorld(Date.now());
    const honest = await honestPath(world, 'dag');
    const [root, middle] = honest.path as [never, never];
    // The leaf's deployer alone claims the middle receipt as its parent: no co-signature by its deployer.
    const leaf = forge(forgedLeaf(world, [root, middle], 'dag', world.keys.c), [world.keys.c]);
    const dir = mkdtempSync(join(tmpdir(), 'witness-view-graph-'));
    writeFileSync(
      join(dir, 'path.json'),
      JSON.stringify({ type: 'witness/path', path: [root, middle, leaf] }, null, 2),
    );
    writeFileSync(join(dir, 'out.txt'), world.output);
    writeDirectoryFile(join(dir, 'keys.json'), world.directoryFile);
    const viewed = recogniseViewed(join(dir, 'path.json'));
    expect(viewed.kind).toBe('evidence');
    const answers = await evidenceAnswers(viewed as Extract<typeof viewed, { kind: 'evidence' }>, 'path.json', {
      directory: world.directory,
      output: world.output,
    });
    const server = await startViewServer({ kind: 'fixed', answers });
    const check = async ({ page }: OpenedPage) => {
      await page.waitForSelector('main[data-page="attest"]');
      expect(await page.locator('#verdict').textContent()).toMatch(/^invalid: COSIGNATURE_MISSING/);
      const edges = await rowsOf(page, 'table.edges');
      expect(edges.map((e) => [e[0], e[3], e[4]])).toEqual([
        ['0 → 1', 'ok', ''],
        ['1 → 2', 'forged', 'COSIGNATURE_MISSING'],
      ]);
      expect(await page.locator('svg g.edge[data-verdict="forged"][data-to="2"]').count()).toBe(1);
      expect(await page.locator('svg g.node[data-ok="true"]').count()).toBe(3);
    };
    try {
      await visit(server.url, (u) => u.startsWith(`${base(server)}/`) || u.startsWith('data:'), check);
    } finally {
      await server.close();
    }
    const io = memoryIo(dir);
    expect(
      await runMain(['view', 'bundle', 'path.json', '--keys', 'keys.json', '--output', 'out.txt', '-o', 'graph'], io),
      io.err,
    ).toBe(0);
    await visit(`file://${dir}/graph/index.html`, (u) => u.startsWith('file://') || u.startsWith('data:'), check);
  });

  it('refuses a path without --keys with one line and exit 2', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'witness-view-graph-'));
    writeFileSync(join(dir, 'p.json'), JSON.stringify({ type: 'witness/path', path: [] }));
    const io = memoryIo(dir);
    expect(await runMain(['view', 'bundle', 'p.json', '-o', 'x'], io)).toBe(2);
    expect(io.err.trim().split('\n')).toHaveLength(1);
    expect(io.err).toMatch(/needs --keys <file>/);
  });
});

describe.skipIf(!hasChromium)('the E12 page', () => {
  it("shows the summary, overheads and forgery as tables and a chart; the dag forgery's graph shows its edge forged", async () => {
    const results = await runE12({ trials: 1, warmup: 0 });
    const answers = await e12Answers(JSON.parse(JSON.stringify(results)), 'e12.json');
    const server = await startViewServer({ kind: 'fixed', answers });
    try {
      await visit(
        server.url,
        (u) => u.startsWith(`${base(server)}/`) || u.startsWith('data:'),
        async ({ page }) => {
          await page.waitForSelector('main[data-page="e12"]');
          expect(await page.locator('#verdict').textContent()).toMatch(/^valid: 4\/4 trials verified/);
          const summary = await rowsOf(page, 'table.summary');
          expect(summary.map((r) => [r[0], r[2]])).toEqual(
            results.summary.map((s) => [s.condition, `${s.verified}/${s.n}`]),
          );
          expect(await page.locator('svg.chart rect').count()).toBeGreaterThan(3 * 7 - 1);
          expect((await rowsOf(page, 'table.overheads')).map((r) => r[0])).toEqual(
            expect.arrayContaining([
              'dag+stream over none (mean total)',
              'dag+stream over dag (mean total: the streaming)',
              'dag+stream over none, on-CPU',
            ]),
          );
          expect((await rowsOf(page, 'table.forgery')).map((r) => r.slice(0, 3))).toEqual([
            ['chain', 'accepted', ''],
            ['dag', 'rejected', 'COSIGNATURE_MISSING'],
          ]);
          await page.locator('table.forgery a').nth(1).click();
          await page.waitForSelector('main[data-page="graph"]');
          expect((await rowsOf(page, 'table.edges')).map((e) => [e[3], e[4]])).toEqual([
            ['forged', 'COSIGNATURE_MISSING'],
          ]);
        },
      );
    } finally {
      await server.close();
    }
  }, 120_000);
});
