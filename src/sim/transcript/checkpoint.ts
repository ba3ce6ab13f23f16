/**
 * @module
 * The signed checkpoints beside a results file (`RESULTS.checkpoint.json`): one per
 * chain — a sweep's own, or each shard's after a merge — each signing the chain's
 * line count and head, the experiment (so a verifier can rebuild the plan), the
 * shard, engine, prompt pack and cassette digest. Replaced atomically (core's
 * `writeFileAtomic`), so a crash leaves the previous checkpoint or the new one.
 */
import { existsSync } from 'node:fs';
import { writeFileAtomic } from '../../core/atomic-write.js';
import { WitnessError } from '../../core/errors.js';
import { parseStrictJson } from '../../core/strict-json.js';
import { readNamedFile } from '../../attest/files.js';
import {
  type Checkpoint,
  CHECKPOINTS_FILE_TYPE,
  type CheckpointsFile,
  CheckpointsFileSchema,
  checkpointSigningBytes,
  type UnsignedCheckpoint,
} from './format.js';
import type { Signer } from '../../attest/signature.js';

export function signCheckpoint(unsigned: UnsignedCheckpoint, signer: Pick<Signer, 'sign'>): Checkpoint {
  return { ...unsigned, sig: signer.sign(checkpointSigningBytes(unsigned)) };
}

export function writeCheckpoints(path: string, checkpoints: readonly Checkpoint[]): void {
  const file: CheckpointsFile = { v: 1, type: CHECKPOINTS_FILE_TYPE, checkpoints: [...checkpoints] };
  try {
    writeFileAtomic(path, `${JSON.stringify(file, null, 2)}\n`);
  } catch (cause) {
    throw new WitnessError('IO', `Cannot write the results checkpoint ${path}: ${(cause as Error).message}.`, {
      cause,
    });
  }
}

export type CheckpointsRead =
  | { ok: true; file: CheckpointsFile }
  | { ok: false; code: 'MALFORMED' | 'NON_CANONICAL'; message: string };

/** Parses a checkpoints file's text strictly (a duplicate key is NON_CANONICAL). */
export function parseCheckpoints(text: string, what: string): CheckpointsRead {
  let value: unknown;
  try {
    value = parseStrictJson(text, { what });
  } catch (error) {
    const message = (error as Error).message;
    return { ok: false, code: /duplicate key/.test(message) ? 'NON_CANONICAL' : 'MALFORMED', message };
  }
  const checked = CheckpointsFileSchema.safeParse(value);
  if (!checked.success) {
    const issue = checked.error.issues[0];
    return {
      ok: false,
      code: 'MALFORMED',
      message: `${what} is not a results checkpoint file: ${issue?.path.join('.') || '(root)'}: ${issue?.message}`,
    };
  }
  return { ok: true, file: checked.data };
}

/** A checkpoint file holds one small signed record per shard and checkpoint: 64 MiB is far past any sweep's. */
export const MAX_CHECKPOINT_FILE_BYTES = 64 * 1024 * 1024;

/** Reads a checkpoints file, or undefined when there is none. Unreadable or invalid files are errors naming the file. */
export function readCheckpoints(path: string): CheckpointsFile | undefined {
  if (!existsSync(path)) return undefined;
  const read = parseCheckpoints(
    readNamedFile(path, 'results checkpoint', { maxBytes: MAX_CHECKPOINT_FILE_BYTES }).toString('utf8'),
    path,
  );
  if (!read.ok)
    throw new WitnessError(
      'INVALID_INPUT',
      `${read.message}. Check it with: witness verify ${path.replace(/\.checkpoint\.json$/, '')} --keys DIR.json`,
    );
  return read.file;
}
