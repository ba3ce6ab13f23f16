/**
 * @module
 * The HTML report: one self-contained file (Observable Plot and d3 inlined, no
 * network) with the outcome and "no consensus" rates per cell (and per pooled group
 * when asked), convergence, trajectories, stop votes, rounds and a decision-mode
 * comparison — each chart with its table underneath, and the cell settings and tool
 * versions in the footer.
 */
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { WitnessError } from '../core/errors.js';
import type { RunRecord } from '../sim/experiment/record.js';
import { drawReport } from './html-client.js';
import { buildReportData, type ReportData } from './html-data.js';
import { formatPercent } from './format.js';
import { CELL_TABLE_STYLE, escapeHtml as _esc, renderCellTable, shownMeasures } from './html-table.js';
import { hasLlmMetrics, LLM_CAPTION, LLM_HEADER, llmRow } from './llm-metrics.js';
import { PAIRED_CAPTION, PAIRED_HEADER, pairedRows } from './paired-table.js';
import { groupLabel, type PoolField } from './pool.js';
import { PairedRuns } from '../sim/paired.js';

/** Above this many cells the per-cell convergence dots would be a page tall: the table has the figures. */
const _MAX_DOT_ROWS = 40;

export interface HtmlReportOptions {
  title?: string;
  /** Where the results came from, shown in the footer. */
  source?: string;
  /** Version of Witness, shown in the footer. */
  version?: string;
  /** Also show runs pooled across cells by these fields (`witness report --by`). */
  by?: readonly PoolField[];
}

const _require = createRequire(import.meta.url);

/** A browser bundle shipped inside a dependency, and the dependency's version. */
function _asset(pkg: string, file: string): { code: string; version: string } {
  // Walk up from the package's entry point: its exports do not expose package.json.
  let dir = dirname(_require.resolve(pkg));
  while (
    !existsSync(join(dir, 'package.json')) ||
    (JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: string }).name !== pkg
  ) {
    const up = dirname(dir);
    if (up === dir)
      throw new WitnessError('INTERNAL', `Cannot find the ${pkg} package for the HTML report; reinstall with npm ci.`);
    dir = up;
  }
  const { version } = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { version: string };
  return { code: readFileSync(join(dir, file), 'utf8'), version };
}

