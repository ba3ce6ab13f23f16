/**
 * @module
 * Where a sweep's records go: a plain results file (one `JSON.stringify` line per
 * run), or a signed one (src/sim/transcript). Either way the sink says which runs the
 * file already holds, so a rerun skips them. A plain sweep refuses to append to a
 * signed file: its lines would carry no receipt and break the chain.
 */
import { existsSync } from 'node:fs';
import { WitnessError } from '../../core/errors.js';
import { openJsonlWriter } from '../../core/jsonl.js';
import { checkpointPath } from '../transcript/format.js';
import { openSignedResults, type ResultsSink, type SignedResultsOptions } from '../transcript/writer.js';
import type { RunRecord } from './record.js';
import { fileLines } from './results-stream.js';

export type { ResultsSink };

export type SinkOptions = Omit<SignedResultsOptions, 'sign'> & { sign?: SignedResultsOptions['sign'] };

export function openResultsSink(path: string, options: SinkOptions): ResultsSink {
  if (options.sign) return openSignedResults(path, { ...options, sign: options.sign });
  const finished = _finishedIds(path);
  const writer = openJsonlWriter(path, { fsync: 'batch' });
  return {
    finished,
    repairedBytes: writer.repairedBytes,
    write: (record: RunRecord) => writer.append(record),
    close: () => writer.close(),
  };
}

function _finishedIds(path: string): Set<string> {
  const signed = () => new WitnessError('USAGE', `${path} is a signed results file (${checkpointPath(path)}): resume it with --sign and the key that signed it, or write to another --out.`);
  if (existsSync(checkpointPath(path))) throw signed();
  const ids = new Set<string>();
  if (!existsSync(path)) return ids;
  // Streamed: resuming a 2-million-run file holds its ids, not its text.
  for (const { raw } of fileLines(path)) {
    let value: unknown;
    try {
      value = JSON.parse(raw);
    } catch {
      continue; // a damaged line is not a finished run: it replays
    }
    if (typeof value !== 'object' || value === null) continue;
    if ('receipt' in value) throw signed();
    if (typeof (value as { id?: unknown }).id === 'string') ids.add((value as { id: string }).id);
  }
  return ids;
}
