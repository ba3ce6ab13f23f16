/**
 * @module
 * The report's per-cell (and per-group) view: one sortable table row per cell with
 * inline rate bars and their 95% Wilson whiskers. A chart of 100+ cells as facets was
 * ~2,600 px tall with its axis only at the bottom; a table row is one line, its header
 * (with each bar column's 0–100% scale) stays in view while the rows scroll under it,
 * and a click on a header sorts by that column.
 */
import type { RateSummary, RunsSummary } from '../sim/stats.js';
import { formatRate } from './format.js';

/** A measure shown as a bar column, with the colour the charts give it. */
interface _Measure {
  key: string;
  title: string;
  colour: string;
  of(s: RunsSummary): RateSummary;
}

/** In reading order: "in range" sits beside valid, so a rule's strictly invalid but in-range value reads as such. */
const MEASURES: readonly _Measure[] = [
  {
    key: 'valid',
    title: 'decided, honest agents agree on an honest initial value',
    colour: '#2a9d8f',
    of: (s) => s.outcomes.valid,
  },
  {
    key: 'in range',
    title: 'honest agents agree on a value within their initial min..max (range validity)',
    colour: '#57cc99',
    of: (s) => s.range_valid,
  },
  {
    key: 'invalid',
    title: 'decided on a value no honest agent started with (strict validity fails)',
    colour: '#e76f51',
    of: (s) => s.outcomes.invalid,
  },
  { key: 'none', title: 'decided while the honest agents differ', colour: '#f4a261', of: (s) => s.outcomes.none },
  { key: 'timeout', title: 'no decision in R rounds', colour: '#8d99ae', of: (s) => s.outcomes.timeout },
  {
    key: 'escalated',
    title: 'the circuit breaker stopped the game over its budget',
    colour: '#9b5de5',
    of: (s) => s.outcomes.escalated,
  },
  {
    key: 'no consensus',
    title: 'none + timeout, the paper\'s "no consensus"',
    colour: '#3d405b',
    of: (s) => s.no_consensus,
  },
  {
    key: 'converged',
    title: 'in some round every honest agent held the same honest initial value',
    colour: '#468faf',
    of: (s) => s.convergence,
  },
];

export interface CellTableOptions {
  /** Show range validity (when a decision rule is among the cells). */
  inRange: boolean;
}

/** The measures worth a column: those that occur in some row (in range only beside a rule). */
export function shownMeasures(rows: readonly RunsSummary[], options: CellTableOptions): string[] {
  return MEASURES.filter((m) =>
    m.key === 'in range'
      ? options.inRange
      : m.key === 'valid' || m.key === 'invalid' || rows.some((r) => m.of(r).count > 0),
  ).map((m) => m.key);
}

/** The rate of one measure (a key of `shownMeasures`) of a summary. */
export function measureRate(key: string, s: RunsSummary): RateSummary {
  const m = MEASURES.find((x) => x.key === key);
  if (!m) throw new Error(`unknown measure ${key}`);
  return m.of(s);
}

const _pct = (x: number) => `${+(x * 100).toFixed(2)}%`;

function _bar(m: _Measure, s: RunsSummary): string {
  const r = m.of(s);
  const text = formatRate(r);
  const tip = `${m.key}: ${text.replace(' (', '% (95% CI ')}% — ${r.count} of ${s.runs} runs`;
  return `<td class="bar" data-v="${r.rate}" title="${escapeHtml(tip)}"><span class="track"><span class="fill" style="width:${_pct(r.rate)};background:${m.colour}"></span><span class="ci" style="left:${_pct(r.ci.low)};width:${_pct(r.ci.high - r.ci.low)}"></span></span><span class="num">${escapeHtml(text.slice(0, text.indexOf(' ')))}</span></td>`;
}

/** A sortable table: a label column, runs, a bar column per shown measure, rounds and first round. */
export function renderCellTable(
  id: string,
  label: string,
  rows: readonly { label: string; summary: RunsSummary }[],
  options: CellTableOptions,
): string {
  const measures = MEASURES.filter((m) =>
    shownMeasures(
      rows.map((r) => r.summary),
      options,
    ).includes(m.key),
  );
  const axis = '<span class="axis"><span>0</span><span>50</span><span>100%</span></span>';
  const head = [
    `<th data-sort="text">${escapeHtml(label)}</th>`,
    '<th data-sort="num" title="runs in the cell">runs</th>',
    ...measures.map(
      (m) => `<th class="bar" data-sort="num" title="${escapeHtml(m.title)}">${escapeHtml(m.key)}${axis}</th>`,
    ),
    '<th data-sort="num" title="mean rounds played">rounds</th>',
    '<th data-sort="num" title="mean first round at which the run converged, over the runs that did">first round</th>',
  ].join('');
  const body = rows
    .map(({ label: l, summary: s }, i) => {
      const first = s.convergence.mean_round;
      return `<tr data-order="${i}"><td>${escapeHtml(l)}</td><td data-v="${s.runs}">${s.runs}</td>${measures.map((m) => _bar(m, s)).join('')}<td data-v="${s.rounds.mean}">${s.rounds.mean.toFixed(1)}</td><td data-v="${first ?? -1}">${first === null ? '–' : first.toFixed(1)}</td></tr>`;
    })
    .join('\n');
  return `<div class="scroll"><table class="cells" id="${id}-table" data-sortable data-measures="${escapeHtml(measures.map((m) => m.key).join(','))}"><thead><tr>${head}</tr></thead><tbody>\n${body}\n</tbody></table></div>`;
}

export const CELL_TABLE_STYLE = `.scroll{max-height:720px;overflow:auto;border:1px solid #e4e4e4}
table.cells{margin:0;width:100%}table.cells thead th{position:sticky;top:0;background:#fafafa;cursor:pointer;vertical-align:bottom;z-index:1;box-shadow:0 1px 0 #ccc}
table.cells th[data-sorted]::after{content:attr(data-sorted);color:#888;padding-left:2px}
table.cells td.bar{white-space:nowrap;text-align:left}.track{display:inline-block;position:relative;width:64px;height:10px;background:#f0f0f0;vertical-align:middle}
.fill{position:absolute;left:0;top:0;bottom:0}.ci{position:absolute;top:4px;height:2px;background:#222}.num{display:inline-block;width:2.6em;text-align:right;font-variant-numeric:tabular-nums}
table.cells th.bar{text-align:left}.axis{display:flex;justify-content:space-between;width:64px;font-weight:normal;color:#888;font-size:10px}`;

/** Text safe inside HTML elements and attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}