export function renderHtmlReport(records: readonly RunRecord[], options: HtmlReportOptions = {}): string {
  const data = buildReportData(records, { title: options.title ?? 'Witness consensus report', by: options.by });
  const d3 = _asset('d3', 'dist/d3.min.js');
  const plot = _asset('@observablehq/plot', 'dist/plot.umd.min.js');
  const versions = `Witness ${options.version ?? '?'} · Node ${process.version} · Observable Plot ${plot.version} · d3 ${d3.version}`;
  // `<` is escaped so no string in the data can close the script element.
  const json = JSON.stringify(data).replace(/</g, '\\u003c');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${_esc(data.title)}</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>${STYLE}</style></head>
<body>
<header><h1>${_esc(data.title)}</h1><p>${data.runs} runs in ${data.cells.length} cells${options.source ? ` from <code>${_esc(options.source)}</code>` : ''}${data.common ? `; every cell: <code>${_esc(data.common)}</code>` : ''}. An agent's claim is not evidence: every number here comes from the simulator's own game state.</p></header>
${data.pooled ? _pooledSection(data) : ''}
${_cellsSection(data)}
${_convergenceSection(data)}
${data.trajectories.length ? _figure('trajectories', "Honest agents' values by round", 'The longest run of each of a few cells: one line per honest agent.', _trajectoryTable(data)) : ''}
${data.votes.length ? _figure('votes', 'Stop votes by round', 'Stop votes per round for the same runs; the dashed line is the 2N/3 threshold.', _votesTable(data)) : ''}
${_figure('rounds', 'Rounds to decision', 'How many rounds runs took, coloured by outcome.', _roundsTable(data))}
${_pairedSection(records)}
${_llmSection(data)}
${data.modes.length ? _figure('modes', 'Decision modes compared', _modesCaption(data), _modesTable(data)) : ''}
<footer>${_settingsSection(data)}<p>${_esc(versions)}</p></footer>
<script>${d3.code}</script>
<script>${plot.code}</script>
<script type="application/json" id="report-data">${json}</script>
<script>
var __name = function (f) { return f; };
(${drawReport.toString()})(JSON.parse(document.getElementById('report-data').textContent), Plot, document);
</script>
</body></html>
`;
}

const STYLE = `body{font:14px/1.45 system-ui,sans-serif;margin:2rem auto;max-width:1160px;color:#222;padding:0 1rem}
h1{font-size:1.6rem}h2{font-size:1.15rem;margin-top:2.2rem}figure{margin:0}
table{border-collapse:collapse;margin:.6rem 0 1rem;font-size:12px}td,th{border-bottom:1px solid #e4e4e4;padding:2px 8px;text-align:right}
td:first-child,th:first-child{text-align:left}details{margin-bottom:1rem}pre{background:#f6f6f6;padding:.6rem;overflow:auto;max-height:20rem;font-size:11px}
p.caption{color:#444;font-size:13px;margin:.3rem 0 .6rem}h3{font-size:1rem}footer{color:#555;border-top:1px solid #ddd;margin-top:2rem}
${CELL_TABLE_STYLE}`;

function _figure(id: string, title: string, caption: string, table: string): string {
  return `<section><h2>${_esc(title)}</h2><figure id="${id}" data-chart="${id}"><div class="chart"></div><figcaption>${_esc(caption)}</figcaption></figure>
<details><summary>Table</summary>${table}</details></section>`;
}

function _table(header: readonly string[], rows: readonly (readonly (string | number)[])[]): string {
  const th = header.map((h) => `<th>${_esc(h)}</th>`).join('');
  const body = rows.map((r) => `<tr>${r.map((c) => `<td>${_esc(String(c))}</td>`).join('')}</tr>`).join('\n');
  return `<table><thead><tr>${th}</tr></thead><tbody>${body}</tbody></table>`;
}

const _pct = formatPercent;

function _outcomeTable(data: ReportData): string {
  return _table(
    ['cell', 'outcome', 'runs', 'count', 'rate', '95% CI'],
    data.outcomes.map((o) => [o.cell, o.outcome, o.runs, o.count, _pct(o.rate), `${_pct(o.low)}–${_pct(o.high)}`]),
  );
}

function _pooledTable(data: ReportData): string {
  const pooled = data.pooled!;
  const rate = (r: { rate: number; ci: { low: number; high: number } }) =>
    `${_pct(r.rate)} (${_pct(r.ci.low)}–${_pct(r.ci.high)})`;
  return _table(
    ['group', 'runs', 'valid', 'invalid', 'none', 'timeout', 'no_consensus', 'converged', 'first round mean', 'median'],
    pooled.groups.map((g) => {
      const o = g.outcomes;
      const c = g.convergence;
      return [
        groupLabel(g.group),
        g.runs,
        rate(o.valid),
        rate(o.invalid),
        rate(o.none),
        rate(o.timeout),
        rate(g.no_consensus),
        c.count,
        c.mean_round?.toFixed(1) ?? '-',
        c.median_round ?? '-',
      ];
    }),
  );
}

const _inRange = (data: ReportData) =>
  data.cells.some((c) => /(^| )(rule|hybrid):/.test(c.cell)) ||
  data.common.includes('rule:') ||
  data.common.includes('hybrid:');

/** What each column of the rates table means; the caption explains only the columns shown. */
const _MEASURE_NOTES: Record<string, string> = {
  valid: 'valid: decided, honest agents agree on an honest initial value.',
  'in range':
    'in range: they agree on a value within their initial min..max — a rule that averages (trimmed mean, median) can decide a value no agent started with, strictly invalid yet in range, with no Byzantine agent at all.',
  none: 'none: decided while the honest agents differ.',
  timeout: 'timeout: no decision in R rounds.',
  escalated: 'escalated: the circuit breaker stopped the game over its budget.',
  'no consensus': "no consensus = none + timeout, the paper's measure.",
  converged: 'converged: in some round every honest agent held the same honest initial value.',
};

/** The caption of a rates table: how to read it, then each shown column, in table order. */
export function ratesCaption(shown: readonly string[]): string {
  return [
    'Share of runs with 95% Wilson intervals (bar: rate, black line: interval; hover for counts); click a column to sort.',
    ...shown.map((m) => _MEASURE_NOTES[m]).filter(Boolean),
  ].join(' ');
}

function _cellsSection(data: ReportData): string {
  const rows = data.cells.map((c) => ({ label: c.cell, summary: c }));
  const options = { inRange: _inRange(data) };
  const caption = ratesCaption(shownMeasures(data.cells, options));
  return `<section id="outcomes"><h2>Outcome rates per cell</h2>${renderCellTable('outcomes', 'cell', rows, options)}<p class="caption">${_esc(caption)}</p>
<details><summary>Every rate with its interval, as a list</summary>${_outcomeTable(data)}</details></section>`;
}

function _pooledSection(data: ReportData): string {
  const pooled = data.pooled!;
  const rows = pooled.groups.map((g) => ({ label: groupLabel(g.group), summary: g }));
  const options = { inRange: _inRange(data) };
  const caption = ratesCaption(shownMeasures(pooled.groups, options));
  return `<section id="pooled"><h2>${_esc(`Pooled by ${pooled.by.join(', ')}`)}</h2>${renderCellTable('pooled', 'group', rows, options)}<p class="caption">Runs of all cells with the same values of these fields, pooled. ${_esc(caption)}</p>
<details><summary>Table</summary>${_pooledTable(data)}</details></section>`;
}

/** Cells that played the same games, each against its base (paired-table.ts); nothing when there are none. */
function _pairedSection(records: readonly RunRecord[]): string {
  const paired = new PairedRuns();
  for (const r of records) paired.add(r);
  const comparisons = paired.comparisons();
  if (comparisons.length === 0) return '';
  return `<section id="paired"><h2>Paired comparisons</h2><p class="caption">Each cell against the base that played the same games (seeds, initial values, Byzantine seats): the difference of the valid rates over the same runs. ${_esc(PAIRED_CAPTION)}</p><div class="scroll">${_table(PAIRED_HEADER, pairedRows(comparisons))}</div></section>`;
}

function _modesCaption(data: ReportData): string {
  const base =
    'Rates per decision mode against the number and strategy of Byzantine agents, with 95% Wilson intervals.';
  const inRange = data.modes.some((m) => m.measure === 'in range');
  return inRange
    ? `${base} in range: the honest agents agree on a value within their initial min..max, what a trimmed mean or median guarantees even when the value is no agent's initial one (then it counts as invalid).`
    : base;
}

/** LLM metrics per cell; nothing for a sweep of rule-based agents with no invalid answer. */
function _llmSection(data: ReportData): string {
  if (!hasLlmMetrics(data.llm.map((l) => l.metrics))) return '';
  return `<section id="llm"><h2>LLM metrics per cell</h2><div class="scroll">${_table(
    ['cell', ...LLM_HEADER],
    data.llm.map((l) => [l.cell, ...llmRow(l.metrics)]),
  )}</div><p class="caption">${_esc(LLM_CAPTION)}</p></section>`;
}

function _settingsSection(data: ReportData): string {
  const { common, differing, cells } = data.settings;
  const shared = _table(
    ['setting', 'every cell'],
    common.map(([k, v]) => [k, v]),
  );
  const per = differing.length
    ? `<h3>Per cell, what differs</h3><div class="scroll">${_table(
        ['cell', ...differing],
        cells.map((c) => [c.cell, ...c.values]),
      )}</div>`
    : '';
  return `<h2>Settings</h2>${shared}${per}`;
}

function _convergenceSection(data: ReportData): string {
  const caption =
    "Where each run first converged: the first round at which every honest agent held the same honest initial value (the reference's convergence_speed); dot size = runs, black tick = mean over the runs that converged.";
  const table = _table(
    ['cell', 'runs', 'converged', 'rate', '95% CI', 'first round mean', 'median', 'mean over valid runs'],
    data.convergence.map((c) => [
      c.cell,
      c.runs,
      c.converged,
      _pct(c.rate),
      `${_pct(c.low)}–${_pct(c.high)}`,
      c.mean?.toFixed(1) ?? '-',
      c.median ?? '-',
      c.validMean?.toFixed(1) ?? '-',
    ]),
  );
  if (data.firstRounds.length && data.cells.length <= _MAX_DOT_ROWS)
    return _figure('convergence', 'Convergence', caption, table);
  if (data.firstRounds.length)
    return `<section><h2>Convergence</h2><p>${data.cells.length} cells: the share of runs that converged and their mean first round are columns of the table of outcome rates above, sortable.</p><details><summary>Table</summary>${table}</details></section>`;
  return `<section><h2>Convergence</h2><p>No run converged: in no round did every honest agent hold the same honest initial value.</p>${table}</section>`;
}

function _trajectoryTable(data: ReportData): string {
  return _table(
    ['run', 'agent', 'round', 'value'],
    data.trajectories.map((t) => [t.run, t.agent, t.round, t.value]),
  );
}

function _votesTable(data: ReportData): string {
  return _table(
    ['run', 'round', 'stop votes', 'threshold'],
    data.votes.map((v) => [v.run, v.round, v.stop, v.threshold]),
  );
}

function _roundsTable(data: ReportData): string {
  return _table(
    ['cell', 'rounds mean', 'median', 'runs'],
    data.cells.map((c) => [c.cell, c.rounds.mean.toFixed(1), c.rounds.median, c.runs]),
  );
}

function _modesTable(data: ReportData): string {
  return _table(
    ['mode', 'strategy', 'b', 'measure', 'rate', '95% CI'],
    data.modes.map((m) => [m.mode, m.strategy, m.byzantine, m.measure, _pct(m.rate), `${_pct(m.low)}–${_pct(m.high)}`]),
  );
}
