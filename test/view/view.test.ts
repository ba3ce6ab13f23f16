import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { memoryIo } from '../../src/cli/io.js';
import { runMain } from '../../src/cli/main.js';
import type { RunRecord } from '../../src/sim/experiment/record.js';
import { preset } from '../../src/sim/experiment/presets.js';
import { runExperiment } from '../../src/sim/experiment/run.js';
import { parseExperiment } from '../../src/sim/experiment/schema.js';
import { PairedRuns } from '../../src/sim/paired.js';
import { convergenceRound } from '../../src/sim/stats.js';
import { ViewModel } from '../../src/view/model.js';
import { ResultsIndex } from '../../src/view/results-index.js';
import { startViewServer, type ViewServer } from '../../src/view/server.js';
import { CHROMIUM, hasChromium, type OpenedPage, openPage } from '../support/browser.js';
import { cellsOf, checkedVisit } from './pages.js';

if (!hasChromium)
  console.warn(`skipping the browser tests of witness view: ${CHROMIUM} is missing (apt-get install chromium)`);

let dir: string;
let modes: RunRecord[];
let server: ViewServer;
const write = (name: string, records: readonly RunRecord[]) => {
  writeFileSync(join(dir, name), records.map((r) => `${JSON.stringify(r)}\n`).join(''));
  return join(dir, name);
};
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'witness-view-'));
  // Vote against a median rule over the same games: a paired comparison with changed runs.
  const experiment = parseExperiment({
    name: 'view-modes',
    runs: 12,
    grid: {
      honest: 4,
      byzantine: [0, 2],
      byzantineStrategy: 'split',
      honestPolicy: ['plurality', 'stubborn'],
      decide: ['vote', 'rule:median'],
      after: 2,
      rounds: 10,
    },
  });
  modes = (await runExperiment({ experiment })).records;
  write('modes.jsonl', modes);
  write('smoke.jsonl', (await runExperiment({ experiment: parseExperiment(preset('smoke')) })).records);
  const paths = [join(dir, 'modes.jsonl')];
  server = await startViewServer(
    new ViewModel(
      paths.map((p) => ResultsIndex.build(p)),
      ['modes.jsonl'],
    ),
  );
});
afterAll(async () => {
  await server?.close();
});

const base = () => server.url.slice(0, server.url.indexOf('/?'));
const token = () => server.url.slice(server.url.indexOf('t=') + 2);

describe('the viewer server', () => {
  it('answers only GET with the token, for loopback Host and Origin', async () => {
    const url = `${base()}/api/overview?t=${token()}`;
    expect((await fetch(url)).status).toBe(200);
    expect((await fetch(`${base()}/api/overview`)).status).toBe(403);
    expect((await fetch(`${base()}/api/overview?t=${token().slice(1)}x`)).status).toBe(403);
    const post = await fetch(url, { method: 'POST', body: '{}' });
    expect(post.status).toBe(405);
    expect(((await post.json()) as { error: string }).error).toMatch(/read-only/);
    expect((await fetch(url, { headers: { Origin: 'https://evil.example' } })).status).toBe(403);
    const page = await fetch(server.url);
    expect(page.headers.get('content-security-policy')).toContain("default-src 'none'");
  });
  it('says what was wrong, in one line of JSON, for a bad page or run number', async () => {
    const bad = await fetch(`${base()}/api/run?file=0&pos=99999&t=${token()}`);
    expect(bad.status).toBe(404);
    expect(((await bad.json()) as { error: string }).error).toMatch(
      /has no run number 99999; runs are numbered 0 to \d+\./,
    );
    const page = await fetch(`${base()}/api/runs?file=0&cell=0&page=-1&t=${token()}`);
    expect(page.status).toBe(400);
    expect(((await page.json()) as { error: string }).error).toBe('page must be a whole number ≥ 0.');
  });
  it('reads a run back from its byte offset as the line it was', () => {
    const ix = ResultsIndex.build(join(dir, 'modes.jsonl'));
    expect(ix.runs).toBe(modes.length);
    for (const pos of [0, 7, modes.length - 1]) expect(ix.record(pos)).toEqual(JSON.parse(JSON.stringify(modes[pos])));
  });
});

