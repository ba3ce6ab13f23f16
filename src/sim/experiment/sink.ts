/**
 * @module
 * Where a sweep's records go: a plain results file (one `JSON.stringify` line per
 * run), or a signed one (src/sim/transcript). Either way the sink says which runs the
 * file already holds, so a rerun skips them. A plain sweep refuses to append to a
 * signed file: its lines would carry no receipt and break the chain.
 *
 * A plain file's finished runs are one bit per planned `seq` (a line counts when its
 * id is the plan's id at its seq): resuming 2 million runs holds 2 million bits, not
 * 2 million id strings (issue 18 item 5).
 */
import { existsSync } from 'node:fs';
import { WitnessError } from '../../core/errors.js';
import { openJsonlWriter } from '../../core/jsonl.js';
import { checkpointPath } from '../transcript/format.js';
import { openSignedResults, type ResultsSink, type SignedResultsOptions } from '../transcript/writer.js';
import type { Outcome } from '../types.js';
import type { Plan, PlannedRun } from './plan.js';
import type { RunRecord } from './record.js';
import { fileLines } from './results-stream.js';

export type { ResultsSink };

export type SinkOptions = Omit<SignedResultsOptions, 'sign' | 'planned'> & { sign?: SignedResultsOptions['sign']; plan: Plan };

/** The runs a results file already holds, against the plan. */
export interface FinishedRuns {
  has(run: PlannedRun): boolean;
  /** Planned runs the file holds. */
  count: number;
  /** Runs in the file that are not in the plan (another experiment's, or another shard's). */
  foreign: number;
  /** Outcomes of the planned runs the file holds, so a resumed sweep's tally counts what its table shows (#18 item 16). */
  outcomes: Record<Outcome, number>;
}

const _noOutcomes = (): Record<Outcome, number> => ({ valid: 0, invalid: 0, none: 0, timeout: 0, escalated: 0 });

function _countOutcome(outcomes: Record<Outcome, number>, outcome: unknown): void {
  if (typeof outcome === 'string' && Object.hasOwn(outcomes, outcome)) outcomes[outcome as Outcome]++;
}

export interface OpenedSink {
  sink: Omit<ResultsSink, 'finished'>;
  finished: FinishedRuns;
}

export function openResultsSink(path: string, options: SinkOptions): OpenedSink {
  if (options.sign) {
    // A signed resume checks every line against its planned run: it keeps the plan's runs.
    const planned = [...options.plan];
    const sink = openSignedResults(path, { ...options, planned, sign: options.sign });
    const ids = new Set(planned.map((r) => r.id));
    let foreign = 0;
    for (const id of sink.finished) if (!ids.has(id)) foreign++;
    const outcomes = _noOutcomes();
    if (sink.finished.size > 0) {
      for (const { raw } of fileLines(path)) {
        const value = _parsed(raw);
        if (value && typeof value.id === 'string' && ids.has(value.id) && sink.finished.has(value.id)) _countOutcome(outcomes, value.outcome);
      }
    }
    return { sink, finished: { has: (run) => sink.finished.has(run.id), count: sink.finished.size - foreign, foreign, outcomes } };
  }
  const finished = _finishedRuns(path, options.plan);
  const writer = openJsonlWriter(path, { fsync: 'batch' });
  return {
    finished,
    sink: {
      repairedBytes: writer.repairedBytes,
      write: (record: RunRecord) => writer.append(record),
      close: () => writer.close(),
    },
  };
}

function _finishedRuns(path: string, plan: Plan): FinishedRuns {
  const signed = () => new WitnessError('USAGE', `${path} is a signed results file (${checkpointPath(path)}): resume it with --sign and the key that signed it, or write to another --out.`);
  if (existsSync(checkpointPath(path))) throw signed();
  // One bit per seq of the whole plan (a shard's seqs are a stride of them): 250 KB for 2 million runs.
  const last = plan.end - 1;
  const bits = new Uint8Array((plan.end + 7) >> 3);
  const runs = { count: 0, foreign: 0 };
  const outcomes = _noOutcomes();
  const isSet = (seq: number) => seq >= 0 && seq <= last && (bits[seq >> 3]! & (1 << (seq & 7))) !== 0;
  const finished: FinishedRuns = {
    has: (run) => isSet(run.seq),
    get count() {
      return runs.count;
    },
    get foreign() {
      return runs.foreign;
    },
    outcomes,
  };
  if (!existsSync(path)) return finished;
  // Streamed: resuming a 2-million-run file holds its bits, not its text.
  for (const { raw } of fileLines(path)) {
    const value = _parsed(raw);
    if (!value) continue; // a damaged line is not a finished run: it replays
    if ('receipt' in value) throw signed();
    const { id, seq } = value;
    if (typeof id !== 'string') continue;
    const run = typeof seq === 'number' ? plan.at(seq) : undefined;
    if (run?.id !== id) runs.foreign++;
    else if (!isSet(run.seq)) {
      bits[run.seq >> 3]! |= 1 << (run.seq & 7);
      runs.count++;
      _countOutcome(outcomes, value.outcome);
    }
  }
  return finished;
}

function _parsed(raw: string): { id?: unknown; seq?: unknown; outcome?: unknown; receipt?: unknown } | undefined {
  try {
    const value: unknown = JSON.parse(raw);
    return typeof value === 'object' && value !== null ? value : undefined;
  } catch {
    return undefined;
  }
}
