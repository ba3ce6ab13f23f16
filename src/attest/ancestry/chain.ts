/**
 * @module
 * The signed linked list (attest.md §1): each receipt names its parent's digest and
 * its depth, and its own signature covers both. These link checks are the base every
 * construction shares. Their limit, by design of the construction: a holder of the
 * child key alone can sign a reference to any parent it has seen — hash continuity is
 * not the parent's consent.
 */
import type { PreparedReceipt } from '../receipt.js';
import { type Reason, reason } from '../reasons.js';

/**
 * Checks that `child` (at `index` on the path) follows `parent`: digest, depth, issue
 * order. Depth is checked against the parent's (the root's is 0, so on a valid path
 * depth = position): a gap in the path is reported once, where it is, not again at
 * every receipt after it.
 */
export function checkLink(parent: PreparedReceipt, child: PreparedReceipt, index: number): Reason[] {
  const reasons: Reason[] = [];
  const r = child.receipt;
  const expected = parent.receipt.depth + 1;
  if (r.depth !== expected)
    reasons.push(
      reason(
        'DEPTH_MISMATCH',
        `Receipt ${index} says depth ${r.depth}, but its parent on the path (receipt ${index - 1}) has depth ${parent.receipt.depth}, so it must be ${expected}.`,
        index,
      ),
    );
  if (r.parent === null) {
    reasons.push(
      reason(
        'PARENT_DIGEST_MISMATCH',
        `Receipt ${index} claims to be a root (parent null) but follows receipt ${index - 1} on the path.`,
        index,
      ),
    );
  } else if (r.parent !== parent.digest) {
    reasons.push(
      reason(
        'PARENT_DIGEST_MISMATCH',
        `Receipt ${index} names parent ${r.parent.slice(0, 16)}…, but receipt ${index - 1} has digest ${parent.digest.slice(0, 16)}….`,
        index,
      ),
    );
  }
  if (child.issuedAt < parent.issuedAt) {
    reasons.push(
      reason(
        'NOT_YET_VALID',
        `Receipt ${index} was issued (${r.issued_at}) before its parent (${parent.receipt.issued_at}).`,
        index,
      ),
    );
  }
  if (child.issuedAt >= parent.notAfter) {
    reasons.push(
      reason(
        'EXPIRED',
        `Receipt ${index} was issued (${r.issued_at}) after its parent's validity ended (${parent.receipt.not_after}).`,
        index,
      ),
    );
  }
  return reasons;
}

/** Checks the root of a path: no parent, depth 0. */
export function checkRoot(root: PreparedReceipt): Reason[] {
  const r = root.receipt;
  if (r.parent !== null) {
    return [
      reason(
        'PARENT_MISSING',
        `Receipt 0 names parent ${r.parent.slice(0, 16)}…, which was not supplied; give the whole path root → leaf ({"path": [...]}).`,
        0,
      ),
    ];
  }
  return r.depth === 0
    ? []
    : [reason('DEPTH_MISMATCH', `The root receipt says depth ${r.depth}; a root has depth 0.`, 0)];
}