describe('witness view on the command line', () => {
  it('prints {url} with --json, serves the page there, and stops on SIGTERM (exit 0, as every Witness server)', async () => {
    const child = spawn(
      process.execPath,
      [join(import.meta.dirname, '..', '..', 'dist', 'cli', 'main.js'), 'view', join(dir, 'smoke.jsonl'), '--json'],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    const line = await new Promise<string>((resolve, reject) => {
      let out = '';
      child.stdout.on('data', (d: Buffer) => {
        out += d;
        if (out.includes('\n')) resolve(out.split('\n')[0]!);
      });
      child.on('exit', (code) => reject(new Error(`exited ${code}`)));
    });
    const { url } = JSON.parse(line) as { url: string };
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/\?t=[\w-]{20,}$/);
    expect((await fetch(url)).status).toBe(200);
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
  });
  it('refuses a file that is not results with one line and exit 2', async () => {
    writeFileSync(join(dir, 'notes.txt'), 'hello\nworld\n');
    const io = memoryIo(dir);
    const code = await runMain(['view', 'bundle', 'notes.txt', '-o', 'out'], io);
    expect(code).toBe(2);
    expect(io.err.trim().split('\n')).toHaveLength(1);
    expect(io.err).toMatch(/is not a results file/);
  });
});

/** Every page, over the server and from a bundle: the same checks. */
function pages(name: string, open: (hash: string) => Promise<OpenedPage>, local: (url: string) => boolean) {
  describe.skipIf(!hasChromium)(`${name} in headless Chromium`, () => {
    const visit = (hash: string, check: (o: OpenedPage) => Promise<void>) =>
      checkedVisit(() => open(hash), local, check);
    it('the sweep: one row per cell with its rates; the filter narrows it; the paired cells are offered', async () => {
      await visit('', async ({ page }) => {
        const rows = await cellsOf(page, 'table.cells');
        expect(rows).toHaveLength(new Set(modes.map((r) => r.cell)).size);
        expect(rows[0]![2]).toMatch(/^\d+(\.\d+)? \(\d+(\.\d+)?–\d+(\.\d+)?\)$/);
        await page.fill('#filter', 'rule:median');
        expect((await cellsOf(page, 'table.cells')).length).toBe(rows.length / 2);
        expect(await page.locator('ul.pairs a').count()).toBe(4);
      });
    });
    it('keyboard: Tab reaches a run of a cell, Enter opens its game round by round', async () => {
      await visit('#/cell/0/1', async ({ page }) => {
        await page.waitForSelector('main[data-page="cell"]');
        for (let i = 0; i < 30; i++) {
          await page.keyboard.press('Tab');
          if (
            await page.evaluate(
              () =>
                (globalThis as unknown as { document: { activeElement: { className: string } } }).document.activeElement
                  .className === 'run',
            )
          )
            break;
        }
        await page.keyboard.press('Enter');
        await page.waitForSelector('main[data-page="run"]');
        const hash = await page.evaluate(() => (globalThis as unknown as { location: { hash: string } }).location.hash);
        const record = modes[Number(hash.split('/')[3])]!;
        const rounds = await cellsOf(page, 'table.rounds');
        expect(rounds).toHaveLength(record.rounds);
        const heads = await page.locator('table.rounds thead th').allTextContents();
        expect(heads.filter((h) => h.includes('(Byzantine)'))).toHaveLength(record.byzantine);
        const converged = await page.locator('table.rounds tr.converged th').allTextContents();
        const round = convergenceRound(record);
        expect(converged).toEqual(round === null ? [] : [`${round} ✓`]);
        expect(await page.locator('table.facts').textContent()).toContain(record.outcome);
      });
    });
    it('side by side: the paired difference as paired.ts computes it, the changed runs, and both games of one', async () => {
      const paired = new PairedRuns();
      for (const r of modes) paired.add(r);
      // The pair where the rule changed some outcomes (the beforeAll's games make one).
      const changes = (base: string, other: string) =>
        modes
          .filter((r) => r.cell === base)
          .filter((r) => modes.find((x) => x.cell === other && x.index === r.index)!.outcome !== r.outcome).length;
      const comparison = paired.comparisons().find((c) => changes(c.base, c.other) > 0)!;
      expect(comparison, 'a comparison with changed runs').toBeDefined();
      const cells = [...new Set(modes.map((r) => r.cell))];
      const [a, b] = [cells.indexOf(comparison.base), cells.indexOf(comparison.other)];
      await visit(`#/compare/0:${a}/0:${b}`, async ({ page }) => {
        await page.waitForSelector('main[data-page="compare"]');
        const [row] = await cellsOf(page, 'table.paired');
        const pt = (x: number) => `${x > 0 ? '+' : ''}${(x * 100).toFixed(1)}`;
        expect(row).toEqual([
          String(comparison.pairs),
          pt(comparison.difference),
          `${pt(comparison.ci.low)} to ${pt(comparison.ci.high)}`,
          String(comparison.counts.both),
          String(comparison.counts.firstOnly),
          String(comparison.counts.secondOnly),
          String(comparison.counts.neither),
        ]);
        const changed = await cellsOf(page, 'table.changed');
        const ofCell = (cell: string) => new Map(modes.filter((r) => r.cell === cell).map((r) => [r.index, r.outcome]));
        const [ra, rb] = [ofCell(comparison.base), ofCell(comparison.other)];
        expect(changed.map((c) => Number(c[0]))).toEqual([...ra].filter(([i, o]) => rb.get(i) !== o).map(([i]) => i));
        expect(changed.length).toBeGreaterThan(0);
        await page.locator('table.changed a').first().click();
        await page.waitForSelector('main[data-page="pair"]');
        expect(await page.locator('.side .game').count()).toBe(2);
      });
    });
  });
}

