import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ancestryRoot, proveAncestor, verifyAncestorProof } from '../../src/attest/ancestry/merkle.js';
import {
  inclusionProof,
  leafHash,
  MerkleFrontier,
  merkleRoot,
  nodeHash,
  verifyInclusion,
} from '../../src/core/tlog/merkle.js';
import type { Receipt } from '../../src/attest/receipt.js';
import { createReleaseSigner } from '../../src/attest/signer.js';
import { keysFor, NOW } from './helpers.js';

// Certificate Transparency's reference leaves and tree heads (RFC 6962 test data,
// as published in google/certificate-transparency and transparency-dev/merkle).
const LEAVES = ['', '00', '10', '2021', '3031', '40414243', '5051525354555657', '606162636465666768696a6b6c6d6e6f'].map(
  (h) => Buffer.from(h, 'hex'),
);
const ROOTS = [
  'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
  '6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d',
  'fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125',
  'aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77',
  'd37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7',
  '4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4',
  '76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef',
  'ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c',
  '5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328',
];
const INCLUSION = [
  {
    index: 0,
    proof: [
      '96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7',
      '5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e',
      '6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4',
    ],
  },
  {
    index: 5,
    proof: [
      'bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b',
      'ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0',
      'd37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7',
    ],
  },
];

describe('RFC 6962 hashing', () => {
  it('matches the reference tree head for every size 0..8', () => {
    for (let n = 0; n <= 8; n++) expect(merkleRoot(LEAVES.slice(0, n)).toString('hex'), `size ${n}`).toBe(ROOTS[n]);
  });
  it('separates leaves from nodes: a leaf hash is never a node hash of the same bytes', () => {
    const a = Buffer.alloc(32, 1);
    const b = Buffer.alloc(32, 2);
    expect(leafHash(Buffer.concat([a, b])).equals(nodeHash(a, b))).toBe(false);
    expect(merkleRoot([Buffer.concat([leafHash(a), leafHash(b)])]).equals(merkleRoot([a, b]))).toBe(false);
  });
  it('produces the reference inclusion proofs of the 8-leaf tree and verifies them', () => {
    const root = Buffer.from(ROOTS[8] as string, 'hex');
    for (const { index, proof } of INCLUSION) {
      expect(inclusionProof(LEAVES, index).map((h) => h.toString('hex'))).toEqual(proof);
      expect(
        verifyInclusion(
          LEAVES[index] as Buffer,
          index,
          8,
          proof.map((h) => Buffer.from(h, 'hex')),
          root,
        ),
      ).toBe(true);
    }
  });
  it('gives the same root incrementally as by the recursive definition', () => {
    fc.assert(
      fc.property(fc.array(fc.uint8Array({ maxLength: 8 }), { maxLength: 70 }), (leaves) => {
        const frontier = new MerkleFrontier();
        expect(frontier.root().equals(merkleRoot([]))).toBe(true);
        leaves.forEach((leaf, i) => {
          frontier.append(leaf);
          expect(frontier.root().equals(merkleRoot(leaves.slice(0, i + 1)))).toBe(true);
        });
      }),
    );
  });
  it('verifies every leaf proof in every tree size, and refuses a wrong index, leaf, sibling or a size needing a longer proof', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 40 }), fc.nat(), (size, pick) => {
        const leaves = Array.from({ length: size }, (_, i) => Buffer.from([i, size]));
        const index = pick % size;
        const root = merkleRoot(leaves);
        const proof = inclusionProof(leaves, index);
        expect(verifyInclusion(leaves[index] as Buffer, index, size, proof, root)).toBe(true);
        expect(verifyInclusion(Buffer.from('x'), index, size, proof, root)).toBe(false);
        if (size > 1)
          expect(verifyInclusion(leaves[index] as Buffer, (index + 1) % size, size, proof, root)).toBe(false);
        // A size whose proof needs more siblings cannot be satisfied by this proof.
        expect(verifyInclusion(leaves[index] as Buffer, index, size * 2 + 1, proof, root)).toBe(false);
        if (proof.length > 0) {
          const bad = proof.map((p, i) => (i === 0 ? nodeHash(p, p) : p));
          expect(verifyInclusion(leaves[index] as Buffer, index, size, bad, root)).toBe(false);
        }
      }),
    );
  });
});

describe('Merkle ancestry commitments in receipts', () => {
  const keys = keysFor('org-a', 'org-b');
  async function path(depth: number): Promise<Receipt[]> {
    const out: Receipt[] = [];
    for (let i = 0; i <= depth; i++) {
      const signer = createReleaseSigner({ key: keys[i % 2] as (typeof keys)[0], instance: 'a', clock: () => NOW + i });
      out.push(await signer.releaseOutput(Buffer.from(`o${i}`), { ancestors: [...out], construction: 'merkle' }));
    }
    return out;
  }
  it('commits each receipt to all its ancestors, root first', async () => {
    const p = await path(4);
    p.forEach((r, i) => {
      expect(r.ancestry_root).toBe(ancestryRoot(p.slice(0, i)));
    });
  });
  it('proves one ancestor to the leaf without the rest of the path', async () => {
    const p = await path(9);
    const leaf = p.at(-1) as Receipt;
    for (let i = 0; i < 9; i++)
      expect(verifyAncestorProof(leaf, p[i] as Receipt, proveAncestor(p.slice(0, 9), i))).toBe(true);
  });
  it('refuses an ancestor proof for a receipt that is not on the path', async () => {
    const p = await path(5);
    const other = await path(5);
    expect(verifyAncestorProof(p.at(-1) as Receipt, other[2] as Receipt, proveAncestor(p.slice(0, 5), 2))).toBe(false);
  });
});
