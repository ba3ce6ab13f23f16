/**
 * @module
 * Merging signed shards (`witness sim merge`). Each shard keeps its own chain: its
 * lines are kept byte for byte (their receipts link within the shard), and the merged
 * file's checkpoints are the shards' own signed checkpoints, so the merge needs no key
 * and vouches for nothing itself — a verifier checks every shard's chain against its
 * signer's checkpoint, and the union against the plan. The merge refuses inputs that
 * could not verify as one file: signed and unsigned mixed, two experiments or
 * shardings, one shard with two different checkpoints, lines a checkpoint does not
 * cover yet (a killed shard: resume it first).
 */
import { existsSync } from 'node:fs';
import { canonicalize } from '../../core/canonical-json.js';
import { WitnessError } from '../../core/errors.js';
import { readCheckpoints, writeCheckpoints } from './checkpoint.js';
import { type Checkpoint, checkpointPath } from './format.js';

/** The inputs' checkpoints, when every input is signed; undefined when none is. */
export function mergedCheckpoints(
  inputs: readonly string[],
  linesOf: (file: string) => number,
): Checkpoint[] | undefined {
  const signed = inputs.filter((f) => existsSync(checkpointPath(f)));
  if (signed.length === 0) return undefined;
  if (signed.length < inputs.length) {
    const plain = inputs.find((f) => !signed.includes(f));
    throw new WitnessError(
      'USAGE',
      `${signed[0]} is signed (it has ${checkpointPath(signed[0] as string)}) and ${plain} is not: the merged file could not be verified. Merge signed shards only, or unsigned ones only.`,
    );
  }
  const byShard = new Map<number, { cp: Checkpoint; file: string }>();
  let first: { cp: Checkpoint; file: string } | undefined;
  for (const file of inputs) {
    const checkpoints = (readCheckpoints(checkpointPath(file)) as { checkpoints: Checkpoint[] }).checkpoints;
    const covered = checkpoints.reduce((n, cp) => n + cp.count, 0);
    const lines = linesOf(file);
    if (lines !== covered) {
      throw new WitnessError(
        'INVALID_INPUT',
        `${file} has ${lines} lines and its checkpoints sign ${covered}: ${lines > covered ? 'the sweep was killed before it signed its last lines; rerun its command to resume it' : 'lines were removed'} before merging (witness verify ${file} --keys DIR.json says which).`,
      );
    }
    for (const cp of checkpoints) {
      first ??= { cp, file };
      _sameSweep(first, { cp, file });
      const shard = cp.shard?.index ?? 1;
      const seen = byShard.get(shard);
      if (seen && canonicalize(seen.cp) !== canonicalize(cp)) {
        throw new WitnessError(
          'INVALID_INPUT',
          `${seen.file} and ${file} both hold shard ${shard}${cp.shard ? `/${cp.shard.count}` : ''} with different checkpoints: give each shard's latest file once.`,
        );
      }
      byShard.set(shard, { cp, file });
    }
  }
  return [...byShard.entries()].sort(([a], [b]) => a - b).map(([, v]) => v.cp);
}

function _sameSweep(a: { cp: Checkpoint; file: string }, b: { cp: Checkpoint; file: string }): void {
  if (canonicalize(a.cp.experiment) !== canonicalize(b.cp.experiment)) {
    throw new WitnessError(
      'INVALID_INPUT',
      `${a.file} and ${b.file} are signed sweeps of different experiments; merge the shards of one sweep.`,
    );
  }
  if ((a.cp.shard === null) !== (b.cp.shard === null) || (a.cp.shard?.count ?? 1) !== (b.cp.shard?.count ?? 1)) {
    throw new WitnessError(
      'INVALID_INPUT',
      `${a.file} and ${b.file} come from different shardings (${_label(a.cp)} and ${_label(b.cp)}); merge shards i/n of one n.`,
    );
  }
}

function _label(cp: Checkpoint): string {
  return cp.shard ? `shard ${cp.shard.index}/${cp.shard.count}` : 'a whole sweep';
}

/** Writes the merged file's checkpoints, after its lines. */
export function writeMergedCheckpoints(out: string, checkpoints: readonly Checkpoint[]): void {
  writeCheckpoints(checkpointPath(out), checkpoints);
}
