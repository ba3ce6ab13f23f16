/**
 * @module
 * The data behind the HTML report, computed from results records: per-cell outcome
 * and "no consensus" rates with Wilson intervals, convergence, a few runs'
 * trajectories and stop votes, the rounds distribution, a decision-mode comparison
 * and, when asked, groups pooled across cells. Plain JSON, so the page only draws.
 */
import type { RunRecord } from '../sim/experiment/record.js';
import {
  type CellSummary,
  convergenceRound,
  GroupedSummaries,
  OUTCOMES,
  type RunsSummary,
  summarizeCells,
} from '../sim/stats.js';
import { shortLabels } from './labels.js';
import { GroupedLlmMetrics, type LlmMetrics } from './llm-metrics.js';
import { type GroupSummary, groupLabel, type PoolField, poolRuns } from './pool.js';

export { shortLabels } from './labels.js';

export interface OutcomeRow {
  cell: string;
  outcome: string;
  rate: number;
  low: number;
  high: number;
  count: number;
  runs: number;
}

export interface TrajectoryPoint {
  run: string;
  agent: string;
  round: number;
  value: number;
}

export interface VotePoint {
  run: string;
  round: number;
  stop: number;
  threshold: number;
}

export interface RoundsPoint {
  cell: string;
  outcome: string;
  rounds: number;
}

/** Where a run first converged (all honest agents on one honest initial value). */
export interface ConvergencePoint {
  cell: string;
  round: number;
}

export interface ConvergenceRow {
  cell: string;
  runs: number;
  converged: number;
  rate: number;
  low: number;
  high: number;
  mean: number | null;
  median: number | null;
  /** Mean first round over the valid runs only, as the reference's summaries average it. */
  validMean: number | null;
}

export interface PooledData {
  by: PoolField[];
  groups: GroupSummary[];
  /** The same rows as `outcomes`, with the group's label in `cell`. */
  outcomes: OutcomeRow[];
}

export interface ModeRow {
  mode: string;
  strategy: string;
  byzantine: number;
  measure: 'valid' | 'in range' | 'escalated' | 'timeout';
  rate: number;
  low: number;
  high: number;
}

export interface ReportData {
  title: string;
  runs: number;
  /** Words every cell label shares, left out of the chart labels (shown once instead). */
  common: string;
  cells: CellSummary[];
  outcomes: OutcomeRow[];
  convergence: ConvergenceRow[];
  firstRounds: ConvergencePoint[];
  pooled: PooledData | null;
  trajectories: TrajectoryPoint[];
  votes: VotePoint[];
  rounds: RoundsPoint[];
  modes: ModeRow[];
  /** The cell settings: what every cell shares once, and per cell only what differs. */
  settings: Settings;
  /** LLM metrics per cell (short label), in cell order. */
  llm: { cell: string; metrics: LlmMetrics }[];
}

export interface Settings {
  /** Settings every cell has with the same value, as `[key, value as text]`. */
  common: [string, string][];
  /** The settings whose values differ between cells. */
  differing: string[];
  /** Per cell (short label), the values of the differing settings (`–` where a cell has none). */
  cells: { cell: string; values: string[] }[];
}

export interface ReportDataOptions {
  title: string;
  /** How many runs to draw trajectories for (default 6). */
  trajectories?: number;
  /** Also pool runs across cells by these fields. */
  by?: readonly PoolField[];
}

export function buildReportData(records: readonly RunRecord[], options: ReportDataOptions): ReportData {
  const { short, common } = shortLabels([...new Set(records.map((r) => r.cell))]);
  records = records.map((r) => ({ ...r, cell: short.get(r.cell) ?? r.cell }));
  const cells = summarizeCells(records);
  const outcomes = _outcomeRows(cells.map((c) => [c.cell, c]));
  const chosen = chooseRuns(records, options.trajectories ?? 6);
  return {
    title: options.title,
    runs: records.length,
    common,
    cells,
    outcomes,
    convergence: cells.map(_convergenceRow),
    firstRounds: records.flatMap((r) => {
      const round = convergenceRound(r);
      return round === null ? [] : [{ cell: r.cell, round }];
    }),
    pooled: options.by?.length ? _pooled(records, options.by) : null,
    trajectories: chosen.flatMap(_trajectory),
    votes: chosen.flatMap(_votes),
    rounds: records.map((r) => ({ cell: r.cell, outcome: r.outcome, rounds: r.rounds })),
    modes: _modes(records),
    settings: _settings(records),
    llm: _llm(records),
  };
}

/** One row per outcome (and no_consensus) that occurs somewhere: an all-zero facet says nothing. */
function _outcomeRows(rows: readonly (readonly [string, RunsSummary])[]): OutcomeRow[] {
  const rate = (s: RunsSummary, outcome: string) =>
    outcome === 'no_consensus' ? s.no_consensus : s.outcomes[outcome as (typeof OUTCOMES)[number]];
  const present = [...OUTCOMES, 'no_consensus'].filter((o) => rows.some(([, s]) => rate(s, o).count > 0));
  return rows.flatMap(([cell, s]) =>
    present.map((outcome) => {
      const r = rate(s, outcome);
      return { cell, outcome, rate: r.rate, low: r.ci.low, high: r.ci.high, count: r.count, runs: s.runs };
    }),
  );
}

