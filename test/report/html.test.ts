import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildReportData, shortLabels } from '../../src/report/html-data.js';
import { renderHtmlReport } from '../../src/report/html.js';
import type { RunRecord } from '../../src/sim/experiment/record.js';
import { convergenceRound } from '../../src/sim/stats.js';
import { runExperiment } from '../../src/sim/experiment/run.js';
import { preset } from '../../src/sim/experiment/presets.js';
import { parseExperiment } from '../../src/sim/experiment/schema.js';

// biome-ignore lint/suspicious/noExplicitAny: the DOM and playwright's page, untyped in this Node project (no DOM lib).
type Untyped = any;

const CHROMIUM = '/usr/bin/chromium';
const hasChromium = existsSync(CHROMIUM);
if (!hasChromium)
  console.warn(
    `skipping the browser test of the HTML report: ${CHROMIUM} is missing (apt-get install chromium; .ci/run installs it)`,
  );
const outDir = join(import.meta.dirname, '..', '..', 'test-output');

let records: RunRecord[];
beforeAll(async () => {
  const experiment = parseExperiment({
    name: 'report-test',
    runs: 6,
    budget: { rounds: 8 },
    grid: {
      honest: 4,
      byzantine: [0, 1, 2],
      byzantineStrategy: ['split', 'stall'],
      honestPolicy: ['plurality', 'stubborn'],
      decide: ['vote', 'rule:median', 'hybrid:trimmed-mean'],
      after: 2,
      rounds: 10,
    },
  });
  // Plain vote games with stubborn agents, where runs end as none and timeout too.
  const plain = parseExperiment({
    name: 'report-test-vote',
    runs: 6,
    grid: {
      honest: 4,
      byzantine: [0, 2],
      byzantineStrategy: 'mimic-defect',
      honestPolicy: ['plurality', 'stubborn'],
      rounds: 10,
    },
  });
  records = [...(await runExperiment({ experiment })).records, ...(await runExperiment({ experiment: plain })).records];
  expect(new Set(records.map((r) => r.outcome))).toEqual(new Set(['valid', 'invalid', 'none', 'timeout', 'escalated']));
});

/** A record's cell label as the report shows it (without the words every label shares). */
const shortCell = (r: RunRecord) => {
  labels ??= shortLabels([...new Set(records.map((x) => x.cell))]).short;
  return labels.get(r.cell);
};
let labels: Map<string, string> | undefined;

describe('HTML report data', () => {
  it('drops words every cell label shares and reports them once', () => {
    const { short, common } = shortLabels(['policy:plurality h=4 b=0 R=10', 'policy:plurality h=4 b=1:split R=10']);
    expect(common).toBe('policy:plurality h=4 R=10');
    expect([...short.values()]).toEqual(['b=0', 'b=1:split']);
  });
  it('has one outcome row per cell and outcome that occurs, and one for no_consensus', () => {
    const data = buildReportData(records, { title: 't' });
    const outcomes = new Set(records.map((r) => r.outcome));
    expect(data.outcomes).toHaveLength(data.cells.length * (outcomes.size + 1));
    for (const row of data.outcomes) expect(row.low).toBeLessThanOrEqual(row.rate);
  });
  it('adds no_consensus = none + timeout to the outcome rows, per cell', () => {
    const data = buildReportData(records, { title: 't' });
    const rows = data.outcomes.filter((o) => o.outcome === 'no_consensus');
    expect(rows.length).toBe(data.cells.length);
    expect(rows.some((row) => row.count > 0)).toBe(true);
    for (const row of rows) {
      const cell = data.cells.find((c) => c.cell === row.cell)!;
      expect(row.count).toBe(cell.outcomes.none.count + cell.outcomes.timeout.count);
      expect(row.count).toBe(
        records.filter((r) => shortCell(r) === row.cell && (r.outcome === 'none' || r.outcome === 'timeout')).length,
      );
    }
  });
  it('summarises convergence per cell, with one point per run that converged', () => {
    const data = buildReportData(records, { title: 't' });
    expect(data.convergence.map((c) => c.cell)).toEqual(data.cells.map((c) => c.cell));
    expect(data.firstRounds.length).toBe(records.filter((r) => convergenceRound(r) !== null).length);
    expect(data.firstRounds.length).toBeGreaterThan(0);
    for (const c of data.convergence)
      expect(c.converged).toBe(data.firstRounds.filter((p) => p.cell === c.cell).length);
  });
  it('pools runs across cells when asked, with the same outcome rows per group', () => {
    const data = buildReportData(records, { title: 't', by: ['byzantine'] });
    expect(data.pooled!.groups.map((g) => g.group.byzantine)).toEqual([0, 1, 2]);
    const noConsensus = data.pooled!.outcomes.filter((o) => o.outcome === 'no_consensus');
    expect(noConsensus.map((o) => o.cell)).toEqual(['byzantine=0', 'byzantine=1', 'byzantine=2']);
    const expected = [0, 1, 2].map(
      (b) => records.filter((r) => r.byzantine === b && (r.outcome === 'none' || r.outcome === 'timeout')).length,
    );
    expect(noConsensus.map((o) => o.count)).toEqual(expected);
    expect(expected[2]).toBeGreaterThan(0);
    expect(buildReportData(records, { title: 't' }).pooled).toBeNull();
  });
  it("shows no_consensus and convergence in the page's tables", () => {
    const html = renderHtmlReport(records, { title: 'T', by: ['decide'] });
    expect(html).toContain('<td>no_consensus</td>');
    expect(html).toContain('<h2>Convergence</h2>');
    expect(html).toContain('<h2>Pooled by decide</h2>');
    expect(html).toContain('<td>decide=rule:median</td>');
  });
  it('compares decision modes when the results hold more than one', () => {
    const data = buildReportData(records, { title: 't' });
    expect(new Set(data.modes.map((m) => m.mode))).toEqual(new Set(['vote', 'rule:median', 'hybrid:trimmed-mean']));
  });
  it('is one file with no network references', () => {
    const html = renderHtmlReport(records, { title: 'T' });
    expect(html).not.toMatch(/<script[^>]+src=/);
    expect(html).not.toMatch(/<link[^>]+href=/);
  });
  it('cannot be broken out of its data script by a hostile cell label', () => {
    const hostile = records.map((r) => ({ ...r, cell: `${r.cell} </script><script>alert(1)</script>` }));
    const html = renderHtmlReport(hostile, { title: 'T' });
    expect(html).not.toContain('</script><script>alert(1)');
  });
});

