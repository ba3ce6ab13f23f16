import { describe, expect, it } from 'vitest';
import { createCosigner } from '../../src/attest/ancestry/dag.js';
import type { SigningKey } from '../../src/attest/keys.js';
import { MemoryNonceStore } from '../../src/attest/nonce-store.js';
import type { Construction, Receipt } from '../../src/attest/receipt.js';
import { createReleaseSigner } from '../../src/attest/signer.js';
import { verifyEvidence, verifyPath } from '../../src/attest/verify.js';
import { codes, keysFor, NOW, trust } from './helpers.js';

const keys = keysFor('org-0', 'org-1', 'org-2', 'org-3', 'org-4', 'org-5', 'auditor');
const byDeployer = new Map(keys.map((k) => [k.deployer, k] as const));
const { directory } = trust(keys);
const output = Buffer.from('leaf output');

/** A path of `depth` edges; deployer i releases receipt i, its parent co-signs dag edges. */
async function buildPath(depth: number, construction: Exclude<Construction, 'none'>, extraCosigners: string[] = []): Promise<Receipt[]> {
  const path: Receipt[] = [];
  for (let i = 0; i <= depth; i++) {
    const key = keys[i % 6] as SigningKey;
    const signer = createReleaseSigner({
      key,
      instance: `agent-${i}`,
      clock: () => NOW - (depth - i + 1) * 1000,
      cosign: (edge, deployer) => createCosigner(byDeployer.get(deployer) as SigningKey, () => true).cosign(edge),
    });
    const parent = path.at(-1);
    const cosigners = parent ? [parent.deployer, ...extraCosigners] : [];
    path.push(await signer.releaseOutput(i === depth ? output : Buffer.from(`task ${i}`), { ancestors: [...path], construction, cosigners }));
  }
  return path;
}

describe('whole-path verification root → leaf', () => {
  for (const construction of ['chain', 'merkle', 'dag'] as const) {
    it(`accepts an honest ${construction} path of depth 5`, async () => {
      const path = await buildPath(5, construction);
      const result = await verifyPath(path, output, { directory, now: NOW, construction });
      expect(codes(result)).toEqual([]);
      expect(result.ok).toBe(true);
    });
  }
  it('counts every signature on a dag path: one for the root, two per edge', async () => {
    const result = await verifyPath(await buildPath(5, 'dag'), output, { directory, now: NOW });
    expect(result.signaturesChecked).toBe(11);
  });
  it('accepts the same path given as {"path": [...]} JSON text', async () => {
    const path = await buildPath(3, 'merkle');
    expect(codes(await verifyEvidence(JSON.stringify({ path }), output, { directory, now: NOW }))).toEqual([]);
  });
  it('reports PARENT_MISSING for a leaf given without its ancestors', async () => {
    const path = await buildPath(2, 'chain');
    expect(codes(await verifyEvidence(path.at(-1), output, { directory, now: NOW }))).toEqual(['PARENT_MISSING']);
  });
  it('names the position on the path of the receipt at fault', async () => {
    const path = await buildPath(3, 'chain');
    const result = await verifyPath([path[0], path[2], path[3]], output, { directory, now: NOW });
    expect(result.reasons.map((r) => [r.code, r.index])).toEqual([
      ['DEPTH_MISMATCH', 1],
      ['PARENT_DIGEST_MISMATCH', 1],
      ['DEPTH_MISMATCH', 2],
    ]);
  });
  it('refuses a path whose construction is not the one the verifier requires', async () => {
    const result = await verifyPath(await buildPath(2, 'chain'), output, { directory, now: NOW, construction: 'dag' });
    expect(codes(result)).toEqual(['CONSTRUCTION_MISMATCH']);
  });
  it('refuses a chain hop spliced into a dag path', async () => {
    const dag = await buildPath(2, 'dag');
    const chain = await buildPath(2, 'chain');
    const result = await verifyPath([dag[0], dag[1], chain[2]], output, { directory, now: NOW });
    expect(codes(result)).toContain('CONSTRUCTION_MISMATCH');
  });
  it('enforces co-signers the verifier requires beyond the edge policy', async () => {
    const plain = await buildPath(1, 'dag');
    expect(codes(await verifyPath(plain, output, { directory, now: NOW, requireCosigners: ['auditor'] }))).toEqual(['COSIGNATURE_MISSING']);
    const audited = await buildPath(1, 'dag', ['auditor']);
    expect(codes(await verifyPath(audited, output, { directory, now: NOW, requireCosigners: ['auditor'] }))).toEqual([]);
  });
  it('reports every problem at once, each with a message', async () => {
    const path = await buildPath(1, 'chain');
    const result = await verifyPath(path, Buffer.from('other'), { directory, now: NOW + 2 * 3_600_000 });
    expect(codes(result)).toEqual(['EXPIRED', 'OUTPUT_MISMATCH', 'LENGTH_MISMATCH']);
    for (const r of result.reasons) expect(r.message.length).toBeGreaterThan(20);
  });
  it('trusts only its own directory: a valid signature by an unlisted key is UNKNOWN_KEY', async () => {
    const [stranger] = keysFor('org-0');
    const receipt = await createReleaseSigner({ key: stranger as SigningKey, instance: 'x', clock: () => NOW }).releaseOutput(output);
    expect(codes(await verifyEvidence(receipt, output, { directory, now: NOW }))).toEqual(['UNKNOWN_KEY']);
  });
  it('reports an empty path as MALFORMED', async () => {
    expect(codes(await verifyEvidence({ path: [] }, output, { directory, now: NOW }))).toEqual(['MALFORMED']);
  });
});

describe('nonce consumption', () => {
  it('reports REPLAY the second time the same evidence is verified with one store', async () => {
    const path = await buildPath(1, 'chain');
    const nonceStore = new MemoryNonceStore();
    expect(codes(await verifyPath(path, output, { directory, now: NOW, nonceStore }))).toEqual([]);
    expect(codes(await verifyPath(path, output, { directory, now: NOW, nonceStore }))).toEqual(['REPLAY']);
  });
  it('does not let an invalid copy burn the nonce of a genuine receipt', async () => {
    const path = await buildPath(1, 'chain');
    const nonceStore = new MemoryNonceStore();
    expect(codes(await verifyPath(path, Buffer.from('tampered'), { directory, now: NOW, nonceStore }))).toContain('OUTPUT_MISMATCH');
    expect(codes(await verifyPath(path, output, { directory, now: NOW, nonceStore }))).toEqual([]);
  });
});
