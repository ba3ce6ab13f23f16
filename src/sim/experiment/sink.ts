/**
 * @module
 * Where a sweep's records go: a plain results file (one `JSON.stringify` line per
 * run), or a signed one (src/sim/transcript). Either way the sink says which runs the
 * file already holds, so a rerun skips them. A plain sweep refuses to append to a
 * signed file: its lines would carry no receipt and break the chain.
 *
 * Either kind's finished runs are one bit per planned `seq` (finished.ts; a line counts
 * when its id is the plan's id at its seq): resuming 2 million runs holds 2 million
 * bits, not 2 million id strings.
 */
import { existsSync } from 'node:fs';
import { WitnessError } from '../../core/errors.js';
import { openJsonlWriter } from '../../core/jsonl.js';
import { checkpointPath } from '../transcript/format.js';
import { openSignedResults, type ResultsSink, type SignedResultsOptions } from '../transcript/writer.js';
import { FinishedRuns } from './finished.js';
import type { Plan, RunPlace } from './plan.js';
import type { RunRecord } from './record.js';
import { asRecord } from './record-schema.js';
import { fileLines } from './results-stream.js';

export type { ResultsSink };

export type SinkOptions = Omit<SignedResultsOptions, 'sign'> & { sign?: SignedResultsOptions['sign'] };

export interface OpenedSink {
  sink: Omit<ResultsSink, 'finished'>;
  finished: FinishedRuns;
}

export function openResultsSink(path: string, options: SinkOptions): OpenedSink {
  if (options.sign) {
    // Every line of a signed file is checked against its planned run; one outside the plan is refused, so none is foreign.
    const sink = openSignedResults(path, { ...options, sign: options.sign });
    return { sink, finished: sink.finished };
  }
  const finished = _finishedRuns(path, options.plan, options.onExisting);
  const writer = openJsonlWriter(path, { fsync: 'batch' });
  return {
    finished,
    sink: {
      repairedBytes: writer.repairedBytes,
      write: (record: RunRecord) => writer.append(record),
      // One write for the chunk: its lines end with their newlines.
      writeChunk: (chunk) => writer.appendLineBytes(chunk.bytes!),
      close: () => writer.close(),
    },
  };
}

function _finishedRuns(path: string, plan: Plan, onExisting?: (record: RunRecord) => void): FinishedRuns {
  const signed = () =>
    new WitnessError(
      'USAGE',
      `${path} is a signed results file (${checkpointPath(path)}): resume it with --sign and the key that signed it, or write to another --out.`,
    );
  if (existsSync(checkpointPath(path))) throw signed();
  const finished = new FinishedRuns(plan);
  if (!existsSync(path)) return finished;
  // Streamed: resuming a 2-million-run file holds its bits, not its text.
  for (const { raw } of fileLines(path)) {
    const value = _parsed(raw);
    if (!value) continue; // a damaged line is not a finished run: it replays
    if ('receipt' in value) throw signed();
    if (typeof value.id !== 'string') continue;
    const place = plan.place(value);
    if (place !== 'planned') {
      _count(finished, place, value.seq as number);
      continue;
    }
    // A repeated line counts once, as `witness report` of the file counts it.
    if (!finished.mark(value.seq as number, value.outcome)) continue;
    const valid = onExisting && asRecord(value);
    if (valid) onExisting?.(valid);
  }
  return finished;
}

function _count(finished: FinishedRuns, place: Exclude<RunPlace, 'planned'>, seq: number): void {
  if (place === 'foreign') finished.foreign++;
  else if (place === 'other-shard') finished.otherShard++;
  else if (place === 'stale-seed') finished.staleSeed++;
  else {
    finished.beyond++;
    finished.lastBeyond = Math.max(finished.lastBeyond, seq);
  }
}

function _parsed(
  raw: string,
): { id?: unknown; seq?: unknown; seed?: unknown; outcome?: unknown; receipt?: unknown } | undefined {
  try {
    const value: unknown = JSON.parse(raw);
    return typeof value === 'object' && value !== null ? value : undefined;
  } catch {
    return undefined;
  }
}
