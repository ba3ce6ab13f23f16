/**
 * @module
 * The tree heads of a signed results file (tree-head.ts): the note each checkpoint
 * carries must be its own tree head, signed by its key; and a tree head the user kept
 * from earlier (`--checkpoint KEPT`) must be a prefix of the file's chain — the file is
 * that log or an append-only extension of it. The file's own checkpoints can be
 * replaced by an older one (a rollback) by anyone who kept it; a kept tree head
 * catches that as TRUNCATED, and a chain rewritten under it as INCONSISTENT.
 */
import { CheckpointCheck, parseCheckpointBody, splitNotes } from '../../attest/tlog/index.js';
import { readNamedFile } from '../../attest/files.js';
import { WitnessError } from '../../core/errors.js';
import type { Checkpoint } from './format.js';
import type { SignedCheckpoint } from '../../attest/tlog/index.js';
import { problem } from './reasons.js';
import { chainOrigin, readTreeHead } from './tree-head.js';
import type { KeyCheckOptions, ProblemSink } from './verify-checkpoints.js';

/** A checkpoint's note names the same count and root, under its chain's origin, signed by its key. */
export function checkCheckpointNote(cp: Checkpoint, what: string, keys: KeyCheckOptions, problems: ProblemSink): void {
  const key = keys.directory.get(cp.key_id);
  if (cp.note === undefined || !key) return; // an unknown key is reported with the checkpoint's own signature
  try {
    const head = readTreeHead(cp.note, chainOrigin(cp.experiment, cp.shard), key);
    if (head.size !== cp.count || head.root.toString('hex') !== cp.root)
      problems.push(
        problem(
          'CHECKPOINT_MISMATCH',
          `${what}: its tree-head note says ${head.size} lines with root ${head.root.toString('hex').slice(0, 12)}…, the checkpoint ${cp.count} with ${cp.root?.slice(0, 12) ?? 'no root'}`,
        ),
      );
  } catch (error) {
    problems.push(
      problem(
        'BAD_SIGNATURE',
        `${what}: its tree-head note does not verify under key ${cp.key_id} and its chain's origin: ${(error as Error).message}`,
      ),
    );
  }
}

