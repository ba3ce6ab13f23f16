/**
 * @module
 * Terminal tables for sweep summaries: one row per cell, each outcome as a rate with
 * its 95% Wilson interval.
 */
import type { CellSummary, RateSummary } from '../sim/stats.js';

const _pct = (x: number) => `${Math.round(x * 100)}`;
const _rate = (r: RateSummary) => `${_pct(r.rate)}% (${_pct(r.ci.low)}–${_pct(r.ci.high)})`;

/** Renders aligned columns; the first column is left-aligned, the rest right-aligned. */
export function renderTable(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]) =>
    cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ').trimEnd();
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

export function renderOutcomeTable(cells: readonly CellSummary[]): string {
  // Columns that would be all zero for a plain sweep appear only when they say something.
  const escalated = cells.some((c) => c.outcomes.escalated.count > 0);
  const ruled = cells.some((c) => c.cell.includes('rule:') || c.cell.includes('hybrid:'));
  const header = ['cell', 'runs', 'valid', 'invalid', 'none', 'timeout', ...(escalated ? ['escalated'] : []), ...(ruled ? ['in range'] : []), 'rounds mean', 'median'];
  const rows = cells.map((c) => [
    c.cell,
    String(c.runs),
    _rate(c.outcomes.valid),
    _rate(c.outcomes.invalid),
    _rate(c.outcomes.none),
    _rate(c.outcomes.timeout),
    ...(escalated ? [_rate(c.outcomes.escalated)] : []),
    ...(ruled ? [_rate(c.rangeValid)] : []),
    c.rounds.mean.toFixed(1),
    String(c.rounds.median),
  ]);
  const notes = ['Rates in % with 95% Wilson intervals. valid: decided, honest agents agree on an honest initial value (strict validity).'];
  if (ruled) notes.push('in range: honest agents agree on a value within their initial min..max (range validity, what a trimmed mean guarantees).');
  if (escalated) notes.push('escalated: the circuit breaker stopped a game over its budget.');
  return `${renderTable(header, rows)}\n${notes.join('\n')}`;
}
