// Regenerates the pictures of docs/view.md: the mailbox page (live), a delegation
// path with a forged dag edge as a graph, and the E12 page, each served by the real
// viewer over real data and taken in headless Chromium.
// Run: npm run docs:view   (needs /usr/bin/chromium; runs a small E12 over loopback processes)
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { runE12 } from '../src/a2a/e12.js';
import { newSigningKey } from '../src/attest/keys.js';
import { createMatrixWorld } from '../src/attest/testing/index.js';
import { forge, forgedLeaf, honestPath } from '../src/attest/testing/world.js';
import { cosigner } from '../src/attest/tlog/cosignature.js';
import { serveWitness, Witness } from '../src/attest/tlog/witness.js';
import { addAgent, initMailbox, mailboxVerifierKey, openStore, WitnessSubmitter } from '../src/mailbox/index.js';
import { e12Answers } from '../src/view/e12-model.js';
import { MailboxFeed } from '../src/view/mailbox-model.js';
import { evidenceAnswers } from '../src/view/open.js';
import { startViewServer, type ViewSource } from '../src/view/server.js';

const docs = join(import.meta.dirname, '..', 'docs');
const work = mkdtempSync(join(tmpdir(), 'witness-view-docs-'));
const browser = await chromium.launch({
  executablePath: '/usr/bin/chromium',
  args: [
    '--headless',
    '--no-sandbox',
    '--disable-gpu',
    '--disable-background-networking',
    '--disable-quic',
    '--no-first-run',
    '--disable-component-update',
    '--disable-sync',
  ],
});

async function shoot(source: ViewSource, hash: string, ready: string, file: string, height = 1100): Promise<void> {
  const server = await startViewServer(source, { title: 'Witness view' });
  try {
    const page = await browser.newPage({ viewport: { width: 1200, height } });
    await page.goto(`${server.url}${hash}`);
    await page.waitForSelector(ready);
    await page.screenshot({ path: join(docs, file), fullPage: false });
    await page.close();
    console.log(`docs/${file}`);
  } finally {
    await server.close();
  }
}

// A mailbox of three agents whose server submits to a witness; a few messages read and acknowledged.
const dir = join(work, 'mb');
await initMailbox(dir, { keyPath: join(work, 'keys', 'mailbox.key') });
for (const name of ['planner', 'coder', 'reviewer']) await addAgent(dir, name);
const witness = await Witness.open({
  logs: [mailboxVerifierKey(dir)],
  cosigner: cosigner(newSigningKey('w-operator'), 'witness.example/w1'),
  state: join(work, 'w.db'),
});
const ws = await serveWitness(witness);
const submitter = await WitnessSubmitter.start(dir, {
  witnesses: [{ url: ws.url, vkey: witness.cosignerKey }],
  everyReceipts: 2,
  everySeconds: 3600,
});
const store = submitter.watch(await openStore(dir));
const plan = await store.send('planner', {
  to: 'coder',
  body: 'Implement the parser for the new checkpoint format; tests first.',
});
await store.send('planner', { to: 'reviewer', body: "Please review the coder's branch when it lands." });
await store.fetch('coder', { limit: 10, peek: false, tool: 'check_inbox' });
await store.ack('coder', plan.id, 'on it: tests by 15:00');
await store.send('coder', { to: 'planner', body: 'Parser done, 14 tests pass.', replyTo: plan.id });
await store.close();
await submitter.close();
const feed = await MailboxFeed.open(dir);
await shoot({ kind: 'mailbox', feed }, '', 'main[data-page="mailbox"] #verdict', 'view-mailbox.png');
await feed.close();
await ws.close();
await witness.close();

// A dag path whose last edge the parent never co-signed.
const world = createMatrixWorld(Date.now());
const honest = await honestPath(world, 'dag');
const [root, middle] = honest.path as [never, never];
const leaf = forge(forgedLeaf(world, [root, middle], 'dag', world.keys.c), [world.keys.c]);
const answers = await evidenceAnswers(
  { kind: 'evidence', value: { type: 'witness/path', path: [root, middle, leaf] }, carriesOutput: false, dsse: false },
  'answer.evidence.json',
  { directory: world.directory, output: world.output },
);
await shoot({ kind: 'fixed', answers }, '', 'svg.graph', 'view-graph.png', 900);

// A small E12 run over its three loopback processes.
const results = await runE12({ trials: 3, warmup: 1 });
await shoot(
  { kind: 'fixed', answers: await e12Answers(JSON.parse(JSON.stringify(results)), 'e12.json') },
  '',
  'svg.chart',
  'view-e12.png',
);
await browser.close();