function _convergenceRow(c: CellSummary): ConvergenceRow {
  const v = c.convergence;
  return {
    cell: c.cell,
    runs: c.runs,
    converged: v.count,
    rate: v.rate,
    low: v.ci.low,
    high: v.ci.high,
    mean: v.mean_round,
    median: v.median_round,
    validMean: v.valid_mean_round,
  };
}

function _pooled(records: readonly RunRecord[], by: readonly PoolField[]): PooledData {
  const groups = poolRuns(records, by);
  return { by: [...by], groups, outcomes: _outcomeRows(groups.map((g) => [groupLabel(g.group), g])) };
}

function _llm(records: readonly RunRecord[]): ReportData['llm'] {
  const groups = new GroupedLlmMetrics<RunRecord>((r) => r.cell);
  for (const r of records) groups.add(r);
  return [...groups.finish()].map(([cell, metrics]) => ({ cell, metrics }));
}

function _settings(records: readonly RunRecord[]): Settings {
  const configs = [...new Map(records.map((r) => [r.cell, r.config as unknown as Record<string, unknown>])).entries()];
  const keys = [...new Set(configs.flatMap(([, c]) => Object.keys(c)))];
  const value = (c: Record<string, unknown>, k: string) =>
    Object.hasOwn(c, k) && c[k] !== undefined ? settingText(c[k]) : '–';
  const differing = keys.filter((k) => new Set(configs.map(([, c]) => value(c, k))).size > 1);
  const first = configs[0]?.[1] ?? {};
  return {
    common: keys.filter((k) => !differing.includes(k)).map((k) => [k, value(first, k)]),
    differing,
    cells: configs.map(([cell, c]) => ({ cell, values: differing.map((k) => value(c, k)) })),
  };
}

/**
 * A setting as people write it, not as JSON: `policy` not `"policy"`, `none` not
 * `null`, `0–50` for a range, `rounds 30` for `{"rounds":30}`.
 */
export function settingText(value: unknown): string {
  if (value === null) return 'none';
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (Array.isArray(value))
    return value.length === 2 && value.every((v) => typeof v === 'number')
      ? `${value[0]}–${value[1]}`
      : value.map(settingText).join(', ');
  if (typeof value === 'object')
    return Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .map(([k, v]) => `${k} ${settingText(v)}`)
      .join(', ');
  return String(value);
}

/** Runs worth looking at: one per cell, longest first (short games show little), up to `count`. */
export function chooseRuns(records: readonly RunRecord[], count: number): RunRecord[] {
  const firstOfCell = new Map<string, RunRecord>();
  for (const r of records) {
    const seen = firstOfCell.get(r.cell);
    if (!seen || r.rounds > seen.rounds) firstOfCell.set(r.cell, r);
  }
  return [...firstOfCell.values()].sort((a, b) => b.rounds - a.rounds || a.seq - b.seq).slice(0, count);
}

const _label = (r: RunRecord) => `${r.cell} · ${r.id.slice(0, 8)}`;

function _trajectory(r: RunRecord): TrajectoryPoint[] {
  const points: TrajectoryPoint[] = [];
  const honest = r.agents.map((agent, i) => ({ agent, i })).filter(({ i }) => r.roles[i] === 'honest');
  for (const row of r.trajectory) {
    for (const { agent, i } of honest) {
      const value = row.values[i];
      if (typeof value === 'number') points.push({ run: _label(r), agent, round: row.round, value });
    }
  }
  return points;
}

function _votes(r: RunRecord): VotePoint[] {
  const n = r.agents.length;
  return r.trajectory.map((row) => ({
    run: _label(r),
    round: row.round,
    stop: row.votes.filter((v) => v === 'stop').length,
    threshold: Math.ceil((2 * n) / 3),
  }));
}

function _modes(records: readonly RunRecord[]): ModeRow[] {
  // b = 0 runs have no strategy: they are every strategy's starting point.
  const strategies = [
    ...new Set(records.filter((r) => r.byzantine > 0).map((r) => r.config.byzantineStrategy ?? 'none')),
  ];
  const groups = new GroupedSummaries<RunRecord & { mode: string }>((r) => r.mode);
  for (const r of records) {
    for (const strategy of r.byzantine > 0 || strategies.length === 0
      ? [r.config.byzantineStrategy ?? 'none']
      : strategies) {
      groups.add({ ...r, mode: JSON.stringify([r.config.decide ?? 'vote', strategy, r.byzantine]) });
    }
  }
  const summaries = groups.finish();
  if (new Set([...summaries.keys()].map((k) => JSON.parse(k)[0])).size < 2) return [];
  const rows: ModeRow[] = [];
  for (const [key, summary] of summaries) {
    const [mode, strategy, byzantine] = JSON.parse(key) as [string, string, number];
    const add = (measure: ModeRow['measure'], s: { rate: number; ci: { low: number; high: number } }) =>
      rows.push({ mode, strategy, byzantine, measure, rate: s.rate, low: s.ci.low, high: s.ci.high });
    add('valid', summary.outcomes.valid);
    add('in range', summary.range_valid);
    add('timeout', summary.outcomes.timeout);
    add('escalated', summary.outcomes.escalated);
  }
  // A measure that is zero everywhere gets no row of charts.
  const shown = new Set(rows.filter((r) => r.rate > 0).map((r) => r.measure));
  return rows.filter((r) => shown.has(r.measure));
}
