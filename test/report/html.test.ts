import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildReportData, shortLabels } from '../../src/report/html-data.js';
import { renderHtmlReport } from '../../src/report/html.js';
import type { RunRecord } from '../../src/sim/experiment/record.js';
import { runExperiment } from '../../src/sim/experiment/run.js';
import { parseExperiment } from '../../src/sim/experiment/schema.js';

const CHROMIUM = '/usr/bin/chromium';
const hasChromium = existsSync(CHROMIUM);
if (!hasChromium) console.warn(`skipping the browser test of the HTML report: ${CHROMIUM} is missing (apt-get install chromium; .ci/run installs it)`);
const outDir = join(import.meta.dirname, '..', '..', 'test-output');

let records: RunRecord[];
beforeAll(async () => {
  const experiment = parseExperiment({
    name: 'report-test',
    runs: 6,
    budget: { rounds: 8 },
    grid: { honest: 4, byzantine: [0, 1, 2], byzantineStrategy: ['split', 'stall'], honestPolicy: ['plurality', 'stubborn'], decide: ['vote', 'rule:median', 'hybrid:trimmed-mean'], after: 2, rounds: 10 },
  });
  records = (await runExperiment({ experiment })).records;
});

describe('HTML report data', () => {
  it('drops words every cell label shares and reports them once', () => {
    const { short, common } = shortLabels(['policy:plurality h=4 b=0 R=10', 'policy:plurality h=4 b=1:split R=10']);
    expect(common).toBe('policy:plurality h=4 R=10');
    expect([...short.values()]).toEqual(['b=0', 'b=1:split']);
  });
  it('has one outcome row per cell and outcome that occurs', () => {
    const data = buildReportData(records, { title: 't' });
    const outcomes = new Set(records.map((r) => r.outcome));
    expect(data.outcomes).toHaveLength(data.cells.length * outcomes.size);
    for (const row of data.outcomes) expect(row.low).toBeLessThanOrEqual(row.rate);
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

describe.skipIf(!hasChromium)('HTML report in headless Chromium', () => {
  it('draws every chart with the expected number of series and saves a screenshot', async () => {
    mkdirSync(outDir, { recursive: true });
    const file = join(outDir, 'report.html');
    writeFileSync(file, renderHtmlReport(records, { title: 'Browser test report', source: 'test' }));
    const data = buildReportData(records, { title: 't' });
    const browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-quic', '--no-first-run', '--disable-component-update', '--disable-sync'],
    });
    try {
      const page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
      const errors: string[] = [];
      page.on('pageerror', (e) => errors.push(e.message));
      await page.goto(`file://${file}`);
      await page.waitForSelector('body[data-rendered="true"]', { timeout: 30_000 });
      expect(errors).toEqual([]);
      const charts = await page.evaluate(() =>
        // biome-ignore lint/suspicious/noExplicitAny: runs in the page; the project compiles without DOM types.
        [...(globalThis as any).document.querySelectorAll('figure[data-chart]')].map((f: any) => {
          // A chart with a legend is a <figure> whose swatches are small svgs: take the chart's own, the largest.
          // biome-ignore lint/suspicious/noExplicitAny: DOM elements, untyped here.
          const svg: any = [...f.querySelectorAll('.chart svg')].sort((a: any, b: any) => b.querySelectorAll('*').length - a.querySelectorAll('*').length)[0];
          const colours = (selector: string, attr: string) =>
            // biome-ignore lint/suspicious/noExplicitAny: DOM elements, untyped here.
            new Set([...(svg?.querySelectorAll(selector) ?? [])].map((e: any) => e.getAttribute(attr)).filter((c: string | null) => c && c !== 'none')).size;
          return { id: f.id, marks: svg?.querySelectorAll('rect, path, circle, line').length ?? 0, bars: colours('g[aria-label="bar"] rect, g[aria-label="rect"] rect', 'fill'), lines: colours('g[aria-label="line"] path', 'stroke') };
        }),
      );
      expect(charts.map((c) => c.id)).toEqual(['outcomes', 'trajectories', 'votes', 'rounds', 'modes']);
      for (const c of charts) expect(c.marks, `${c.id} drew nothing`).toBeGreaterThan(0);
      const byId = Object.fromEntries(charts.map((c) => [c.id, c]));
      expect(byId.outcomes!.bars).toBe(new Set(data.outcomes.filter((o) => o.count > 0).map((o) => o.outcome)).size);
      expect(byId.rounds!.bars).toBe(new Set(data.rounds.map((r) => r.outcome)).size);
      expect(byId.trajectories!.lines).toBe(new Set(data.trajectories.map((t) => t.agent)).size);
      expect(byId.votes!.lines).toBe(new Set(data.votes.map((v) => v.run)).size);
      expect(byId.modes!.lines).toBe(new Set(data.modes.map((m) => m.mode)).size);
      await page.screenshot({ path: join(outDir, 'report.png'), fullPage: true });
      expect(existsSync(join(outDir, 'report.png'))).toBe(true);
    } finally {
      await browser.close();
    }
  });
});
