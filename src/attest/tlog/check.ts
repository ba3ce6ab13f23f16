/**
 * @module
 * Completeness of a log against checkpoints: the one check that catches what hash
 * chains cannot — a log cut short (`TRUNCATED`) or rolled back and rewritten, edited,
 * reordered or forked (`INCONSISTENT`). The log is append-only-extended from a
 * checkpoint exactly when it holds at least `size` entries and its first `size` leaf
 * hashes have the checkpoint's root. Leaf hashes stream through one `MerkleFrontier`
 * whatever the number of checkpoints, so memory stays O(log n + checkpoints).
 *
 * Where the change is: a root is a hash of all `size` leaves, so one checkpoint proves
 * only that some entry among them differs, never which (the root of a prefix cannot
 * be derived from it). Several checkpoints of the same log, kept as it grew, narrow it:
 * the first changed entry lies past the largest kept size whose root still matches and
 * within the smallest whose root does not — named exactly when those sizes are one apart.
 */
import type { Problem } from '../../core/problem.js';
import { MerkleFrontier } from '../../core/tlog/merkle.js';
import type { TreeHead } from './checkpoint.js';

/** A checkpoint to check against: its size and root (origin for messages). */
export type CheckedHead = Pick<TreeHead, 'size' | 'root'> & { origin?: string };

/**
 * A log that does not extend a checkpoint is a problem of the one shape, without `at`:
 * where it differs is given in entries (0-based), for the caller to name in its terms.
 */
export type LogCheck =
  | { ok: true /** Entries in the log (≥ every checkpoint's size). */; logSize: number }
  | (Problem<'TRUNCATED'> & {
      ok: false;
      /** 0-based index of the first entry a checkpoint covers that the log lacks (= logSize). */
      firstMissing: number;
      /** The largest checkpoint size, past the log's end. */
      size: number;
      logSize: number;
      /** Entries a kept checkpoint proves unchanged: the largest matching size ≤ logSize (0 when none). */
      intact: number;
    })
  | (Problem<'INCONSISTENT'> & {
      ok: false;
      /** The smallest checkpoint size whose root differs. */
      size: number;
      /** The log's own root at that size. */
      logRoot: Buffer;
      logSize: number;
      /** 0-based, inclusive: the first changed entry is one of `from`..`to` (exact when equal). */
      firstChanged: { from: number; to: number };
    });

/**
 * Incremental form of `checkLogAgainstCheckpoint`, for a reader that pages through a
 * log: `add` each entry's leaf hash (`leafHash(entryBytes)`) in order, then `result()`.
 * Given several checkpoints of one log (kept as it grew), the result narrows where it changed.
 */
export class CheckpointCheck {
  readonly #heads: CheckedHead[];
  readonly #frontier = new MerkleFrontier();
  /** The log's root at each checkpoint size reached. */
  readonly #roots = new Map<number, Buffer>();
  /** Sizes still to reach, ascending. */
  readonly #pending: number[];
  /** Entries past the largest checkpoint's size: counted, not hashed. */
  #extra = 0;
  readonly #last: number;
  constructor(heads: CheckedHead | readonly CheckedHead[]) {
    this.#heads = [...(Array.isArray(heads) ? heads : [heads as CheckedHead])].sort((a, b) => a.size - b.size);
    if (this.#heads.length === 0) throw new RangeError('A log is checked against at least one checkpoint.');
    this.#pending = [...new Set(this.#heads.map((h) => h.size))];
    this.#last = this.#pending.at(-1) as number;
    this.#reach();
  }
  /** The largest checkpoint size checked against: what a passing log is shown to extend. */
  get largest(): number {
    return this.#last;
  }
  /**
   * The 0-based entry indexes at which a first changed entry can be named exactly:
   * 0 and each checkpoint's size. A reader that wants to describe that entry keeps these.
   */
  get boundaries(): ReadonlySet<number> {
    return new Set([0, ...this.#heads.map((h) => h.size)]);
  }
  add(leaf: Uint8Array): void {
    if (this.#frontier.size < this.#last) {
      this.#frontier.appendLeafHash(leaf);
      this.#reach();
    } else {
      this.#extra++;
      if (leaf.length !== 32) throw new RangeError(`A leaf hash has 32 bytes; this one has ${leaf.length}.`);
    }
  }
  #reach(): void {
    while (this.#pending[0] === this.#frontier.size)
      this.#roots.set(this.#pending.shift() as number, this.#frontier.root());
  }
  result(): LogCheck {
    const logSize = this.#frontier.size + this.#extra;
    let intact = 0;
    for (const head of this.#heads) {
      const root = this.#roots.get(head.size);
      if (root === undefined) break; // past the log's end: every larger one too
      if (root.equals(head.root)) {
        intact = Math.max(intact, head.size);
        continue;
      }
      const of = head.origin ? ` of ${head.origin}` : '';
      const from = intact;
      const to = head.size - 1;
      const where =
        from === to
          ? `entry ${from + 1} is the first changed`
          : `the first changed entry is one of entries ${from + 1}–${to + 1}${from > 0 ? `: a kept checkpoint proves the first ${from} unchanged` : ''}`;
      return {
        ok: false,
        code: 'INCONSISTENT',
        size: head.size,
        logRoot: root,
        logSize,
        firstChanged: { from, to },
        message: `The log's first ${head.size} entries do not have the root a checkpoint${of} signed for size ${head.size}: an entry among them was changed, removed, inserted or reordered, or the log was rolled back and rewritten (a fork); ${where}.`,
      };
    }
    const largest = this.#heads.at(-1) as CheckedHead;
    if (largest.size > logSize) {
      const of = largest.origin ? ` of ${largest.origin}` : '';
      return {
        ok: false,
        code: 'TRUNCATED',
        firstMissing: logSize,
        size: largest.size,
        logSize,
        intact,
        message: `The log holds ${logSize} entries, but a checkpoint${of} signed for ${largest.size}: the last ${largest.size - logSize} it covers (from entry ${logSize + 1}) and any after them were cut off or rolled back.`,
      };
    }
    return { ok: true, logSize };
  }
}

/**
 * Checks a log (its entries' leaf hashes, in order, sync or async) against one or more
 * verified checkpoints of it (see `parseCheckpoint`): `{ok: true}` when the log extends
 * them append-only.
 * @example await checkLogAgainstCheckpoint(lines.map((l) => leafHash(l)), parseCheckpoint(text, [logVkey]))
 */
export async function checkLogAgainstCheckpoint(
  leafHashes: Iterable<Uint8Array> | AsyncIterable<Uint8Array>,
  checkpoint: CheckedHead | readonly CheckedHead[],
): Promise<LogCheck> {
  const check = new CheckpointCheck(checkpoint);
  if (Symbol.asyncIterator in leafHashes) for await (const h of leafHashes) check.add(h);
  else for (const h of leafHashes) check.add(h);
  return check.result();
}
