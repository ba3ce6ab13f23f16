/**
 * @module
 * The summary of an E12 run (docs/a2a.md §3): per condition, the trials verified and the
 * mean of every latency part, the median and 95th percentile of the totals; the
 * overheads over none (difference of means, median of same-round differences); and the
 * fixed-width table `witness a2a bench` prints.
 */
import type { E12Condition, E12Results, E12Summary, E12Trial } from './e12.js';

/** The latency parts of a trial, ms, in the order the table shows them. */
export const LATENCY_PARTS = [
  'discovery_ms',
  'a2a_ms',
  'tool_ms',
  'model_ms',
  'sign_ms',
  'cosign_ms',
  'verify_ms',
  'total_ms',
  'cpu_ms',
] as const;

/** Median over rounds of a's total minus b's total in the same round. */
export function pairedMedian(trials: readonly E12Trial[], a: E12Condition, b: E12Condition): number {
  const diffs: number[] = [];
  for (const t of trials) {
    if (t.condition !== a) continue;
    const other = trials.find((u) => u.round === t.round && u.condition === b);
    if (other) diffs.push(t.latency.total_ms - other.latency.total_ms);
  }
  diffs.sort((x, y) => x - y);
  const mid = diffs.length >> 1;
  return diffs.length === 0
    ? Number.NaN
    : diffs.length % 2
      ? (diffs[mid] as number)
      : ((diffs[mid - 1] as number) + (diffs[mid] as number)) / 2;
}

export function summarise(condition: E12Condition, trials: readonly E12Trial[]): E12Summary {
  const mean = {} as E12Summary['mean'];
  for (const part of LATENCY_PARTS)
    mean[part] = trials.reduce((s, t) => s + t.latency[part], 0) / Math.max(1, trials.length);
  const totals = trials.map((t) => t.latency.total_ms).sort((a, b) => a - b);
  const q = (p: number) =>
    totals[Math.min(totals.length - 1, Math.max(0, Math.ceil(p * totals.length) - 1))] ?? Number.NaN;
  return {
    condition,
    n: trials.length,
    verified: trials.filter((t) => t.verdict.ok).length,
    mean,
    median_total_ms: q(0.5),
    p95_total_ms: q(0.95),
  };
}

/**
 * The summary per condition as a table's header and rows of text: what `witness a2a
 * bench` prints and the viewer's E12 page shows (its model passes these rows).
 */
export function e12SummaryTable(summary: readonly E12Summary[]): { head: string[]; rows: string[][] } {
  const head = [
    'condition',
    'n',
    'verified',
    'mean total',
    'median',
    'p95',
    'discovery',
    'a2a',
    'tool',
    'model',
    'sign',
    'cosign',
    'verify',
    'cpu',
  ];
  const rows = summary.map((s) => {
    // The viewer shows files that failed verification too: a row without its means shows dashes.
    const mean: Partial<E12Summary['mean']> = s.mean ?? {};
    return [
      s.condition,
      String(s.n),
      `${s.verified}/${s.n}`,
      ...[
        mean.total_ms,
        s.median_total_ms,
        s.p95_total_ms,
        mean.discovery_ms,
        mean.a2a_ms,
        mean.tool_ms,
        mean.model_ms,
        mean.sign_ms,
        mean.cosign_ms,
        mean.verify_ms,
        mean.cpu_ms,
      ].map(_ms),
    ];
  });
  return { head, rows };
}

/** The summary as a fixed-width table. */
export function formatE12Summary(
  results: Pick<
    E12Results,
    | 'config'
    | 'summary'
    | 'forgery'
    | 'overhead_dag_vs_none_ms'
    | 'overhead_chain_vs_none_ms'
    | 'overhead_dag_vs_none_cpu_ms'
    | 'overhead_dag_vs_none_paired_median_ms'
    | 'overhead_dag_stream_vs_none_ms'
    | 'overhead_dag_stream_vs_dag_ms'
    | 'overhead_dag_stream_vs_none_cpu_ms'
  >,
): string {
  const { head, rows } = e12SummaryTable(results.summary);
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) =>
    cells.map((c, i) => (i === 0 ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0))).join('  ');
  const forgery = results.forgery.map(
    (f) =>
      `  child key only, claims a parent, ${f.construction.padEnd(5)}: ${f.accepted ? 'accepted' : `rejected ${f.reasons.join(', ')}`}`,
  );
  return [
    'latency, ms (means unless marked)',
    line(head),
    line(widths.map((w) => '-'.repeat(w))),
    ...rows.map(line),
    '',
    `overhead dag over none: ${_signed(results.overhead_dag_vs_none_ms)} ms (mean total), ${_signed(results.overhead_dag_vs_none_paired_median_ms)} ms (median of same-round differences); chain over none: ${_signed(results.overhead_chain_vs_none_ms)} ms`,
    ...(results.overhead_dag_stream_vs_none_ms === undefined
      ? []
      : [
          `overhead dag+stream over none: ${_signed(results.overhead_dag_stream_vs_none_ms)} ms (mean total), over dag: ${_signed(results.overhead_dag_stream_vs_dag_ms ?? Number.NaN)} ms (the streaming: chunk receipts, checkpoints, the final receipt's second co-signed edge); on-CPU over none: ${_signed(results.overhead_dag_stream_vs_none_cpu_ms ?? Number.NaN)} ms`,
        ]),
    `on-CPU overhead dag over none (parent + child processes): ${_signed(results.overhead_dag_vs_none_cpu_ms)} ms; load average ${results.config.load_average.map((x) => x.toFixed(1)).join(' → ')} on ${results.config.cpus} cores (wall-clock includes waiting for a CPU)`,
    'paper (Apple M1 Pro, with its local LLM): dag 813.1 vs none 770.8 ms, +42.3 ms',
    'forgery:',
    ...forgery,
  ].join('\n');
}

/** A latency in ms; '–' where the file has none (a condition with no trials). */
function _ms(x: number | undefined): string {
  return typeof x === 'number' && Number.isFinite(x) ? x.toFixed(x < 10 ? 3 : 1) : '–';
}

function _signed(x: number): string {
  return `${x >= 0 ? '+' : ''}${x.toFixed(3)}`;
}
