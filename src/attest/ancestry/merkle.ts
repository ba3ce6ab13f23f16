/**
 * @module
 * The Merkle chain (attest.md §1): each receipt commits to its whole ancestry with an
 * RFC 6962 Merkle tree head over the digests of its ancestors (root first), so one
 * ancestor can be proven with a logarithmic inclusion proof instead of the whole path.
 * Hashing follows RFC 6962 §2.1 exactly — leaf = SHA-256(0x00 ‖ data), node =
 * SHA-256(0x01 ‖ left ‖ right), split at the largest power of two below n — so the
 * roots match other transparency-log implementations. Its limit is the chain's: the
 * commitment is still signed by the child alone.
 */
import { hash } from 'node:crypto';
import type { PreparedReceipt, Receipt } from '../receipt.js';
import { receiptDigest } from '../receipt.js';
import { type Reason, reason } from '../reasons.js';

const LEAF = Buffer.from([0x00]);
const NODE = Buffer.from([0x01]);

// One-shot crypto.hash over a reused buffer: a path verifier hashes many tiny inputs,
// where createHash's per-call object and Buffer.concat cost more than the hashing.
const _scratch = Buffer.alloc(65);

export function leafHash(data: Uint8Array): Buffer {
  if (data.length !== 32) return hash('sha256', Buffer.concat([LEAF, data]), 'buffer');
  _scratch[0] = 0x00;
  _scratch.set(data, 1);
  return hash('sha256', _scratch.subarray(0, 33), 'buffer');
}

export function nodeHash(left: Uint8Array, right: Uint8Array): Buffer {
  if (left.length !== 32 || right.length !== 32) return hash('sha256', Buffer.concat([NODE, left, right]), 'buffer');
  _scratch[0] = 0x01;
  _scratch.set(left, 1);
  _scratch.set(right, 33);
  return hash('sha256', _scratch, 'buffer');
}

const EMPTY_ROOT = hash('sha256', Buffer.alloc(0), 'buffer');

/** RFC 6962 Merkle Tree Hash of the leaf data, by the recursive definition. */
export function merkleRoot(leaves: readonly Uint8Array[]): Buffer {
  if (leaves.length === 0) return Buffer.from(EMPTY_ROOT);
  if (leaves.length === 1) return leafHash(leaves[0] as Uint8Array);
  const k = _split(leaves.length);
  return nodeHash(merkleRoot(leaves.slice(0, k)), merkleRoot(leaves.slice(k)));
}

/**
 * An append-only tree kept as its perfect subtrees (largest first), so a path verifier
 * gets each prefix's root in O(log n) instead of rehashing every ancestor per hop.
 */
export class MerkleFrontier {
  readonly #stack: Array<{ hash: Buffer; size: number }> = [];
  #size = 0;
  get size(): number {
    return this.#size;
  }
  append(data: Uint8Array): void {
    let top = { hash: leafHash(data), size: 1 };
    for (let last = this.#stack.at(-1); last && last.size === top.size; last = this.#stack.at(-1)) {
      this.#stack.pop();
      top = { hash: nodeHash(last.hash, top.hash), size: last.size * 2 };
    }
    this.#stack.push(top);
    this.#size++;
  }
  /** Equal to `merkleRoot` of everything appended: the right-hand subtrees fold in first. */
  root(): Buffer {
    if (this.#stack.length === 0) return Buffer.from(EMPTY_ROOT);
    let hash = (this.#stack.at(-1) as { hash: Buffer }).hash;
    for (let i = this.#stack.length - 2; i >= 0; i--) hash = nodeHash((this.#stack[i] as { hash: Buffer }).hash, hash);
    return hash;
  }
}

/** RFC 6962 §2.1.1 audit path for leaf `index` (0-based), nearest sibling first. */
export function inclusionProof(leaves: readonly Uint8Array[], index: number): Buffer[] {
  if (!Number.isInteger(index) || index < 0 || index >= leaves.length) throw new RangeError(`No leaf ${index} in a tree of ${leaves.length}.`);
  if (leaves.length === 1) return [];
  const k = _split(leaves.length);
  return index < k
    ? [...inclusionProof(leaves.slice(0, k), index), merkleRoot(leaves.slice(k))]
    : [...inclusionProof(leaves.slice(k), index - k), merkleRoot(leaves.slice(0, k))];
}

/** RFC 9162 §2.1.3.2: does `proof` place `leafData` at `index` of a tree of `size` with `root`? */
export function verifyInclusion(leafData: Uint8Array, index: number, size: number, proof: readonly Uint8Array[], root: Uint8Array): boolean {
  if (!Number.isInteger(index) || !Number.isInteger(size) || index < 0 || index >= size) return false;
  let fn = index;
  let sn = size - 1;
  let r: Buffer = leafHash(leafData);
  for (const p of proof) {
    if (sn === 0) return false;
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
  return sn === 0 && r.equals(Buffer.from(root));
}

/** The ancestry root a receipt with these ancestors (root first) must carry. */
export function ancestryRoot(ancestors: readonly Receipt[]): string {
  return merkleRoot(ancestors.map((a) => Buffer.from(receiptDigest(a), 'hex'))).toString('hex');
}

/** Checks `receipt.ancestry_root` against the frontier of the ancestors before it. */
export function checkAncestryRoot(frontier: MerkleFrontier, child: PreparedReceipt, index: number): Reason[] {
  if (child.receipt.ancestry_root !== undefined && frontier.root().equals(Buffer.from(child.receipt.ancestry_root, 'hex'))) return [];
  return [reason('PARENT_DIGEST_MISMATCH', `Receipt ${index}'s Merkle ancestry root does not commit to the ${index} ancestor(s) supplied before it.`, index)];
}

/** A proof that `ancestors[index]` is committed in a receipt whose ancestors are `ancestors`. */
export interface AncestorProof {
  index: number;
  size: number;
  /** Sibling hashes, hex, nearest first. */
  proof: string[];
}

export function proveAncestor(ancestors: readonly Receipt[], index: number): AncestorProof {
  const leaves = ancestors.map((a) => Buffer.from(receiptDigest(a), 'hex'));
  return { index, size: leaves.length, proof: inclusionProof(leaves, index).map((h) => h.toString('hex')) };
}

/**
 * True when `ancestor` sits at `proof.index` of `receipt`'s committed ancestry. Checks
 * the commitment only; the signatures of both receipts are the verifier's job.
 */
export function verifyAncestorProof(receipt: Receipt, ancestor: Receipt, proof: AncestorProof): boolean {
  if (receipt.construction !== 'merkle' || receipt.ancestry_root === undefined || proof.size !== receipt.depth) return false;
  const siblings = proof.proof.map((h) => Buffer.from(h, 'hex'));
  return verifyInclusion(Buffer.from(receiptDigest(ancestor), 'hex'), proof.index, proof.size, siblings, Buffer.from(receipt.ancestry_root, 'hex'));
}

function _split(n: number): number {
  let k = 1;
  while (k * 2 < n) k *= 2;
  return k;
}
