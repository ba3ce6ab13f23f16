/**
 * @module
 * Terminal tables for sweep summaries: one row per cell (or per pooled group), each
 * outcome and "no consensus" as a rate with its 95% Wilson interval, rounds, and
 * convergence.
 */
import type { CellSummary, RateSummary, RunsSummary } from '../sim/stats.js';
import type { GroupSummary, PoolField } from './pool.js';

const _pct = (x: number) => `${Math.round(x * 100)}`;
const _rate = (r: RateSummary) => `${_pct(r.rate)}% (${_pct(r.ci.low)}–${_pct(r.ci.high)})`;
const _round = (x: number) => String(Math.round(x * 10) / 10);

/** Renders aligned columns; the first column is left-aligned, the rest right-aligned. */
export function renderTable(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]) =>
    cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ').trimEnd();
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

/** One row per cell. */
export function renderOutcomeTable(cells: readonly CellSummary[]): string {
  const ruled = cells.some((c) => c.cell.includes('rule:') || c.cell.includes('hybrid:'));
  return _render(['cell'], cells.map((c) => [c.cell]), cells, ruled);
}

export interface GroupTableOptions {
  /** Show the range-validity column (default: when a group's `decide` is a rule). */
  inRange?: boolean;
}

/** One row per pooled group, one leading column per pooled field. */
export function renderGroupTable(groups: readonly GroupSummary[], fields: readonly PoolField[], options: GroupTableOptions = {}): string {
  const inRange = options.inRange ?? groups.some((g) => typeof g.group.decide === 'string' && g.group.decide !== 'vote');
  const lead = groups.map((g) => fields.map((f) => String(g.group[f] ?? 'none')));
  return _render(fields, lead, groups, inRange);
}

function _render(leadHeader: readonly string[], lead: readonly (readonly string[])[], rows: readonly RunsSummary[], inRange: boolean): string {
  // Columns that would be all zero for a plain sweep appear only when they say something.
  const escalated = rows.some((c) => c.outcomes.escalated.count > 0);
  const header = [
    ...leadHeader,
    'runs',
    'valid',
    'invalid',
    'none',
    'timeout',
    ...(escalated ? ['escalated'] : []),
    'no consensus',
    ...(inRange ? ['in range'] : []),
    'rounds mean',
    'median',
    'converged',
    'first round',
  ];
  const body = rows.map((c, i) => [
    ...lead[i]!,
    String(c.runs),
    _rate(c.outcomes.valid),
    _rate(c.outcomes.invalid),
    _rate(c.outcomes.none),
    _rate(c.outcomes.timeout),
    ...(escalated ? [_rate(c.outcomes.escalated)] : []),
    _rate(c.no_consensus),
    ...(inRange ? [_rate(c.range_valid)] : []),
    c.rounds.mean.toFixed(1),
    String(c.rounds.median),
    String(c.convergence.count),
    c.convergence.mean_round === null ? '-' : `${_round(c.convergence.mean_round)} / ${c.convergence.median_round}`,
  ]);
  const notes = [
    'Rates in % with 95% Wilson intervals. valid: decided, honest agents agree on an honest initial value (strict validity). no consensus: none + timeout.',
    'converged: runs in which, in some round, every honest agent held the same honest initial value; first round: mean / median of the first such round over those runs (the reference\'s convergence_speed).',
  ];
  if (inRange) notes.push('in range: honest agents agree on a value within their initial min..max (range validity, what a trimmed mean guarantees).');
  if (escalated) notes.push('escalated: the circuit breaker stopped a game over its budget.');
  return `${renderTable(header, body)}\n${notes.join('\n')}`;
}