pages(
  'witness view',
  (hash) => openPage(`${server.url}${hash}`, 'main[data-page]'),
  (u) => u.startsWith(`${base()}/`) || u.startsWith('data:'),
);

let bundleDir: string | undefined;
const bundle = async () => {
  if (!bundleDir) {
    const io = memoryIo(dir);
    const code = await runMain(['view', 'bundle', 'modes.jsonl', '-o', 'bundle', '--json'], io);
    expect(code, io.err).toBe(0);
    bundleDir = JSON.parse(io.out).dir as string;
  }
  return bundleDir;
};
pages(
  'witness view bundle, from file://',
  async (hash) => openPage(`file://${await bundle()}/index.html${hash}`, 'main[data-page]'),
  (u) => u.startsWith('file://') || u.startsWith('data:'),
);

describe.skipIf(!hasChromium)('the remedy preset as a bundle, from file://, in headless Chromium', () => {
  it('opens with the same pages: every cell and its pairs, a comparison, a game round by round', async () => {
    const records = (await runExperiment({ experiment: parseExperiment(preset('remedy')) })).records;
    write('remedy.jsonl', records);
    const io = memoryIo(dir);
    expect(await runMain(['view', 'bundle', 'remedy.jsonl', '-o', 'remedy-view', '--json'], io), io.err).toBe(0);
    const at = (hash: string) => () =>
      openPage(`file://${JSON.parse(io.out).dir as string}/index.html${hash}`, 'main[data-page]');
    const local = (u: string) => u.startsWith('file://') || u.startsWith('data:');
    const cells = [...new Set(records.map((r) => r.cell))];
    const paired = new PairedRuns();
    for (const r of records) paired.add(r);
    const comparison = paired.comparisons().find((c) => c.difference !== 0)!;
    expect(comparison, 'a decision layer that changed the valid rate').toBeDefined();
    await checkedVisit(at(''), local, async ({ page }) => {
      expect(await cellsOf(page, 'table.cells')).toHaveLength(cells.length);
      expect(await page.locator('ul.pairs a').count()).toBe(paired.comparisons().length);
    });
    await checkedVisit(
      at(`#/compare/0:${cells.indexOf(comparison.base)}/0:${cells.indexOf(comparison.other)}`),
      local,
      async ({ page }) => {
        await page.waitForSelector('main[data-page="compare"]');
        const [row] = await cellsOf(page, 'table.paired');
        expect(row?.slice(0, 2)).toEqual([
          String(comparison.pairs),
          `${comparison.difference > 0 ? '+' : ''}${(comparison.difference * 100).toFixed(1)}`,
        ]);
      },
    );
    const last = records.length - 1;
    await checkedVisit(at(`#/run/0/${last}`), local, async ({ page }) => {
      await page.waitForSelector('main[data-page="run"]');
      expect(await cellsOf(page, 'table.rounds')).toHaveLength(records[last]!.rounds);
      expect(await page.locator('table.facts').textContent()).toContain(records[last]!.outcome);
    });
  });
});
