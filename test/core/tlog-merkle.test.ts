import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  consistencyProofOfHashes,
  EMPTY_ROOT,
  inclusionProofOfHashes,
  leafHash,
  MerkleFrontier,
  merkleRoot,
  nodeHash,
  rootOfHashes,
  verifyConsistency,
  verifyInclusionOfHash,
} from '../../src/core/tlog/merkle.js';

// Certificate Transparency's reference tree (RFC 6962 test data, as in
// google/certificate-transparency and transparency-dev/merkle): leaves and the
// consistency proofs of ReferenceSnapshotConsistency.
const LEAVES = ['', '00', '10', '2021', '3031', '40414243', '5051525354555657', '606162636465666768696a6b6c6d6e6f'].map(
  (h) => Buffer.from(h, 'hex'),
);
const HASHES = LEAVES.map(leafHash);
const CONSISTENCY: Array<[number, number, string[]]> = [
  [1, 1, []],
  [
    1,
    8,
    [
      '96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7',
      '5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e',
      '6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4',
    ],
  ],
  [
    6,
    8,
    [
      '0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a',
      'ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0',
      'd37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7',
    ],
  ],
  [
    2,
    5,
    [
      '5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e',
      'bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b',
    ],
  ],
];
const hashes = (n: number) => Array.from({ length: n }, (_, i) => leafHash(Buffer.from(`entry ${i}`)));

describe('consistency proofs (RFC 9162 §2.1.4)', () => {
  it('produces the reference proofs of the 8-leaf tree and verifies them', () => {
    for (const [m, n, proof] of CONSISTENCY) {
      const got = consistencyProofOfHashes(HASHES.slice(0, n), m);
      expect(
        got.map((h) => h.toString('hex')),
        `${m}→${n}`,
      ).toEqual(proof);
      expect(
        verifyConsistency(m, n, rootOfHashes(HASHES.slice(0, m)), rootOfHashes(HASHES.slice(0, n)), got),
        `${m}→${n}`,
      ).toBe(true);
    }
  });
  it('verifies a proof between every pair of sizes, and refuses a changed root or sibling, a missing or extra hash, a size needing a longer proof', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 70 }), fc.nat(), fc.nat(), (n, pickM, pickByte) => {
        const leaves = hashes(n);
        const m = pickM % (n + 1);
        const oldRoot = rootOfHashes(leaves.slice(0, m));
        const newRoot = rootOfHashes(leaves);
        const proof = consistencyProofOfHashes(leaves, m);
        expect(verifyConsistency(m, n, oldRoot, newRoot, proof)).toBe(true);
        const flipped = Buffer.from(newRoot);
        flipped[pickByte % 32] = (flipped[pickByte % 32] as number) ^ 1;
        // From the empty tree every root is an extension; from any other size the roots count.
        if (m > 0) expect(verifyConsistency(m, n, oldRoot, flipped, proof)).toBe(false);
        if (m > 0) expect(verifyConsistency(m, n, flipped, newRoot, proof)).toBe(false);
        if (proof.length > 0) {
          expect(
            verifyConsistency(
              m,
              n,
              oldRoot,
              newRoot,
              proof.map((p, i) => (i === pickByte % proof.length ? nodeHash(p, p) : p)),
            ),
          ).toBe(false);
          expect(verifyConsistency(m, n, oldRoot, newRoot, proof.slice(1))).toBe(false);
          expect(verifyConsistency(m, n, oldRoot, newRoot, [...proof, proof[0] as Buffer])).toBe(false);
        }
        // A size whose proof needs more hashes cannot be satisfied by this one.
        if (m > 0 && m < n) expect(verifyConsistency(m, n * 2 + 1, oldRoot, newRoot, proof)).toBe(false);
      }),
    );
  });
  it('refuses a fork: a tree whose prefix differs does not extend the old one', () => {
    const leaves = hashes(9);
    const forked = [...leaves.slice(0, 3), leafHash(Buffer.from('other')), ...leaves.slice(4)];
    const proof = consistencyProofOfHashes(forked, 5);
    expect(verifyConsistency(5, 9, rootOfHashes(leaves.slice(0, 5)), rootOfHashes(forked), proof)).toBe(false);
  });
  it('takes the empty tree as the prefix of every tree, and only with an empty proof', () => {
    const leaves = hashes(3);
    expect(verifyConsistency(0, 3, EMPTY_ROOT, rootOfHashes(leaves), [])).toBe(true);
    expect(verifyConsistency(0, 3, rootOfHashes(leaves), rootOfHashes(leaves), [])).toBe(false);
    expect(verifyConsistency(0, 3, EMPTY_ROOT, rootOfHashes(leaves), [leaves[0] as Buffer])).toBe(false);
    expect(verifyConsistency(3, 2, rootOfHashes(leaves), rootOfHashes(leaves), [])).toBe(false);
  });
});

describe('inclusion proofs over leaf hashes', () => {
  it('agree with the leaf-data form and verify for every leaf', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 50 }), fc.nat(), (n, pick) => {
        const leaves = hashes(n);
        const i = pick % n;
        const root = rootOfHashes(leaves);
        const proof = inclusionProofOfHashes(leaves, i);
        expect(verifyInclusionOfHash(leaves[i] as Buffer, i, n, proof, root)).toBe(true);
        expect(verifyInclusionOfHash(leafHash(Buffer.from('x')), i, n, proof, root)).toBe(false);
      }),
    );
  });
  it('the frontier fed leaf hashes gives the same root as one fed leaf data', () => {
    const a = new MerkleFrontier();
    const b = new MerkleFrontier();
    for (const l of LEAVES) {
      a.append(l);
      b.appendLeafHash(leafHash(l));
    }
    expect(a.root().equals(b.root())).toBe(true);
    expect(b.root().equals(merkleRoot(LEAVES))).toBe(true);
    expect(() => b.appendLeafHash(Buffer.alloc(31))).toThrow(/32 bytes/);
  });
  it('the frontier fed 32-byte leaf data as hex gives the root of the same data as bytes, and refuses what is not 64 hex digits', () => {
    fc.assert(
      fc.property(fc.array(fc.uint8Array({ minLength: 32, maxLength: 32 }), { maxLength: 40 }), (leaves) => {
        const hex = new MerkleFrontier();
        for (const l of leaves) hex.appendHexData(Buffer.from(l).toString('hex'));
        expect(hex.root().equals(merkleRoot(leaves))).toBe(true);
      }),
    );
    const f = new MerkleFrontier();
    for (const bad of ['ab'.repeat(31), 'ab'.repeat(33), `${'ab'.repeat(31)}zz`, 'x'.repeat(64)])
      expect(() => f.appendHexData(bad)).toThrow(/64 hex digits/);
    expect(f.size).toBe(0);
  });
});
