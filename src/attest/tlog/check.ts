/**
 * @module
 * Completeness of a log against a checkpoint: the one check that catches what hash
 * chains cannot — a log cut short (`TRUNCATED`) or rolled back and rewritten, edited,
 * reordered or forked (`INCONSISTENT`). The log is append-only-extended from the
 * checkpoint exactly when it holds at least `size` entries and its first `size` leaf
 * hashes have the checkpoint's root. Leaf hashes stream through a `MerkleFrontier`, so
 * memory stays O(log n) whatever the log's length.
 */
import { MerkleFrontier } from '../../core/tlog/merkle.js';
import type { TreeHead } from './checkpoint.js';

export type LogCheck =
  | { ok: true; /** Entries in the log (≥ the checkpoint's size). */ logSize: number }
  | { ok: false; code: 'TRUNCATED'; /** 0-based index of the first entry the checkpoint covers that the log lacks. */ firstMissing: number; logSize: number; message: string }
  | { ok: false; code: 'INCONSISTENT'; /** The checkpoint's size, where the roots differ. */ size: number; /** The log's own root at that size. */ logRoot: Buffer; logSize: number; message: string };

/**
 * Incremental form of `checkLogAgainstCheckpoint`, for a reader that pages through a
 * log: `add` each entry's leaf hash (`leafHash(entryBytes)`) in order, then `result()`.
 */
export class CheckpointCheck {
  readonly #head: Pick<TreeHead, 'size' | 'root'> & { origin?: string };
  readonly #frontier = new MerkleFrontier();
  #rootAtSize: Buffer | undefined;
  /** Entries past the checkpoint's size: counted, not hashed. */
  #extra = 0;
  constructor(head: Pick<TreeHead, 'size' | 'root'> & { origin?: string }) {
    this.#head = head;
    if (head.size === 0) this.#rootAtSize = this.#frontier.root();
  }
  add(leaf: Uint8Array): void {
    if (this.#frontier.size < this.#head.size) {
      this.#frontier.appendLeafHash(leaf);
      if (this.#frontier.size === this.#head.size) this.#rootAtSize = this.#frontier.root();
    } else {
      this.#extra++;
      if (leaf.length !== 32) throw new RangeError(`A leaf hash has 32 bytes; this one has ${leaf.length}.`);
    }
  }
  result(): LogCheck {
    const { size, root } = this.#head;
    const logSize = this.#frontier.size + this.#extra;
    const of = this.#head.origin ? ` of ${this.#head.origin}` : '';
    if (this.#rootAtSize === undefined) {
      return { ok: false, code: 'TRUNCATED', firstMissing: logSize, logSize, message: `The log holds ${logSize} entries, but a checkpoint${of} signed for ${size}: entries ${logSize}–${size - 1} (0-based) and any after them were cut off or rolled back.` };
    }
    if (!this.#rootAtSize.equals(root)) {
      return { ok: false, code: 'INCONSISTENT', size, logRoot: this.#rootAtSize, logSize, message: `The log's first ${size} entries do not have the root a checkpoint${of} signed for size ${size}: an entry among them was changed, removed, inserted or reordered, or the log was rolled back and rewritten (a fork).` };
    }
    return { ok: true, logSize };
  }
}

/**
 * Checks a log (its entries' leaf hashes, in order, sync or async) against a verified
 * checkpoint (see `parseCheckpoint`): `{ok: true}` when the log extends it append-only.
 * @example await checkLogAgainstCheckpoint(lines.map((l) => leafHash(l)), parseCheckpoint(text, [logVkey]))
 */
export async function checkLogAgainstCheckpoint(leafHashes: Iterable<Uint8Array> | AsyncIterable<Uint8Array>, checkpoint: Pick<TreeHead, 'size' | 'root'> & { origin?: string }): Promise<LogCheck> {
  const check = new CheckpointCheck(checkpoint);
  if (Symbol.asyncIterator in leafHashes) for await (const h of leafHashes) check.add(h);
  else for (const h of leafHashes) check.add(h);
  return check.result();
}
