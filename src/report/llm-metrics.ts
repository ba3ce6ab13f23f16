/**
 * @module
 * LLM metrics per cell (or any group of runs), from fields every results line has:
 * invalid answers and fallbacks (every run), and for model-backed runs the `llm`
 * block — calls, retries, tokens in and out, and each call's latency. Memory is
 * bounded by the number of groups: latencies go into a log-scale histogram (buckets
 * 1% wide), so a percentile is exact to within 1% however many calls a cell made.
 */
import type { RunRecord } from '../sim/experiment/record.js';
import { renderTable } from './table.js';

export interface LlmMetrics {
  runs: number;
  /** Runs with model-backed agents (a `llm` block). */
  model_runs: number;
  /** Answers that failed validation, each failed try once (every run). */
  invalid_answers: number;
  /** Answers replaced by the fallback after every try failed (every run). */
  fallbacks: number;
  calls: number;
  retries: number;
  /** Replies that were not JSON or broke the schema. */
  invalid_replies: number;
  tokens_in: number;
  tokens_out: number;
  /** Per call, in ms; null without calls. */
  latency_ms: { p50: number; p90: number; p99: number; max: number } | null;
}

/** Buckets 1% wide: bucket k holds latencies in [1.01^k − 1, 1.01^(k+1) − 1) ms. */
const _GROWTH = Math.log(1.01);
const _bucket = (ms: number) => Math.max(0, Math.floor(Math.log1p(Math.max(0, ms)) / _GROWTH));
/** A bucket's value: the geometric middle of its bounds, within 0.5% of any latency in it. */
const _value = (k: number) => Math.expm1((k + 0.5) * _GROWTH);

export class LlmMetricsAccumulator {
  #m: Omit<LlmMetrics, 'latency_ms'> = {
    runs: 0,
    model_runs: 0,
    invalid_answers: 0,
    fallbacks: 0,
    calls: 0,
    retries: 0,
    invalid_replies: 0,
    tokens_in: 0,
    tokens_out: 0,
  };
  readonly #histogram = new Map<number, number>();
  #max = 0;

  add(run: Pick<RunRecord, 'invalid_answers' | 'fallbacks' | 'llm'>): void {
    const m = this.#m;
    m.runs++;
    m.invalid_answers += run.invalid_answers;
    m.fallbacks += run.fallbacks;
    const llm = run.llm;
    if (!llm) return;
    m.model_runs++;
    m.calls += llm.calls;
    m.retries += llm.retries;
    m.invalid_replies += llm.invalid_replies;
    m.tokens_in += llm.prompt_tokens;
    m.tokens_out += llm.completion_tokens;
    for (const call of llm.call_log ?? []) {
      const k = _bucket(call.latency_ms);
      this.#histogram.set(k, (this.#histogram.get(k) ?? 0) + 1);
      if (call.latency_ms > this.#max) this.#max = call.latency_ms;
    }
  }

  finish(): LlmMetrics {
    const total = [...this.#histogram.values()].reduce((s, n) => s + n, 0);
    if (total === 0) return { ...this.#m, latency_ms: null };
    const keys = [...this.#histogram.keys()].sort((a, b) => a - b);
    const at = (q: number) => {
      const rank = Math.ceil(q * total);
      let seen = 0;
      for (const k of keys) {
        seen += this.#histogram.get(k)!;
        if (seen >= rank) return Math.min(this.#max, Math.round(_value(k)));
      }
      return this.#max;
    };
    return { ...this.#m, latency_ms: { p50: at(0.5), p90: at(0.9), p99: at(0.99), max: this.#max } };
  }
}

/** Per group key, in the order groups first appear. */
export class GroupedLlmMetrics<T extends Pick<RunRecord, 'invalid_answers' | 'fallbacks' | 'llm'>> {
  readonly #groups = new Map<string, LlmMetricsAccumulator>();
  constructor(readonly keyOf: (run: T) => string) {}

  add(run: T): void {
    const key = this.keyOf(run);
    let group = this.#groups.get(key);
    if (!group) {
      group = new LlmMetricsAccumulator();
      this.#groups.set(key, group);
    }
    group.add(run);
  }

  finish(): Map<string, LlmMetrics> {
    return new Map([...this.#groups].map(([k, g]) => [k, g.finish()]));
  }
}

/** Whether the metrics say anything: a model-backed run, or an invalid answer or fallback somewhere. */
export function hasLlmMetrics(metrics: Iterable<LlmMetrics>): boolean {
  for (const m of metrics) if (m.model_runs > 0 || m.invalid_answers > 0 || m.fallbacks > 0) return true;
  return false;
}

/** The metrics table's columns and one row of it (terminal and HTML share them). */
export const LLM_HEADER = [
  'runs with a model',
  'invalid answers',
  'fallbacks',
  'calls',
  'retries',
  'tokens in',
  'tokens out',
  'latency p50',
  'p90',
  'p99',
] as const;

export function llmRow(m: LlmMetrics): string[] {
  const ms = (x: number | undefined) =>
    x === undefined
      ? '–'
      : x >= 10_000
        ? `${(x / 1000).toFixed(0)} s`
        : x >= 1000
          ? `${(x / 1000).toFixed(1)} s`
          : `${x} ms`;
  const l = m.latency_ms ?? undefined;
  return [
    String(m.model_runs),
    String(m.invalid_answers),
    String(m.fallbacks),
    String(m.calls),
    String(m.retries),
    String(m.tokens_in),
    String(m.tokens_out),
    ms(l?.p50),
    ms(l?.p90),
    ms(l?.p99),
  ];
}

export const LLM_CAPTION =
  'LLM metrics, summed over the runs of each row: invalid answers (each failed try once) and fallbacks (answers replaced after every try failed) are in every results line; calls, retries, tokens and latency come from the model-backed runs. Latency per call, to within 1%.';

/** The terminal table, one row per label, or '' when the metrics say nothing (a policy-only sweep). */
export function renderLlmTable(leadHeader: string, rows: readonly { label: string; metrics: LlmMetrics }[]): string {
  if (!hasLlmMetrics(rows.map((r) => r.metrics))) return '';
  return `LLM metrics per ${leadHeader}:\n${renderTable(
    [leadHeader, ...LLM_HEADER],
    rows.map((r) => [r.label, ...llmRow(r.metrics)]),
  )}\n${LLM_CAPTION}`;
}
