/**
 * @module
 * The Merkle chain (attest.md §1): each receipt commits to its whole ancestry with an
 * RFC 6962 Merkle tree head over the digests of its ancestors (root first), so one
 * ancestor can be proven with a logarithmic inclusion proof instead of the whole path.
 * The tree itself is core's one RFC 6962 implementation (core/tlog/merkle.ts), so the
 * roots match other transparency-log implementations. Its limit is the chain's: the
 * commitment is still signed by the child alone.
 */
import { inclusionProof, type MerkleFrontier, merkleRoot, verifyInclusion } from '../../core/tlog/merkle.js';
import type { PreparedReceipt, Receipt } from '../receipt.js';
import { receiptDigest } from '../receipt.js';
import { type Reason, reason } from '../reasons.js';

/** The ancestry root a receipt with these ancestors (root first) must carry. */
export function ancestryRoot(ancestors: readonly Receipt[]): string {
  return merkleRoot(ancestors.map((a) => Buffer.from(receiptDigest(a), 'hex'))).toString('hex');
}

/** Checks `receipt.ancestry_root` against the frontier of the ancestors before it. */
export function checkAncestryRoot(frontier: MerkleFrontier, child: PreparedReceipt, index: number): Reason[] {
  if (
    child.receipt.ancestry_root !== undefined &&
    frontier.root().equals(Buffer.from(child.receipt.ancestry_root, 'hex'))
  )
    return [];
  return [
    reason(
      'PARENT_DIGEST_MISMATCH',
      `Receipt ${index}'s Merkle ancestry root does not commit to the ${index} ancestor(s) supplied before it.`,
      index,
    ),
  ];
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
  if (receipt.construction !== 'merkle' || receipt.ancestry_root === undefined || proof.size !== receipt.depth)
    return false;
  const siblings = proof.proof.map((h) => Buffer.from(h, 'hex'));
  return verifyInclusion(
    Buffer.from(receiptDigest(ancestor), 'hex'),
    proof.index,
    proof.size,
    siblings,
    Buffer.from(receipt.ancestry_root, 'hex'),
  );
}
