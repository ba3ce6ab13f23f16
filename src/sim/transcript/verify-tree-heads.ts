/**
 * @module
 * The tree heads of a signed results file (tree-head.ts): the note each checkpoint
 * carries must be its own tree head, signed by its key; and a tree head the user kept
 * from earlier (`--checkpoint KEPT`) must be a prefix of the file's chain — the file is
 * that log or an append-only extension of it. The file's own checkpoints can be
 * replaced by an older one (a rollback) by anyone who kept it; a kept tree head
 * catches that as TRUNCATED, and a chain rewritten under it as INCONSISTENT.
 */
import { CheckpointCheck, parseCheckpointBody } from '../../attest/tlog/index.js';
import { readNamedFile } from '../../attest/files.js';
import { WitnessError } from '../../core/errors.js';
import type { Checkpoint } from './format.js';
import { problem } from './reasons.js';
import { chainOrigin, readTreeHead, splitNotes } from './tree-head.js';
import type { KeyCheckOptions, ProblemSink } from './verify-checkpoints.js';

/** A checkpoint's note names the same count and root, under its chain's origin, signed by its key. */
export function checkCheckpointNote(cp: Checkpoint, what: string, keys: KeyCheckOptions, problems: ProblemSink): void {
  const key = keys.directory.get(cp.key_id);
  if (cp.note === undefined || !key) return; // an unknown key is reported with the checkpoint's own signature
  try {
    const head = readTreeHead(cp.note, chainOrigin(cp.experiment, cp.shard), key);
    if (head.size !== cp.count || head.root.toString('hex') !== cp.root) problems.push(problem('CHECKPOINT_MISMATCH', `${what}: its tree-head note says ${head.size} lines with root ${head.root.toString('hex').slice(0, 12)}…, the checkpoint ${cp.count} with ${cp.root?.slice(0, 12) ?? 'no root'}`));
  } catch (error) {
    problems.push(problem('BAD_SIGNATURE', `${what}: its tree-head note does not verify under key ${cp.key_id} and its chain's origin: ${(error as Error).message}`));
  }
}

/** One kept tree head being checked against its chain as the file streams past. */
export interface KeptHead {
  origin: string;
  size: number;
  check: CheckpointCheck;
}

/**
 * Reads the kept tree heads in `path` and matches each to the chain whose origin it
 * names (by shard number), its signature checked under that chain's key. Problems
 * (a note of no chain of this file, a bad signature) go to `problems`.
 */
export function keptHeads(path: string, chains: ReadonlyMap<number, Checkpoint>, keys: KeyCheckOptions, problems: ProblemSink): Map<number, KeptHead[]> {
  const text = readNamedFile(path, 'kept checkpoint').toString('utf8');
  const byShard = new Map<number, KeptHead[]>();
  for (const [i, note] of splitNotes(text, path).entries()) {
    const what = `the kept checkpoint ${i + 1} (${path})`;
    let origin: string;
    try {
      origin = parseCheckpointBody(note.slice(0, note.indexOf('\n\n') + 1)).origin;
    } catch (error) {
      problems.push(problem('MALFORMED', `${what}: ${(error as Error).message}`));
      continue;
    }
    const shard = [...chains.entries()].find(([, cp]) => chainOrigin(cp.experiment, cp.shard) === origin);
    if (!shard) {
      problems.push(problem('INCONSISTENT', `${what} is of the log ${origin}, and no chain of this file is that log: the file is not the one it was kept for (another experiment or shard)`));
      continue;
    }
    const [index, cp] = shard;
    const key = keys.directory.get(cp.key_id);
    if (!key) continue; // reported with the checkpoint's own signature
    try {
      const head = readTreeHead(note, origin, key);
      byShard.set(index, [...(byShard.get(index) ?? []), { origin, size: head.size, check: new CheckpointCheck(head) }]);
    } catch (error) {
      const reason = error instanceof WitnessError ? error.message : String(error);
      problems.push(problem('BAD_SIGNATURE', `${what} is not signed by key ${cp.key_id} for the log ${origin}: ${reason}`));
    }
  }
  return byShard;
}

/** Each kept head's verdict once the file has been read. */
export function finishKeptHeads(heads: ReadonlyMap<number, KeptHead[]>, problems: ProblemSink): void {
  for (const [shard, list] of heads) {
    for (const head of list) {
      const result = head.check.result();
      if (result.ok) continue;
      const label = ` (chain of shard ${shard}, log ${head.origin})`;
      if (result.code === 'TRUNCATED') problems.push(problem('TRUNCATED', `the file's chain holds ${result.logSize} lines and the kept checkpoint signed ${head.size}${label}: lines were cut off its end, or the file rolled back to an older state`));
      else problems.push(problem('INCONSISTENT', `the first ${head.size} lines of the file's chain do not have the root the kept checkpoint signed${label}: lines among them were changed, removed, inserted or reordered, or the chain was rewritten`));
    }
  }
}
