import { describe, expect, it } from 'vitest';
import { createCosigner } from '../../src/attest/ancestry/dag.js';
import type { SigningKey } from '../../src/attest/keys.js';
import { MemoryNonceStore } from '../../src/attest/nonce-store.js';
import type { Construction, Receipt } from '../../src/attest/receipt.js';
import { createReleaseSigner } from '../../src/attest/signer.js';
import {
  MAX_PATH_LENGTH,
  MAX_REASONS_PER_CODE,
  MAX_SKEW_MS,
  verifyEvidence,
  verifyPath,
} from '../../src/attest/verify.js';
import { codes, keysFor, NOW, trust } from './helpers.js';

const keys = keysFor('org-0', 'org-1', 'org-2', 'org-3', 'org-4', 'org-5', 'auditor');
const byDeployer = new Map(keys.map((k) => [k.deployer, k] as const));
const { directory } = trust(keys);
const output = Buffer.from('leaf output');

/** A path of `depth` edges; deployer i releases receipt i, its parent co-signs dag edges. */
async function buildPath(
  depth: number,
  construction: Exclude<Construction, 'none'>,
  extraCosigners: string[] = [],
): Promise<Receipt[]> {
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
    path.push(
      await signer.releaseOutput(i === depth ? output : Buffer.from(`task ${i}`), {
        ancestors: [...path],
        construction,
        cosigners,
      }),
    );
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
    // One gap, reported once: the receipts after it are consistent with their own parents.
    expect(result.reasons.map((r) => [r.code, r.index])).toEqual([
      ['DEPTH_MISMATCH', 1],
      ['PARENT_DIGEST_MISMATCH', 1],
    ]);
  });
  it('refuses a path longer than MAX_PATH_LENGTH with PATH_TOO_LONG alone, before checking any receipt', async () => {
    const [root] = await buildPath(0, 'chain');
    const started = performance.now();
    const result = await verifyPath(
      Array.from({ length: 20_000 }, () => root),
      output,
      { directory, now: NOW },
    );
    const ms = performance.now() - started;
    expect(result.reasons.map((r) => r.code)).toEqual(['PATH_TOO_LONG']);
    expect(result.reasons[0]?.message).toMatch(new RegExp(`at most ${MAX_PATH_LENGTH} receipts`));
    expect(result.signaturesChecked).toBe(0);
    expect(ms).toBeLessThan(1000);
  });
  it('keeps the reasons of a long broken path bounded: each code at most MAX_REASONS_PER_CODE times plus one count', async () => {
    const [root] = await buildPath(0, 'chain');
    const result = await verifyPath(
      Array.from({ length: MAX_PATH_LENGTH }, () => root),
      output,
      { directory, now: NOW },
    );
    const perCode = new Map<string, number>();
    for (const r of result.reasons) perCode.set(r.code, (perCode.get(r.code) ?? 0) + 1);
    expect([...perCode.keys()].sort()).toEqual(['DEPTH_MISMATCH', 'PARENT_DIGEST_MISMATCH']);
    for (const n of perCode.values()) expect(n).toBe(MAX_REASONS_PER_CODE + 1);
    expect(result.reasons.at(-1)?.message).toMatch(
      new RegExp(`and ${MAX_PATH_LENGTH - 1 - MAX_REASONS_PER_CODE} more`),
    );
  });
  it('refuses a chain link when the verifier requires co-signers, which only a dag edge carries', async () => {
    const chain = await buildPath(1, 'chain');
    const result = await verifyPath(chain, output, { directory, now: NOW, requireCosigners: ['auditor'] });
    expect(codes(result)).toEqual(['COSIGNATURE_MISSING']);
    expect(result.reasons[0]?.message).toMatch(/not a dag edge/);
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
    expect(codes(await verifyPath(plain, output, { directory, now: NOW, requireCosigners: ['auditor'] }))).toEqual([
      'COSIGNATURE_MISSING',
    ]);
    const audited = await buildPath(1, 'dag', ['auditor']);
    expect(codes(await verifyPath(audited, output, { directory, now: NOW, requireCosigners: ['auditor'] }))).toEqual(
      [],
    );
  });
  it('reports every problem at once, each with a message', async () => {
    const path = await buildPath(1, 'chain');
    const result = await verifyPath(path, Buffer.from('other'), { directory, now: NOW + 2 * 3_600_000 });
    expect(codes(result)).toEqual(['EXPIRED', 'OUTPUT_MISMATCH', 'LENGTH_MISMATCH']);
    for (const r of result.reasons) expect(r.message.length).toBeGreaterThan(20);
  });
  it('trusts only its own directory: a valid signature by an unlisted key is UNKNOWN_KEY', async () => {
    const [stranger] = keysFor('org-0');
    const receipt = await createReleaseSigner({
      key: stranger as SigningKey,
      instance: 'x',
      clock: () => NOW,
    }).releaseOutput(output);
    expect(codes(await verifyEvidence(receipt, output, { directory, now: NOW }))).toEqual(['UNKNOWN_KEY']);
  });
  it('reports an empty path as MALFORMED', async () => {
    expect(codes(await verifyEvidence({ path: [] }, output, { directory, now: NOW }))).toEqual(['MALFORMED']);
  });
});

describe('nonce consumption', () => {
  it('keeps an accepted nonce until no verifier within the maximum skew could accept the receipt again', async () => {
    const path = await buildPath(1, 'chain');
    const leaf = path.at(-1) as Receipt;
    const nonceStore = new MemoryNonceStore();
    expect(codes(await verifyPath(path, output, { directory, now: NOW, nonceStore }))).toEqual([]);
    const expiry = Date.parse(leaf.not_after);
    await nonceStore.prune(expiry + 1); // a prune by the real clock just after the receipt expired
    const late = { directory, now: expiry + 60_000, skewMs: 10 * 60_000, nonceStore };
    expect(codes(await verifyPath(path, output, late))).toEqual(['REPLAY']);
    await nonceStore.prune(expiry + MAX_SKEW_MS + 1);
    expect(codes(await verifyPath(path, output, { ...late, now: expiry + MAX_SKEW_MS + 2 }))).toEqual(['EXPIRED']);
  });
  it('refuses a skew above MAX_SKEW_MS, which the nonce store could not cover', async () => {
    const path = await buildPath(0, 'chain');
    await expect(verifyPath(path, output, { directory, now: NOW, skewMs: MAX_SKEW_MS + 1 })).rejects.toThrow(
      /from 0 to 3600000 ms/,
    );
  });
  it('reports REPLAY the second time the same evidence is verified with one store', async () => {
    const path = await buildPath(1, 'chain');
    const nonceStore = new MemoryNonceStore();
    expect(codes(await verifyPath(path, output, { directory, now: NOW, nonceStore }))).toEqual([]);
    expect(codes(await verifyPath(path, output, { directory, now: NOW, nonceStore }))).toEqual(['REPLAY']);
  });
  it('does not let an invalid copy burn the nonce of a genuine receipt', async () => {
    const path = await buildPath(1, 'chain');
    const nonceStore = new MemoryNonceStore();
    expect(codes(await verifyPath(path, Buffer.from('tampered'), { directory, now: NOW, nonceStore }))).toContain(
      'OUTPUT_MISMATCH',
    );
    expect(codes(await verifyPath(path, output, { directory, now: NOW, nonceStore }))).toEqual([]);
  });
});
