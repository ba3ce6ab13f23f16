/**
 * @module
 * The data behind the HTML report, computed from results records: per-cell outcome
 * rates with Wilson intervals, a few runs' trajectories and stop votes, the rounds
 * distribution, and a decision-mode comparison. Plain JSON, so the page only draws.
 */
import type { RunRecord } from '../sim/experiment/record.js';
import { type CellSummary, OUTCOMES, summarizeCells } from '../sim/stats.js';

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
  trajectories: TrajectoryPoint[];
  votes: VotePoint[];
  rounds: RoundsPoint[];
  modes: ModeRow[];
  /** The distinct cell settings, for the footer. */
  configs: unknown[];
}

export interface ReportDataOptions {
  title: string;
  /** How many runs to draw trajectories for (default 6). */
  trajectories?: number;
}

export function buildReportData(records: readonly RunRecord[], options: ReportDataOptions): ReportData {
  const { short, common } = shortLabels([...new Set(records.map((r) => r.cell))]);
  records = records.map((r) => ({ ...r, cell: short.get(r.cell) ?? r.cell }));
  const cells = summarizeCells(records);
  // Only outcomes that occur somewhere get a column: an all-zero facet says nothing.
  const present = OUTCOMES.filter((o) => cells.some((c) => c.outcomes[o].count > 0));
  const outcomes = cells.flatMap((c) =>
    present.map((outcome) => {
      const r = c.outcomes[outcome];
      return { cell: c.cell, outcome, rate: r.rate, low: r.ci.low, high: r.ci.high, count: r.count, runs: c.runs };
    }),
  );
  const chosen = chooseRuns(records, options.trajectories ?? 6);
  return {
    title: options.title,
    runs: records.length,
    common,
    cells,
    outcomes,
    trajectories: chosen.flatMap(_trajectory),
    votes: chosen.flatMap(_votes),
    rounds: records.map((r) => ({ cell: r.cell, outcome: r.outcome, rounds: r.rounds })),
    modes: _modes(records),
    configs: [...new Map(records.map((r) => [r.cell, r.config])).values()],
  };
}

/**
 * Cell labels without the words all of them share (e.g. `may_exist [0,50] R=50`), so
 * charts show what differs; the shared words are returned to be shown once.
 */
export function shortLabels(labels: readonly string[]): { short: Map<string, string>; common: string } {
  const split = labels.map((l) => l.split(' '));
  const shared = (split[0] ?? []).filter((word) => split.every((words) => words.includes(word)));
  const short = new Map(labels.map((l, i) => [l, split[i]!.filter((w) => !shared.includes(w)).join(' ') || l]));
  return { short, common: labels.length > 1 ? shared.join(' ') : '' };
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
  return r.trajectory.map((row) => ({ run: _label(r), round: row.round, stop: row.votes.filter((v) => v === 'stop').length, threshold: Math.ceil((2 * n) / 3) }));
}

function _modes(records: readonly RunRecord[]): ModeRow[] {
  // b = 0 runs have no strategy: they are every strategy's starting point.
  const strategies = [...new Set(records.filter((r) => r.byzantine > 0).map((r) => r.config.byzantineStrategy ?? 'none'))];
  const groups = new Map<string, RunRecord[]>();
  for (const r of records) {
    for (const strategy of r.byzantine > 0 || strategies.length === 0 ? [r.config.byzantineStrategy ?? 'none'] : strategies) {
      const key = JSON.stringify([r.config.decide ?? 'vote', strategy, r.byzantine]);
      const group = groups.get(key);
      if (group) group.push(r);
      else groups.set(key, [r]);
    }
  }
  if (new Set([...groups.keys()].map((k) => JSON.parse(k)[0])).size < 2) return [];
  const rows: ModeRow[] = [];
  for (const [key, group] of groups) {
    const [mode, strategy, byzantine] = JSON.parse(key) as [string, string, number];
    const summary = summarizeCells(group.map((r) => ({ ...r, cell: key })))[0]!;
    const add = (measure: ModeRow['measure'], s: { rate: number; ci: { low: number; high: number } }) =>
      rows.push({ mode, strategy, byzantine, measure, rate: s.rate, low: s.ci.low, high: s.ci.high });
    add('valid', summary.outcomes.valid);
    add('in range', summary.rangeValid);
    add('timeout', summary.outcomes.timeout);
    add('escalated', summary.outcomes.escalated);
  }
  // A measure that is zero everywhere gets no row of charts.
  const shown = new Set(rows.filter((r) => r.rate > 0).map((r) => r.measure));
  return rows.filter((r) => shown.has(r.measure));
}
