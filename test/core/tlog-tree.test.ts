import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  consistencyProofOfHashes,
  EMPTY_ROOT,
  leafHash,
  rootOfHashes,
  verifyConsistency,
} from '../../src/core/tlog/merkle.js';
import { MerkleTree } from '../../src/core/tlog/tree.js';

const hashes = (n: number) => Array.from({ length: n }, (_, i) => leafHash(Buffer.from(`entry ${i}`)));

describe('MerkleTree (interior nodes kept)', () => {
  it('gives the root and the consistency proof of every prefix that the list form gives', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 200 }), fc.nat(), fc.nat(), (n, pickNew, pickOld) => {
        const leaves = hashes(n);
        const tree = new MerkleTree();
        for (const h of leaves) tree.appendLeafHash(h);
        const size = pickNew % (n + 1);
        const old = pickOld % (size + 1);
        expect(tree.root(size)).toEqual(size === 0 ? EMPTY_ROOT : rootOfHashes(leaves.slice(0, size)));
        const proof = tree.consistencyProof(old, size);
        expect(proof).toEqual(consistencyProofOfHashes(leaves.slice(0, size), old));
        expect(verifyConsistency(old, size, tree.root(old), tree.root(size), proof)).toBe(true);
      }),
      { numRuns: 300 },
    );
  });

  it('refuses sizes it does not hold', () => {
    const tree = new MerkleTree();
    for (const h of hashes(3)) tree.appendLeafHash(h);
    expect(() => tree.root(4)).toThrow(RangeError);
    expect(() => tree.consistencyProof(3, 2)).toThrow(RangeError);
    expect(() => tree.appendLeafHash(Buffer.alloc(31))).toThrow(RangeError);
  });
});
