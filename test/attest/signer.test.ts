import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createCosigner, delegationGrant } from '../../src/attest/ancestry/dag.js';
import type { SigningKey } from '../../src/attest/keys.js';
import { type Receipt, receiptDigest } from '../../src/attest/receipt.js';
import { type CosignRequest, createReleaseSigner } from '../../src/attest/signer.js';
import { verifyPath } from '../../src/attest/verify.js';
import { isWitnessError } from '../../src/core/errors.js';
import { sha256Hex } from '../../src/core/hash.js';
import { codes, HOUR, keysFor, NOW, signerAt, trust } from './helpers.js';

const [parentKey, childKey] = keysFor('org-parent', 'org-child') as [SigningKey, SigningKey];
const { directory } = trust([parentKey, childKey]);
const root = await signerAt(parentKey, NOW - 60_000).releaseOutput(Buffer.from('delegate: summarise'), {
  construction: 'dag',
});
const grant = delegationGrant({
  parentDigest: receiptDigest(root),
  childDeployer: 'org-child',
  expiresAt: NOW + HOUR,
  now: () => NOW,
});
const parentService = createCosigner(parentKey, grant);

function childSigner(cosign: CosignRequest = (edge) => parentService.cosign(edge), cosignTimeoutMs?: number) {
  return createReleaseSigner({
    key: childKey,
    instance: 'child-1',
    clock: () => NOW,
    construction: 'dag',
    cosign,
    ...(cosignTimeoutMs ? { cosignTimeoutMs } : {}),
  });
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  return undefined;
}

describe('release-boundary signer', () => {
  it('exposes no key material to whoever holds it', async () => {
    const signer = signerAt(childKey, NOW);
    expect(Object.keys(signer).sort()).toEqual(['deployer', 'keyId', 'releaseOutput']);
    expect(JSON.stringify(signer)).not.toContain(childKey.privateKey);
    expect(Object.isFrozen(signer)).toBe(true);
  });
  it('hashes exactly the bytes it releases', async () => {
    const bytes = Buffer.from('exact bytes\n');
    const r = await signerAt(childKey, NOW).releaseOutput(bytes);
    expect([r.output_sha256, r.output_len]).toEqual([sha256Hex(bytes), bytes.length]);
  });
  it('draws a fresh 128-bit nonce for every release', async () => {
    const signer = signerAt(childKey, NOW);
    const nonces = await Promise.all(
      Array.from({ length: 50 }, () => signer.releaseOutput(Buffer.from('same')).then((r) => r.nonce)),
    );
    expect(new Set(nonces).size).toBe(50);
    for (const n of nonces) expect(Buffer.from(n, 'base64url')).toHaveLength(16);
  });
  it('refuses to release under a parent without a construction', async () => {
    expect(
      isWitnessError(
        await rejection(
          signerAt(childKey, NOW).releaseOutput(Buffer.from('x'), { ancestors: [root], construction: 'none' }),
        ),
        'USAGE',
      ),
    ).toBe(true);
  });
});

