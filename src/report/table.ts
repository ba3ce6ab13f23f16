/**
 * @module
 * Terminal tables for sweep summaries: one row per cell (or per pooled group), each
 * outcome as a rate with its 95% Wilson interval, rounds, and convergence. By default a
 * table fits 120 columns: what every cell shares (settings, runs per cell) is printed
 * once above it, rows keep only what differs, and none + timeout are one "no consensus"
 * column; `wide` prints full labels and every column.
 */
import type { CellSummary, RunsSummary } from '../sim/stats.js';
import { formatRate } from './format.js';
import { shortLabels } from './labels.js';
import type { GroupSummary, PoolField } from './pool.js';

const _round = (x: number) => String(Math.round(x * 10) / 10);

/** Renders aligned columns; the first column is left-aligned, the rest right-aligned. */
export function renderTable(header: readonly string[], rows: readonly (readonly string[])[], leftColumns = 1): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((c, i) => (i < leftColumns ? c.padEnd(widths[i]!) : c.padStart(widths[i]!)))
      .join('  ')
      .trimEnd();
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

export interface TableOptions {
  /** Full cell labels and every column (none and timeout apart, median rounds, first round). */
  wide?: boolean;
}

/** One row per cell. */
export function renderOutcomeTable(cells: readonly CellSummary[], options: TableOptions = {}): string {
  const inRange = cells.some((c) => /(^| )(rule|hybrid):/.test(c.cell));
  if (options.wide)
    return _render(
      ['cell'],
      cells.map((c) => [c.cell]),
      cells,
      { inRange, wide: true },
    );
  const { short, common } = shortLabels(cells.map((c) => c.cell));
  return _render(
    ['cell'],
    cells.map((c) => [short.get(c.cell) ?? c.cell]),
    cells,
    { inRange, wide: false, common },
  );
}

export interface GroupTableOptions extends TableOptions {
  /** Show the range-validity column (default: when a group's `decide` is a rule). */
  inRange?: boolean;
}

/** One row per pooled group, one leading column per pooled field. */
export function renderGroupTable(
  groups: readonly GroupSummary[],
  fields: readonly PoolField[],
  options: GroupTableOptions = {},
): string {
  const inRange =
    options.inRange ?? groups.some((g) => typeof g.group.decide === 'string' && g.group.decide !== 'vote');
  const lead = groups.map((g) => fields.map((f) => String(g.group[f] ?? 'none')));
  return _render(fields, lead, groups, { inRange, wide: options.wide ?? false });
}

interface _Layout {
  inRange: boolean;
  wide: boolean;
  /** Words every cell label shares, printed once above the table. */
  common?: string;
}

interface _Column {
  header: string;
  show: boolean;
  cell(s: RunsSummary): string;
}

function _columns(rows: readonly RunsSummary[], { inRange, wide }: _Layout, sameRuns: boolean): _Column[] {
  // Columns that would be all zero for a plain sweep appear only when they say something.
  const escalated = rows.some((c) => c.outcomes.escalated.count > 0);
  const columns: _Column[] = [
    { header: 'runs', show: wide || !sameRuns, cell: (c) => String(c.runs) },
    { header: 'valid', show: true, cell: (c) => formatRate(c.outcomes.valid) },
    // Beside valid: a rule's value can be strictly invalid and still in range.
    { header: 'in range', show: inRange, cell: (c) => formatRate(c.range_valid) },
    { header: 'invalid', show: true, cell: (c) => formatRate(c.outcomes.invalid) },
    { header: 'none', show: wide, cell: (c) => formatRate(c.outcomes.none) },
    { header: 'timeout', show: wide, cell: (c) => formatRate(c.outcomes.timeout) },
    { header: 'escalated', show: escalated, cell: (c) => formatRate(c.outcomes.escalated) },
    { header: 'no consensus', show: true, cell: (c) => formatRate(c.no_consensus) },
    { header: wide ? 'rounds mean' : 'rounds', show: true, cell: (c) => c.rounds.mean.toFixed(1) },
    { header: 'median', show: wide, cell: (c) => String(c.rounds.median) },
    { header: wide ? 'converged' : 'conv', show: true, cell: (c) => String(c.convergence.count) },
    {
      header: 'first round',
      show: wide,
      cell: (c) =>
        c.convergence.mean_round === null ? '-' : `${_round(c.convergence.mean_round)} / ${c.convergence.median_round}`,
    },
  ];
  return columns.filter((c) => c.show);
}

function _render(
  leadHeader: readonly string[],
  lead: readonly (readonly string[])[],
  rows: readonly RunsSummary[],
  layout: _Layout,
): string {
  const sameRuns = rows.length > 0 && rows.every((r) => r.runs === rows[0]!.runs);
  const columns = _columns(rows, layout, sameRuns);
  const header = [...leadHeader, ...columns.map((c) => c.header)];
  const body = rows.map((r, i) => [...lead[i]!, ...columns.map((c) => c.cell(r))]);
  const above: string[] = [];
  if (!layout.wide) {
    const shared = [sameRuns ? `${rows[0]!.runs} runs` : '', layout.common ?? ''].filter(Boolean).join(', ');
    if (shared) above.push(`every ${leadHeader.length === 1 && leadHeader[0] === 'cell' ? 'cell' : 'row'}: ${shared}`);
  }
  const notes = [
    'Rates in % with 95% Wilson intervals. valid: decided, honest agents agree on an honest initial value (strict).',
  ];
  notes.push(
    layout.wide
      ? 'no consensus: none + timeout.'
      : 'no consensus: none + timeout. rounds: mean rounds played. --wide: every column, full labels.',
  );
  notes.push(
    layout.wide
      ? "converged: runs in which, in some round, every honest agent held the same honest initial value; first round: mean / median\nof the first such round over those runs (the reference's convergence_speed)."
      : 'conv: runs that converged (in some round every honest agent held the same honest initial value).',
  );
  if (layout.inRange)
    notes.push(
      'in range: honest agents agree on a value within their initial min..max (range validity, what a trimmed mean guarantees).',
    );
  if (columns.some((c) => c.header === 'escalated'))
    notes.push('escalated: the circuit breaker stopped a game over its budget.');
  return [...above, renderTable(header, body, leadHeader.length), ...notes].join('\n');
}
