/**
 * @module
 * An append-only Merkle tree that keeps its interior nodes: what a log that submits
 * checkpoints to witnesses needs, since a consistency proof from any older size names
 * subtrees a frontier (merkle.ts) has already folded away. Level k holds the hash of
 * every complete, aligned run of 2^k leaves, each level in one growing buffer, so a
 * leaf costs about two hashes and 64 bytes, and a root or proof at any size is
 * O(log² n) node look-ups — never a rehash of the log.
 */
import { consistencyProofBy, EMPTY_ROOT, nodeHash } from './merkle.js';

export class MerkleTree {
  /** levels[k]: the complete nodes of height k, 32 bytes each, left to right. */
  readonly #levels: Buffer[] = [];
  /** Nodes per level (the buffers grow by doubling, so their length is capacity). */
  readonly #counts: number[] = [];

  get size(): number {
    return this.#counts[0] ?? 0;
  }

  /** Appends one leaf by its hash (32 bytes). */
  appendLeafHash(leaf: Uint8Array): void {
    if (leaf.length !== 32) throw new RangeError(`A leaf hash has 32 bytes; this one has ${leaf.length}.`);
    let node: Uint8Array = leaf;
    for (let k = 0; ; k++) {
      const i = this.#push(k, node);
      if (i % 2 === 0) return;
      node = nodeHash(this.#node(k, i - 1), node);
    }
  }

  /** The root of the first `size` leaves (default: all). */
  root(size = this.size): Buffer {
    this.#checkSize(size);
    return size === 0 ? Buffer.from(EMPTY_ROOT) : this.#range(0, size);
  }

  /** RFC 9162 §2.1.4.1 consistency proof from `oldSize` to `newSize` (default: all). */
  consistencyProof(oldSize: number, newSize = this.size): Buffer[] {
    this.#checkSize(newSize);
    if (!Number.isSafeInteger(oldSize) || oldSize < 0 || oldSize > newSize)
      throw new RangeError(`No consistency proof from size ${oldSize} to ${newSize}.`);
    return consistencyProofBy(oldSize, newSize, (lo, hi) => this.#range(lo, hi));
  }

  #checkSize(size: number): void {
    if (!Number.isSafeInteger(size) || size < 0 || size > this.size)
      throw new RangeError(`The tree holds ${this.size} leaves, not ${size}.`);
  }

  /** The root of leaves [lo, hi): a stored node when the range is one aligned power of two, else split as RFC 9162 does. */
  #range(lo: number, hi: number): Buffer {
    const n = hi - lo;
    const height = Math.log2(n);
    if (Number.isInteger(height) && lo % n === 0) return Buffer.from(this.#node(height, lo / n));
    let k = 1;
    while (k * 2 < n) k *= 2;
    return nodeHash(this.#range(lo, lo + k), this.#range(lo + k, hi));
  }

  #node(level: number, index: number): Buffer {
    return (this.#levels[level] as Buffer).subarray(index * 32, index * 32 + 32);
  }

  #push(level: number, hash: Uint8Array): number {
    const count = this.#counts[level] ?? 0;
    let buf = this.#levels[level];
    if (!buf || buf.length < (count + 1) * 32) {
      const grown = Buffer.allocUnsafe(Math.max(64 * 32, (buf?.length ?? 0) * 2));
      buf?.copy(grown);
      buf = grown;
      this.#levels[level] = buf;
    }
    buf.set(hash, count * 32);
    this.#counts[level] = count + 1;
    return count;
  }
}
