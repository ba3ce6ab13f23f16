import { describe, expect, it } from 'vitest';
import { addKey, emptyDirectory, KeyDirectory, revokeKey, rotateKey } from '../../src/attest/key-directory.js';
import { newSigningKey, publicJwk } from '../../src/attest/keys.js';
import { verifyEvidence, type VerifyOptions } from '../../src/attest/verify.js';
import { codes, DAY, HOUR, NOW, signerAt } from './helpers.js';

// Each boundary is checked at the instant, 1 ms before and 1 ms after. Windows are
// half-open: valid from the start instant, invalid from the end instant.
const key = newSigningKey('org-a');
const bytes = Buffer.from('out');
const window = { notBefore: NOW - DAY, notAfter: NOW + DAY };
const directory = new KeyDirectory(addKey(emptyDirectory(), publicJwk(key), window));
const TTL = HOUR;
const receipt = await signerAt(key, NOW, { ttlMs: TTL }).releaseOutput(bytes);

async function at(now: number, options: Partial<VerifyOptions> = {}, r: unknown = receipt, dir = directory) {
  return codes(await verifyEvidence(r, bytes, { directory: dir, now, ...options }));
}

describe('receipt validity window', () => {
  it('is valid from the instant of issue', async () => expect(await at(NOW)).toEqual([]));
  it('is NOT_YET_VALID 1 ms before issue', async () => expect(await at(NOW - 1)).toEqual(['NOT_YET_VALID']));
  it('is valid 1 ms after issue', async () => expect(await at(NOW + 1)).toEqual([]));
  it('is valid 1 ms before not_after', async () => expect(await at(NOW + TTL - 1)).toEqual([]));
  it('is EXPIRED at not_after', async () => expect(await at(NOW + TTL)).toEqual(['EXPIRED']));
  it('is EXPIRED 1 ms after not_after', async () => expect(await at(NOW + TTL + 1)).toEqual(['EXPIRED']));
});

describe('clock skew', () => {
  it('accepts a receipt issued up to the skew in the verifier future', async () => {
    expect(await at(NOW - 1000, { skewMs: 1000 })).toEqual([]);
    expect(await at(NOW - 1001, { skewMs: 1000 })).toEqual(['NOT_YET_VALID']);
  });
  it('accepts a receipt up to the skew past not_after, and not at it', async () => {
    expect(await at(NOW + TTL + 999, { skewMs: 1000 })).toEqual([]);
    expect(await at(NOW + TTL + 1000, { skewMs: 1000 })).toEqual(['EXPIRED']);
  });
});

describe('key validity window at issue time', () => {
  const issuedAt = (t: number) => signerAt(key, t, { ttlMs: TTL }).releaseOutput(bytes);
  it('accepts a receipt issued at the key not_before', async () =>
    expect(await at(window.notBefore, {}, await issuedAt(window.notBefore))).toEqual([]));
  it('refuses a receipt issued 1 ms before the key not_before', async () => {
    expect(await at(window.notBefore, {}, await issuedAt(window.notBefore - 1))).toEqual(['KEY_NOT_VALID_AT_ISSUE']);
  });
  it('accepts a receipt issued 1 ms before the key not_after', async () =>
    expect(await at(window.notAfter, {}, await issuedAt(window.notAfter - 1))).toEqual([]));
  it('refuses a receipt issued at the key not_after', async () =>
    expect(await at(window.notAfter, {}, await issuedAt(window.notAfter))).toEqual(['KEY_NOT_VALID_AT_ISSUE']));
  it('refuses a receipt issued 1 ms after the key not_after', async () => {
    expect(await at(window.notAfter + 1, {}, await issuedAt(window.notAfter + 1))).toEqual(['KEY_NOT_VALID_AT_ISSUE']);
  });
});

describe('revocation', () => {
  const revokedAt = NOW + 10 * 60_000;
  const revoked = new KeyDirectory(revokeKey(addKey(emptyDirectory(), publicJwk(key), window), key.kid, revokedAt));
  const issuedAt = (t: number) => signerAt(key, t, { ttlMs: TTL }).releaseOutput(bytes);
  it('keeps a receipt issued 1 ms before revoked_at valid afterwards', async () => {
    expect(await at(revokedAt + HOUR / 2, {}, await issuedAt(revokedAt - 1), revoked)).toEqual([]);
  });
  it('refuses a receipt issued at revoked_at', async () =>
    expect(await at(revokedAt, {}, await issuedAt(revokedAt), revoked)).toEqual(['REVOKED_KEY']));
  it('refuses a receipt issued 1 ms after revoked_at', async () =>
    expect(await at(revokedAt + 1, {}, await issuedAt(revokedAt + 1), revoked)).toEqual(['REVOKED_KEY']));
  it('under policy "all", accepts an earlier receipt until revoked_at and refuses it from then on', async () => {
    const early = await issuedAt(NOW);
    expect(await at(revokedAt - 1, { revocation: 'all' }, early, revoked)).toEqual([]);
    expect(await at(revokedAt, { revocation: 'all' }, early, revoked)).toEqual(['REVOKED_KEY']);
    expect(await at(revokedAt + 1, { revocation: 'all' }, early, revoked)).toEqual(['REVOKED_KEY']);
  });
  it('keeps the earlier time when a key is revoked twice', () => {
    const twice = revokeKey(
      revokeKey(addKey(emptyDirectory(), publicJwk(key), window), key.kid, revokedAt),
      key.kid,
      revokedAt + DAY,
    );
    expect(twice.keys[0]?.revoked_at).toBe(new Date(revokedAt).toISOString());
  });
});

describe('rotation', () => {
  const next = newSigningKey('org-a');
  const rotation = NOW + HOUR;
  const rotated = new KeyDirectory(
    rotateKey(addKey(emptyDirectory(), publicJwk(key), window), key.kid, publicJwk(next), rotation, NOW + 60 * DAY),
  );
  it('keeps receipts the old key issued before the rotation valid after it', async () => {
    const old = await signerAt(key, rotation - 1, { ttlMs: TTL }).releaseOutput(bytes);
    expect(await at(rotation + 10, {}, old, rotated)).toEqual([]);
  });
  it('refuses the old key for receipts issued at or after the rotation', async () => {
    const late = await signerAt(key, rotation, { ttlMs: TTL }).releaseOutput(bytes);
    expect(await at(rotation, {}, late, rotated)).toEqual(['KEY_NOT_VALID_AT_ISSUE']);
  });
  it('trusts the new key from the rotation instant, not 1 ms before', async () => {
    expect(await at(rotation, {}, await signerAt(next, rotation).releaseOutput(bytes), rotated)).toEqual([]);
    expect(await at(rotation, {}, await signerAt(next, rotation - 1).releaseOutput(bytes), rotated)).toEqual([
      'KEY_NOT_VALID_AT_ISSUE',
    ]);
  });
});
