import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildReportData, settingText } from '../../src/report/html-data.js';
import { ratesCaption, renderHtmlReport } from '../../src/report/html.js';
import type { RunRecord } from '../../src/sim/experiment/record.js';
import { preset } from '../../src/sim/experiment/presets.js';
import { runExperiment } from '../../src/sim/experiment/run.js';
import { parseExperiment } from '../../src/sim/experiment/schema.js';
import { CHROMIUM, hasChromium, openPage } from '../support/browser.js';

// biome-ignore lint/suspicious/noExplicitAny: the DOM and playwright's page, untyped in this Node project (no DOM lib).
type Untyped = any;

if (!hasChromium)
  console.warn(`skipping the browser test of the report's axes: ${CHROMIUM} is missing (apt-get install chromium)`);
const outDir = join(import.meta.dirname, '..', '..', 'test-output');

let smoke: RunRecord[];
let short: RunRecord[];
beforeAll(async () => {
  smoke = (await runExperiment({ experiment: parseExperiment(preset('smoke')) })).records;
  // Games of two rounds: where a round axis read `1 1 1 2 2 2` and stop votes had 0.5 ticks.
  short = (
    await runExperiment({
      experiment: parseExperiment({
        name: 'short',
        runs: 3,
        grid: { honest: 3, byzantine: [0, 1], byzantineStrategy: 'split', honestPolicy: 'plurality', rounds: 3 },
      }),
    })
  ).records;
});

describe('settings as plain text', () => {
  it('shows strings without quotes, null as none, a range as low–high and an object as key value', () => {
    expect(settingText('policy')).toBe('policy');
    expect(settingText(null)).toBe('none');
    expect(settingText([0, 50])).toBe('0–50');
    expect(settingText({ rounds: 30 })).toBe('rounds 30');
    expect(settingText({ rounds: 30, tokens: 100 })).toBe('rounds 30, tokens 100');
    expect(settingText(['a', 'b', 'c'])).toBe('a, b, c');
  });
  it('never shows a JSON literal for any setting value', () => {
    const json = fc.letrec((tie) => ({
      value: fc.oneof(
        { depthSize: 'small' },
        fc.constant(null),
        fc.boolean(),
        fc.integer(),
        fc.stringMatching(/^[a-z:-]{1,8}$/),
        fc.array(tie('value'), { maxLength: 3 }),
        fc.dictionary(fc.stringMatching(/^[a-z]{1,6}$/), tie('value'), { maxKeys: 3 }),
      ),
    })).value;
    fc.assert(fc.property(json, (v) => !/["{}]|\bnull\b/.test(settingText(v))));
  });
  it('has no quoted strings or null in the settings of the smoke sweep', () => {
    const { settings } = buildReportData(smoke, { title: 't' });
    const texts = [...settings.common.map(([, v]) => v), ...settings.cells.flatMap((c) => c.values)];
    for (const t of texts) expect(t).not.toMatch(/["{}]|null/);
    expect(texts).toContain('none');
  });
});

describe('captions describe only the columns shown', () => {
  it('says nothing of in range, none, timeout or escalated when the table has no such column', () => {
    const caption = ratesCaption(['valid', 'invalid', 'converged']);
    expect(caption).toContain('valid: decided');
    expect(caption).toContain('converged:');
    for (const absent of ['in range:', 'none:', 'timeout:', 'escalated:', 'no consensus'])
      expect(caption).not.toContain(absent);
  });
  it('in the smoke report, whose sweep has no decision rule', () => {
    const html = renderHtmlReport(smoke, { title: 'T' });
    const caption = /<section id="outcomes">.*?<p class="caption">(.*?)<\/p>/s.exec(html)![1]!;
    expect(caption).not.toContain('in range');
    expect(caption).toContain('timeout: no decision in R rounds.');
  });
});

/** Every axis of every chart: its tick labels. */
async function axes(page: Untyped): Promise<{ chart: string; axis: string; labels: string[] }[]> {
  return page.evaluate(() =>
    [...(globalThis as Untyped).document.querySelectorAll('figure[data-chart]')].flatMap((f: Untyped) =>
      [...f.querySelectorAll('g[aria-label$="tick label"]')].map((g: Untyped) => ({
        chart: f.id,
        axis: g.getAttribute('aria-label'),
        labels: [...g.querySelectorAll('text')].map((t: Untyped) => t.textContent),
      })),
    ),
  );
}

describe.skipIf(!hasChromium)('axes of a small sweep in headless Chromium', () => {
  for (const [name, of] of [
    ['smoke', () => smoke],
    ['two-round games', () => short],
  ] as const) {
    it(`${name}: rounds and counts have whole ticks, none repeated within a facet`, async () => {
      mkdirSync(outDir, { recursive: true });
      const file = join(outDir, `report-axes-${name.replace(/\W+/g, '-')}.html`);
      writeFileSync(file, renderHtmlReport(of(), { title: name }));
      const { page, errors, close } = await openPage(`file://${file}`, 'body[data-rendered="true"]');
      try {
        expect(errors).toEqual([]);
        const found = await axes(page);
        const numeric = found.filter(
          (a) =>
            !(a.chart === 'convergence' && a.axis.startsWith('y')) &&
            !(a.chart === 'modes' && a.axis.startsWith('y')) &&
            !a.axis.startsWith('fy') &&
            !a.axis.startsWith('fx'),
        );
        expect(numeric.map((a) => a.chart)).toEqual(
          expect.arrayContaining(['convergence', 'trajectories', 'votes', 'rounds']),
        );
        for (const a of numeric) {
          for (const label of a.labels) expect(label, `${a.chart} ${a.axis}: ${a.labels.join(' ')}`).toMatch(/^−?\d+$/);
          // One axis of a facet: Plot repeats the axis per facet, each with the same ticks in order.
          const ticks = a.labels.map(Number);
          const runs = ticks.filter((t, i) => i > 0 && t <= ticks[i - 1]!).length;
          expect(runs, `${a.chart} ${a.axis}: ${a.labels.join(' ')}`).toBeLessThanOrEqual(ticks.length / 2);
          for (let i = 1; i < ticks.length; i++)
            if (ticks[i]! > ticks[i - 1]!) expect(ticks[i]! - ticks[i - 1]!).toBeGreaterThanOrEqual(1);
        }
        const repeated = numeric
          .filter((a) => a.chart === 'votes' || a.chart === 'rounds')
          .filter((a) => new Set(a.labels).size !== a.labels.length);
        expect(repeated, 'no repeated label on the votes and rounds axes').toEqual([]);
        await page.screenshot({ path: file.replace(/\.html$/, '.png'), fullPage: true });
      } finally {
        await close();
      }
    });
  }
});
