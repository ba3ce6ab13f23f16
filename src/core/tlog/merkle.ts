/**
 * @module
 * RFC 6962 / RFC 9162 Merkle trees over 32-byte SHA-256 hashes: the one implementation
 * behind the receipts' Merkle ancestry (attest/ancestry/merkle.ts) and the
 * transparency-log checkpoints (attest/tlog). Hashing is RFC 9162 §2.1.1 exactly —
 * leaf = SHA-256(0x00 ‖ data), node = SHA-256(0x01 ‖ left ‖ right), split at the
 * largest power of two below n — so roots and proofs match Certificate Transparency,
 * Go's `golang.org/x/mod/sumdb/tlog` and the C2SP logs.
 *
 * Two kinds of input: leaf *data* (`merkleRoot`, `inclusionProof`, `verifyInclusion`,
 * `MerkleFrontier.append`) and leaf *hashes* (everything named `…Hashes`/`…LeafHash`,
 * the consistency proofs), for logs that store the hash of each entry. Sizes are
 * JavaScript integers: trees of up to 2^53 − 1 leaves.
 */
import { hash } from 'node:crypto';

const LEAF = Buffer.from([0x00]);
const NODE = Buffer.from([0x01]);

// One-shot crypto.hash over a reused buffer: a path verifier hashes many tiny inputs,
// where createHash's per-call object and Buffer.concat cost more than the hashing.
// Digests come out as latin1 strings (one char per byte) and stay strings inside the
// frontier: crypto.hash's 'buffer' output cost 0.77 µs a call on Node 20 here, 'binary' (latin1)
// 0.22 µs, and a signed sweep hashes about two tree nodes per line (NOTES.md, Simulator).
const _scratch = Buffer.alloc(65);
const _leafInput = _scratch.subarray(0, 33);

/** SHA-256 of 0x00 ‖ 32 bytes already in `_scratch[1..33)`, as latin1. */
function _leafDigest(): string {
  _scratch[0] = 0x00;
  return hash('sha256', _leafInput, 'binary');
}

/** SHA-256 of 0x01 ‖ left ‖ right, both latin1 digests, as latin1. */
function _nodeDigest(left: string, right: string): string {
  _scratch[0] = 0x01;
  _scratch.write(left, 1, 32, 'latin1');
  _scratch.write(right, 33, 32, 'latin1');
  return hash('sha256', _scratch, 'binary');
}

/** RFC 9162 §2.1.1: the hash of one leaf's data. */
export function leafHash(data: Uint8Array): Buffer {
  if (data.length !== 32) return hash('sha256', Buffer.concat([LEAF, data]), 'buffer');
  _scratch.set(data, 1);
  return Buffer.from(_leafDigest(), 'latin1');
}

/** RFC 9162 §2.1.1: the hash of an interior node. */
export function nodeHash(left: Uint8Array, right: Uint8Array): Buffer {
  if (left.length !== 32 || right.length !== 32) return hash('sha256', Buffer.concat([NODE, left, right]), 'buffer');
  _scratch[0] = 0x01;
  _scratch.set(left, 1);
  _scratch.set(right, 33);
  return Buffer.from(hash('sha256', _scratch, 'binary'), 'latin1');
}

/** The root of the empty tree: SHA-256 of nothing. */
export const EMPTY_ROOT: Buffer = hash('sha256', Buffer.alloc(0), 'buffer');

/** RFC 6962 Merkle Tree Hash of the leaf data, by the recursive definition. */
export function merkleRoot(leaves: readonly Uint8Array[]): Buffer {
  return rootOfHashes(leaves.map(leafHash));
}

/** The Merkle Tree Hash of a tree whose leaf hashes are given. */
export function rootOfHashes(leafHashes: readonly Uint8Array[]): Buffer {
  return leafHashes.length === 0 ? Buffer.from(EMPTY_ROOT) : _subtree(leafHashes, 0, leafHashes.length);
}

/**
 * An append-only tree kept as its perfect subtrees (largest first): the root at any
 * size in O(log n) memory, so a 2M-line log is checked while it streams past, and a
 * path verifier gets each prefix's root without rehashing every ancestor per hop.
 * The subtrees' sizes are the set bits of the leaf count, so only their hashes are
 * kept (latin1 digests, see `_scratch`).
 */