/** A cell table as the page shows it: header texts, and per row the label and each bar's rate and drawn width. */
async function _table(
  page: Untyped,
  selector: string,
): Promise<{ heads: string[]; rows: { label: string; bars: { rate: number; width: number }[] }[] }> {
  return page.evaluate((sel: string) => {
    const table: Untyped = (globalThis as Untyped).document.querySelector(sel);
    return {
      heads: [...table.querySelectorAll('thead th')].map((th: Untyped) => th.firstChild.textContent.trim()),
      rows: [...table.querySelectorAll('tbody tr')].map((tr: Untyped) => ({
        label: tr.children[0].textContent,
        bars: [...tr.querySelectorAll('td.bar')].map((td: Untyped) => ({
          rate: Number(td.dataset.v),
          width: td.querySelector('.fill').getBoundingClientRect().width,
        })),
      })),
    };
  }, selector);
}

describe.skipIf(!hasChromium)('HTML report in headless Chromium', () => {
  it('draws every chart with the expected number of series and saves a screenshot', async () => {
    mkdirSync(outDir, { recursive: true });
    const file = join(outDir, 'report.html');
    writeFileSync(
      file,
      renderHtmlReport(records, { title: 'Browser test report', source: 'test', by: ['decide', 'byzantine'] }),
    );
    const data = buildReportData(records, { title: 't', by: ['decide', 'byzantine'] });
    const browser = await chromium.launch({
      executablePath: CHROMIUM,
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
    try {
      const page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
      const errors: string[] = [];
      page.on('pageerror', (e) => errors.push(e.message));
      await page.goto(`file://${file}`);
      await page.waitForSelector('body[data-rendered="true"]', { timeout: 30_000 });
      expect(errors).toEqual([]);
      const charts = await page.evaluate(() =>
        [...(globalThis as Untyped).document.querySelectorAll('figure[data-chart]')].map((f: Untyped) => {
          // A chart with a legend is a <figure> whose swatches are small svgs: take the chart's own, the largest.
          const svg: Untyped = [...f.querySelectorAll('.chart svg')].sort(
            (a: Untyped, b: Untyped) => b.querySelectorAll('*').length - a.querySelectorAll('*').length,
          )[0];
          const colours = (selector: string, attr: string) =>
            new Set(
              [...(svg?.querySelectorAll(selector) ?? [])]
                .map((e: Untyped) => e.getAttribute(attr))
                .filter((c: string | null) => c && c !== 'none'),
            ).size;
          return {
            id: f.id,
            marks: svg?.querySelectorAll('rect, path, circle, line').length ?? 0,
            bars: colours('g[aria-label="bar"] rect, g[aria-label="rect"] rect', 'fill'),
            lines: colours('g[aria-label="line"] path', 'stroke'),
            dots: svg?.querySelectorAll('g[aria-label="dot"] circle').length ?? 0,
            legend: [...f.querySelectorAll('.chart [class$="-swatch"]')].map((e: Untyped) => e.textContent.trim()),
          };
        }),
      );
      expect(charts.map((c) => c.id)).toEqual(['convergence', 'trajectories', 'votes', 'rounds', 'modes']);
      for (const c of charts) expect(c.marks, `${c.id} drew nothing`).toBeGreaterThan(0);
      const byId = Object.fromEntries(charts.map((c) => [c.id, c]));
      expect(byId.convergence!.dots).toBe(new Set(data.firstRounds.map((p) => `${p.cell}\0${p.round}`)).size);
      // A legend lists only what its chart draws.
      expect(byId.rounds!.legend).toEqual(['valid', 'invalid', 'none', 'timeout', 'escalated']);
      expect(byId.rounds!.bars).toBe(new Set(data.rounds.map((r) => r.outcome)).size);
      expect(byId.trajectories!.lines).toBe(new Set(data.trajectories.map((t) => t.agent)).size);
      expect(byId.votes!.lines).toBe(new Set(data.votes.map((v) => v.run)).size);
      expect(byId.modes!.lines).toBe(new Set(data.modes.map((m) => m.mode)).size);
      expect(byId.modes!.legend.sort()).toEqual([...new Set(data.modes.map((m) => m.mode))].sort());
      // The per-cell and pooled views are tables with a bar per measure, "in range" beside valid.
      const cellsTable = await _table(page, '#outcomes-table');
      expect(cellsTable.heads.slice(0, 5)).toEqual(['cell', 'runs', 'valid', 'in range', 'invalid']);
      expect(cellsTable.rows).toHaveLength(data.cells.length);
      for (const row of cellsTable.rows)
        expect(row.label, 'every cell label says its mode').toMatch(/(^| )(vote|rule:\S+|hybrid:\S+)( |$)/);
      expect(cellsTable.rows.filter((r) => / vote( |$)|^vote/.test(r.label)).length).toBeGreaterThan(0);
      for (const row of cellsTable.rows) for (const bar of row.bars) expect(bar.width).toBeCloseTo(bar.rate * 64, 0);
      const pooledTable = await _table(page, '#pooled-table');
      expect(pooledTable.rows.map((r) => r.label)).toEqual(
        data.pooled!.groups.map((g) => `decide=${g.group.decide} byzantine=${g.group.byzantine}`),
      );
      // Small multiples label every b.
      const ticks = await page.evaluate(() =>
        [...(globalThis as Untyped).document.querySelectorAll('#modes g[aria-label="x-axis tick label"] text')].map(
          (t: Untyped) => t.textContent,
        ),
      );
      for (const b of ['0', '1', '2']) expect(ticks).toContain(b);
      // A click sorts by the column, highest first; a second click lowest first.
      await page.click('#outcomes-table th:nth-child(3)');
      const sorted = (await _table(page, '#outcomes-table')).rows.map((r) => r.bars[0]!.rate);
      expect(sorted).toEqual([...sorted].sort((a, b) => b - a));
      await page.click('#outcomes-table th:nth-child(3)');
      const ascending = (await _table(page, '#outcomes-table')).rows.map((r) => r.bars[0]!.rate);
      expect(ascending).toEqual([...ascending].sort((a, b) => a - b));
      // Settings once, and per cell only what differs.
      const settings = await page.evaluate(() =>
        [...(globalThis as Untyped).document.querySelectorAll('footer table')].map((t: Untyped) =>
          [...t.querySelectorAll('thead th')].map((th: Untyped) => th.textContent),
        ),
      );
      expect(settings[0]).toEqual(['setting', 'every cell']);
      expect(settings[1]).toEqual(['cell', ...data.settings.differing]);
      expect(data.settings.differing).toContain('decide');
      expect(data.settings.common.map(([k]) => k)).toContain('range');
      await page.screenshot({ path: join(outDir, 'report.png'), fullPage: true });
      expect(existsSync(join(outDir, 'report.png'))).toBe(true);
    } finally {
      await browser.close();
    }
  });
  it('keeps the per-cell view of 100+ cells in one scrolling table whose header, with its scale, stays in view', async () => {
    const experiment = parseExperiment({ ...preset('remedy'), runs: 2 });
    const many = (await runExperiment({ experiment })).records;
    const file = join(outDir, 'report-many.html');
    mkdirSync(outDir, { recursive: true });
    writeFileSync(file, renderHtmlReport(many, { title: 'many cells' }));
    const cells = new Set(many.map((r) => r.cell)).size;
    expect(cells).toBeGreaterThanOrEqual(100);
    const browser = await chromium.launch({
      executablePath: CHROMIUM,
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
    try {
      const page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
      await page.goto(`file://${file}`);
      await page.waitForSelector('body[data-rendered="true"]', { timeout: 30_000 });
      const view = await page.evaluate(() => {
        const doc = (globalThis as Untyped).document;
        const box = doc.querySelector('#outcomes .scroll');
        const rows = doc.querySelectorAll('#outcomes-table tbody tr').length;
        const height = box.getBoundingClientRect().height;
        box.scrollTop = box.scrollHeight / 2;
        const head = doc.querySelector('#outcomes-table thead th.bar');
        const stuck = Math.abs(head.getBoundingClientRect().top - box.getBoundingClientRect().top) < 2;
        return {
          rows,
          height,
          stuck,
          axis: head.querySelector('.axis')?.textContent,
          dots: doc.querySelectorAll('#convergence').length,
        };
      });
      expect(view.rows).toBe(cells);
      expect(view.height).toBeLessThanOrEqual(760);
      expect(view.stuck, 'the header stays at the top of the scrolled table').toBe(true);
      expect(view.axis).toBe('050100%');
      expect(view.dots, 'no page-tall dot chart of 114 rows').toBe(0);
    } finally {
      await browser.close();
    }
  });
});