describe('dag edges and the parent co-signer', () => {
  it('produces an edge co-signed by the parent that verifies', async () => {
    const edge = await childSigner().releaseOutput(Buffer.from('summary'), { ancestors: [root] });
    expect(edge.type).toBe('edge');
    expect(edge.signatures.map((s) => s.key_id)).toEqual([childKey.kid, parentKey.kid]);
    expect(
      codes(await verifyPath([root, edge], Buffer.from('summary'), { directory, now: NOW, construction: 'dag' })),
    ).toEqual([]);
  });
  it('fails closed when the parent refuses: no receipt is produced', async () => {
    const stranger = await signerAt(parentKey, NOW).releaseOutput(Buffer.from('not a delegation'), {
      construction: 'dag',
    });
    const error = await rejection(childSigner().releaseOutput(Buffer.from('s'), { ancestors: [stranger] }));
    expect(isWitnessError(error, 'REFUSED')).toBe(true);
    expect((error as Error).message).toMatch(/no delegation was issued from that parent receipt/);
  });
  it('fails closed when the parent does not answer in time', async () => {
    const error = await rejection(
      childSigner(() => new Promise<never>(() => {}), 50).releaseOutput(Buffer.from('s'), { ancestors: [root] }),
    );
    expect(isWitnessError(error, 'TIMEOUT')).toBe(true);
    expect((error as Error).message).toMatch(/No co-signature within 50 ms/);
  });
  it('refuses to co-sign for another child deployer or after the grant expired', () => {
    const edge = {
      ...root,
      type: 'edge' as const,
      parent: receiptDigest(root),
      depth: 1,
      cosigners: ['org-parent'],
      deployer: 'org-other',
    };
    const { signatures: _s, ...unsigned } = edge;
    expect(() => parentService.cosign(unsigned)).toThrow(/issued to org-child, not org-other/);
    const late = createCosigner(
      parentKey,
      delegationGrant({
        parentDigest: receiptDigest(root),
        childDeployer: 'org-child',
        expiresAt: NOW,
        now: () => NOW,
      }),
    );
    expect(() => late.cosign({ ...unsigned, deployer: 'org-child' })).toThrow(/grant has expired/);
  });
  it('refuses to co-sign anything but a dag edge that names it in the policy', () => {
    const { signatures: _s, ...unsigned } = root;
    expect(() => parentService.cosign(unsigned)).toThrow(/only dag edge manifests/);
    expect(() =>
      parentService.cosign({ ...unsigned, type: 'edge', parent: receiptDigest(root), cosigners: [] }),
    ).toThrow(/does not name org-parent/);
  });
  it('binds the co-signature to the whole child record: changing any field invalidates it', async () => {
    const edge = await childSigner().releaseOutput(Buffer.from('summary'), { ancestors: [root] });
    const mutations: Record<string, (r: Record<string, unknown>) => void> = {
      output_sha256: (r) => (r.output_sha256 = sha256Hex('other')),
      output_len: (r) => (r.output_len = 99),
      nonce: (r) => (r.nonce = 'AAAAAAAAAAAAAAAAAAAAAA'),
      issued_at: (r) => (r.issued_at = new Date(NOW - 1).toISOString()),
      not_after: (r) => (r.not_after = new Date(NOW + 2 * HOUR).toISOString()),
      instance: (r) => (r.instance = 'child-2'),
      cosigners: (r) => (r.cosigners = ['org-parent', 'org-child']),
    };
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...Object.keys(mutations)), async (field) => {
        const copy = structuredClone(edge) as unknown as Record<string, unknown>;
        (mutations[field] as (r: Record<string, unknown>) => void)(copy);
        const result = await verifyPath([root, copy], Buffer.from('summary'), { directory, now: NOW });
        expect(codes(result)).toContain('BAD_SIGNATURE');
        expect(codes(result).some((c) => c === 'COSIGNATURE_INVALID' || c === 'COSIGNATURE_MISSING')).toBe(true);
      }),
      { numRuns: 30 },
    );
  });
  it('does not count the child own signature as the parent co-signature, even when both are one deployer', async () => {
    const edge = await childSigner().releaseOutput(Buffer.from('summary'), {
      ancestors: [root],
      cosigners: ['org-parent'],
    });
    const selfSigned: Receipt = {
      ...edge,
      cosigners: ['org-child'],
      signatures: [edge.signatures[0] as Receipt['signatures'][0]],
    };
    expect(codes(await verifyPath([root, selfSigned], Buffer.from('summary'), { directory, now: NOW }))).toContain(
      'COSIGNATURE_MISSING',
    );
  });
});

describe('signer input checks', () => {
  it('refuses to sign a receipt a verifier would call MALFORMED, such as an empty instance id', async () => {
    const error = await rejection(signerAt(childKey, NOW).releaseOutput(Buffer.from('x'), { instance: '' }));
    expect(isWitnessError(error, 'USAGE')).toBe(true);
    expect((error as Error).message).toMatch(/receipt\.instance/);
  });
});

describe('ancestors given to the signer', () => {
  it('takes the depth from the parent, so chain and dag need only the parent receipt', async () => {
    const a = await signerAt(parentKey, NOW).releaseOutput(Buffer.from('a'));
    const b = await signerAt(childKey, NOW).releaseOutput(Buffer.from('b'), { ancestors: [a], construction: 'chain' });
    const c = await signerAt(parentKey, NOW).releaseOutput(Buffer.from('c'), { ancestors: [b], construction: 'chain' });
    expect(c.depth).toBe(2);
    expect(codes(await verifyPath([a, b, c], Buffer.from('c'), { directory, now: NOW }))).toEqual([]);
  });
  it('refuses a merkle release without the whole path, which its commitment needs', async () => {
    const a = await signerAt(parentKey, NOW).releaseOutput(Buffer.from('a'), { construction: 'merkle' });
    const b = await signerAt(childKey, NOW).releaseOutput(Buffer.from('b'), { ancestors: [a], construction: 'merkle' });
    const error = await rejection(
      signerAt(parentKey, NOW).releaseOutput(Buffer.from('c'), { ancestors: [b], construction: 'merkle' }),
    );
    expect((error as Error).message).toMatch(/pass the whole path \(2 receipts, root first\), not 1/);
  });
});