export class MerkleFrontier {
  readonly #stack: string[] = [];
  #size = 0;
  get size(): number {
    return this.#size;
  }
  /** Appends a leaf by its data. */
  append(data: Uint8Array): void {
    if (data.length !== 32) {
      this.appendLeafHash(leafHash(data));
      return;
    }
    _scratch.set(data, 1);
    this.#push(_leafDigest());
  }
  /** Appends a leaf whose data is 32 bytes given as 64 hex digits (a digest a log already holds as hex: no Buffer per leaf). */
  appendHexData(dataHex: string): void {
    if (_scratch.write(dataHex, 1, 32, 'hex') !== 32 || dataHex.length !== 64)
      throw new RangeError('A leaf given as hex is 64 hex digits (32 bytes).');
    this.#push(_leafDigest());
  }
  /** Appends a leaf by its hash (32 bytes). */
  appendLeafHash(leaf: Uint8Array): void {
    _check32(leaf, 'leaf hash');
    this.#push(Buffer.from(leaf.buffer, leaf.byteOffset, 32).toString('latin1'));
  }
  /** The new leaf closes one perfect subtree per trailing 1 bit of the old size: fold them in. */
  #push(leaf: string): void {
    let top = leaf;
    for (let n = this.#size; n % 2 === 1; n = (n - 1) / 2) top = _nodeDigest(this.#stack.pop() as string, top);
    this.#stack.push(top);
    this.#size++;
  }
  /** Equal to `merkleRoot` of everything appended: the right-hand subtrees fold in first. */
  root(): Buffer {
    if (this.#stack.length === 0) return Buffer.from(EMPTY_ROOT);
    let acc = this.#stack.at(-1) as string;
    for (let i = this.#stack.length - 2; i >= 0; i--) acc = _nodeDigest(this.#stack[i] as string, acc);
    return Buffer.from(acc, 'latin1');
  }
}

/** RFC 9162 §2.1.3.1 inclusion proof (audit path) for leaf `index` (0-based), nearest sibling first. */
export function inclusionProofOfHashes(leafHashes: readonly Uint8Array[], index: number): Buffer[] {
  if (!Number.isInteger(index) || index < 0 || index >= leafHashes.length)
    throw new RangeError(`No leaf ${index} in a tree of ${leafHashes.length}.`);
  const out: Buffer[] = [];
  let lo = 0;
  let hi = leafHashes.length;
  // Walk down from the root, collecting the sibling of each subtree the leaf is in; the
  // proof lists them from the leaf up, so the walk's order is reversed at the end.
  while (hi - lo > 1) {
    const k = lo + _split(hi - lo);
    if (index < k) {
      out.push(_subtree(leafHashes, k, hi));
      hi = k;
    } else {
      out.push(_subtree(leafHashes, lo, k));
      lo = k;
    }
  }
  return out.reverse();
}

/** `inclusionProofOfHashes` over leaf data. */
export function inclusionProof(leaves: readonly Uint8Array[], index: number): Buffer[] {
  return inclusionProofOfHashes(leaves.map(leafHash), index);
}

/** RFC 9162 §2.1.3.2: does `proof` place the leaf hash at `index` of a tree of `size` with `root`? */
export function verifyInclusionOfHash(
  leaf: Uint8Array,
  index: number,
  size: number,
  proof: readonly Uint8Array[],
  root: Uint8Array,
): boolean {
  if (!_isSize(index) || !_isSize(size) || index >= size || leaf.length !== 32 || root.length !== 32) return false;
  let fn = index;
  let sn = size - 1;
  let r: Buffer = Buffer.from(leaf);
  for (const p of proof) {
    if (sn === 0 || p.length !== 32) return false;
    if (fn % 2 === 1 || fn === sn) {
      r = nodeHash(p, r);
      while (fn % 2 === 0 && fn !== 0) {
        fn = Math.floor(fn / 2);
        sn = Math.floor(sn / 2);
      }
    } else {
      r = nodeHash(r, p);
    }
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  return sn === 0 && r.equals(root);
}

/** `verifyInclusionOfHash` for a leaf given by its data. */
export function verifyInclusion(
  leafData: Uint8Array,
  index: number,
  size: number,
  proof: readonly Uint8Array[],
  root: Uint8Array,
): boolean {
  return verifyInclusionOfHash(leafHash(leafData), index, size, proof, root);
}

/**
 * RFC 9162 §2.1.4.1 consistency proof from the tree of the first `oldSize` leaves to
 * the tree of all of `leafHashes`. Empty when `oldSize` is 0 or the whole tree (the
 * C2SP witness protocol sends an empty proof for those).
 */
export function consistencyProofOfHashes(leafHashes: readonly Uint8Array[], oldSize: number): Buffer[] {
  const n = leafHashes.length;
  if (!Number.isInteger(oldSize) || oldSize < 0 || oldSize > n)
    throw new RangeError(`No consistency proof from size ${oldSize} to a tree of ${n}.`);
  if (oldSize === 0 || oldSize === n) return [];
  return consistencyProofBy(oldSize, n, (lo, hi) => _subtree(leafHashes, lo, hi));
}

/**
 * The consistency proof from `oldSize` to `newSize`, given the root of any range of
 * leaves [lo, hi): a tree that keeps its interior nodes (tree.ts) answers each in
 * O(log n) instead of rehashing the range.
 */
export function consistencyProofBy(
  oldSize: number,
  newSize: number,
  subtree: (lo: number, hi: number) => Buffer,
): Buffer[] {
  if (oldSize === 0 || oldSize === newSize) return [];
  const out: Buffer[] = [];
  _subproof(subtree, oldSize, 0, newSize, true, out);
  return out;
}

/** `consistencyProofOfHashes` over leaf data. */
export function consistencyProof(leaves: readonly Uint8Array[], oldSize: number): Buffer[] {
  return consistencyProofOfHashes(leaves.map(leafHash), oldSize);
}

/**
 * RFC 9162 §2.1.4.2: does `proof` show the tree of `oldSize` with `oldRoot` is a prefix
 * of the tree of `newSize` with `newRoot`? Equal sizes need an empty proof and equal
 * roots; from size 0 (the empty tree, `EMPTY_ROOT`) every tree extends with an empty proof.
 */
export function verifyConsistency(
  oldSize: number,
  newSize: number,
  oldRoot: Uint8Array,
  newRoot: Uint8Array,
  proof: readonly Uint8Array[],
): boolean {
  if (!_isSize(oldSize) || !_isSize(newSize) || oldSize > newSize || oldRoot.length !== 32 || newRoot.length !== 32)
    return false;
  if (proof.some((p) => p.length !== 32)) return false;
  if (oldSize === 0) return proof.length === 0 && EMPTY_ROOT.equals(oldRoot);
  if (oldSize === newSize) return proof.length === 0 && Buffer.from(oldRoot).equals(newRoot);
  const path = _isPowerOfTwo(oldSize) ? [oldRoot, ...proof] : [...proof];
  if (path.length === 0) return false;
  let fn = oldSize - 1;
  let sn = newSize - 1;
  while (fn % 2 === 1) {
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  let fr: Buffer = Buffer.from(path[0] as Uint8Array);
  let sr = fr;
  for (const c of path.slice(1)) {
    if (sn === 0) return false;
    if (fn % 2 === 1 || fn === sn) {
      fr = nodeHash(c, fr);
      sr = nodeHash(c, sr);
      while (fn % 2 === 0 && fn !== 0) {
        fn = Math.floor(fn / 2);
        sn = Math.floor(sn / 2);
      }
    } else {
      sr = nodeHash(sr, c);
    }
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  return sn === 0 && fr.equals(oldRoot) && sr.equals(newRoot);
}

// RFC 9162 §2.1.4.1 SUBPROOF(m, D[lo:hi], b), appending to `out` in the RFC's order.
function _subproof(
  subtree: (lo: number, hi: number) => Buffer,
  m: number,
  lo: number,
  hi: number,
  complete: boolean,
  out: Buffer[],
): void {
  const n = hi - lo;
  if (m === n) {
    if (!complete) out.push(subtree(lo, hi));
    return;
  }
  const k = _split(n);
  if (m <= k) {
    _subproof(subtree, m, lo, lo + k, complete, out);
    out.push(subtree(lo + k, hi));
  } else {
    _subproof(subtree, m - k, lo + k, hi, false, out);
    out.push(subtree(lo, lo + k));
  }
}

/** The root of leaves [lo, hi) (non-empty), through a frontier: O(hi − lo) time, O(log) memory. */
function _subtree(hashes: readonly Uint8Array[], lo: number, hi: number): Buffer {
  if (hi - lo === 1) return Buffer.from(_check32(hashes[lo] as Uint8Array, 'leaf hash'));
  const f = new MerkleFrontier();
  for (let i = lo; i < hi; i++) f.appendLeafHash(hashes[i] as Uint8Array);
  return f.root();
}

/** The largest power of two below n (n ≥ 2). */
function _split(n: number): number {
  let k = 1;
  while (k * 2 < n) k *= 2;
  return k;
}

function _isPowerOfTwo(n: number): boolean {
  let k = 1;
  while (k < n) k *= 2;
  return k === n;
}

function _isSize(n: number): boolean {
  return Number.isSafeInteger(n) && n >= 0;
}

function _check32(h: Uint8Array, what: string): Uint8Array {
  if (h.length !== 32) throw new RangeError(`A ${what} has 32 bytes; this one has ${h.length}.`);
  return h;
}
