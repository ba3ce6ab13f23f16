/**
 * @module
 * Where a sweep's records go: a plain results file (one `JSON.stringify` line per
 * run), or a signed one (src/sim/transcript). Either way the sink says which runs the
 * file already holds, so a rerun skips them. A plain sweep refuses to append to a
 * signed file: its lines would carry no receipt and break the chain.
 */
import { existsSync } from 'node:fs';
import { WitnessError } from '../../core/errors.js';
import { openJsonlWriter, readJsonl } from '../../core/jsonl.js';
import { checkpointPath } from '../transcript/format.js';
import { openSignedResults, type ResultsSink, type SignedResultsOptions } from '../transcript/writer.js';
import type { RunRecord } from './record.js';

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
  for (const { value } of readJsonl(path).records) {
    if (typeof value !== 'object' || value === null) continue;
    if ('receipt' in value) throw signed();
    if (typeof (value as { id?: unknown }).id === 'string') ids.add((value as { id: string }).id);
  }
  return ids;
}