/** The kept tree heads of one chain, checked together as the file streams past (one tree, however many heads). */
export class KeptChain {
  readonly check: CheckpointCheck;
  /** File line of each chain entry at which a first change can be named (`CheckpointCheck.boundaries`). */
  readonly #lines = new Map<number, number>();
  readonly #boundaries: ReadonlySet<number>;
  #count = 0;
  #lastLine: number | undefined;
  constructor(
    readonly origin: string,
    heads: readonly SignedCheckpoint[],
  ) {
    this.check = new CheckpointCheck(heads);
    this.#boundaries = this.check.boundaries;
  }
  /** The chain's next entry (its leaf hash), on file line `line`. */
  add(leaf: Uint8Array, line: number): void {
    if (this.#boundaries.has(this.#count)) this.#lines.set(this.#count, line);
    this.#count++;
    this.#lastLine = line;
    this.check.add(leaf);
  }
  lineOf(index: number): number | undefined {
    return this.#lines.get(index);
  }
  get lastLine(): number | undefined {
    return this.#lastLine;
  }
}

/** `i/n` when `origin` is the chain of a shard of the same sweep that no checkpoint of this file covers. */
function _absentShard(origin: string, chains: ReadonlyMap<number, Checkpoint>): string | undefined {
  const [any] = chains.values();
  const count = any?.shard?.count;
  if (!any || count === undefined) return undefined;
  for (let index = 1; index <= count; index++)
    if (!chains.has(index) && chainOrigin(any.experiment, { index, count }) === origin) return `${index}/${count}`;
  return undefined;
}

/**
 * Reads the kept tree heads in `path` and matches each to the chain whose origin it
 * names (by shard number), its signature checked under that chain's key. Problems
 * (a note of no chain of this file, a bad signature) go to `problems`.
 */
export function keptHeads(
  path: string,
  chains: ReadonlyMap<number, Checkpoint>,
  keys: KeyCheckOptions,
  problems: ProblemSink,
): Map<number, KeptChain> {
  const text = readNamedFile(path, 'kept checkpoint').toString('utf8');
  const byShard = new Map<number, { origin: string; heads: SignedCheckpoint[] }>();
  let notes: string[];
  try {
    notes = splitNotes(text, path, 'keep what `witness sim checkpoint RESULTS` prints');
  } catch (error) {
    if (!(error instanceof WitnessError)) throw error;
    problems.push(problem('MALFORMED', error.message));
    return new Map();
  }
  for (const [i, note] of notes.entries()) {
    const what = `the kept checkpoint ${i + 1} (${path})`;
    const end = note.indexOf('\n\n');
    if (end < 0) {
      problems.push(
        problem(
          'MALFORMED',
          `${what} has no signature after its text (a blank line, then "— NAME SIGNATURE" lines): it is not what \`witness sim checkpoint\` prints`,
        ),
      );
      continue;
    }
    let origin: string;
    try {
      origin = parseCheckpointBody(note.slice(0, end + 1)).origin;
    } catch (error) {
      problems.push(problem('MALFORMED', `${what}: ${(error as Error).message}`));
      continue;
    }
    const shard = [...chains.entries()].find(([, cp]) => chainOrigin(cp.experiment, cp.shard) === origin);
    const absent = shard ? undefined : _absentShard(origin, chains);
    if (absent) {
      problems.push(
        problem(
          'SHARD_MISSING',
          `${what} is of shard ${absent}, which this file does not hold: a kept checkpoint of a shard can be checked only against that shard's lines; give the kept checkpoints of the shards the file holds (--allow-partial accepts a file without a shard, not a checkpoint of it)`,
        ),
      );
      continue;
    }
    if (!shard) {
      problems.push(
        problem(
          'INCONSISTENT',
          `${what} is of the log ${origin}, and no chain of this file is that log: the file is not the one it was kept for (another experiment or shard)`,
        ),
      );
      continue;
    }
    const [index, cp] = shard;
    const key = keys.directory.get(cp.key_id);
    if (!key) continue; // reported with the checkpoint's own signature
    try {
      const head = readTreeHead(note, origin, key);
      const entry = byShard.get(index) ?? { origin, heads: [] };
      entry.heads.push(head);
      byShard.set(index, entry);
    } catch (error) {
      const reason = error instanceof WitnessError ? error.message : String(error);
      problems.push(
        problem('BAD_SIGNATURE', `${what} is not signed by key ${cp.key_id} for the log ${origin}: ${reason}`),
      );
    }
  }
  return new Map([...byShard].map(([shard, { origin, heads }]) => [shard, new KeptChain(origin, heads)]));
}

/**
 * Each chain's verdict once the file has been read, naming the file line of the first
 * changed entry when the kept sizes pin it, else the lines it lies between.
 */
export function finishKeptHeads(chains: ReadonlyMap<number, KeptChain>, problems: ProblemSink): void {
  for (const [shard, chain] of chains) {
    const result = chain.check.result();
    if (result.ok) continue;
    const label = ` (chain of shard ${shard}, log ${chain.origin})`;
    if (result.code === 'TRUNCATED') {
      const after =
        chain.lastLine === undefined ? 'the chain has no line left' : `its last line is file line ${chain.lastLine}`;
      const intact = result.intact > 0 ? `; a kept checkpoint proves its first ${result.intact} lines unchanged` : '';
      problems.push(
        problem(
          'TRUNCATED',
          `the file's chain holds ${result.logSize} lines and the kept checkpoint signed ${result.size}${label}: lines were cut off its end, or the file rolled back to an older state; the first missing is the chain's line ${result.firstMissing + 1} (${after})${intact}`,
        ),
      );
      continue;
    }
    const { from, to } = result.firstChanged;
    const at = chain.lineOf(from);
    const where =
      from === to
        ? `the first changed line is the chain's line ${from + 1}${at === undefined ? '' : ` (file line ${at})`}`
        : `the first changed line is one of the chain's lines ${from + 1}–${to + 1}${at === undefined ? '' : `, from file line ${at}`}${from > 0 ? ` (a kept checkpoint proves the first ${from} unchanged)` : ''}; a tree head proves only that one of the lines it signs differs, not which: keep one more often (all in one file) to narrow it`;
    problems.push(
      problem(
        'INCONSISTENT',
        `the first ${result.size} lines of the file's chain do not have the root the kept checkpoint signed${label}: lines among them were changed, removed, inserted or reordered, or the chain was rewritten; ${where}`,
        from === to ? at : undefined,
      ),
    );
  }
}
