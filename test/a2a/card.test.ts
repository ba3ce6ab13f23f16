import { AgentCard, canonicalizeAgentCard, verifyAgentCardSignature } from '@a2a-js/sdk';
import * as jose from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildAgentCard, type CardJson, fetchAgentCard, signAgentCard, verifyAgentCard } from '../../src/a2a/card.js';
import { newSigningKey, revokeKey } from '../../src/attest/index.js';
import { KeyDirectory } from '../../src/attest/key-directory.js';
import { signEd25519 } from '../../src/core/ed25519.js';
import { startWorld, trust, type World } from './helpers.js';

let world: World;
let served: CardJson;
beforeAll(async () => {
  world = await startWorld();
  served = await fetchAgentCard(world.agent.url);
});
afterAll(() => world.close());

describe('a signed Agent Card', () => {
  it('is served at /.well-known/agent-card.json and verifies against the caller directory', () => {
    const result = verifyAgentCard(served, world.directory);
    expect(result).toMatchObject({ ok: true, kid: world.child.kid, deployer: 'org-child' });
  });

  it('verifies in jose alone: a detached EdDSA JWS over the SDK canonical form of the card without signatures', async () => {
    const signature = served.signatures?.[0];
    expect(signature).toBeDefined();
    const header = jose.decodeProtectedHeader({ protected: signature?.protected ?? '' });
    expect(header).toMatchObject({ alg: 'EdDSA', kid: world.child.kid });
    const key = await jose.importJWK({ kty: 'OKP', crv: 'Ed25519', x: world.child.publicKey }, 'EdDSA');
    const payload = jose.base64url.encode(canonicalizeAgentCard(AgentCard.fromJSON(served)));
    const verified = await jose.flattenedVerify(
      { payload, protected: signature?.protected ?? '', signature: signature?.signature ?? '' },
      key,
    );
    expect(JSON.parse(new TextDecoder().decode(verified.payload)).name).toBe(served.name);
  });

  it('verifies with the A2A SDK verifier given the key from our directory only', async () => {
    const verify = verifyAgentCardSignature(async (kid) => {
      if (kid !== world.child.kid) throw new Error('unknown kid');
      return jose.importJWK({ kty: 'OKP', crv: 'Ed25519', x: world.child.publicKey }, 'EdDSA');
    });
    await expect(verify(AgentCard.fromJSON(served))).resolves.toBeUndefined();
  });

  it('fails jose verification once a field is changed', async () => {
    const key = await jose.importJWK({ kty: 'OKP', crv: 'Ed25519', x: world.child.publicKey }, 'EdDSA');
    const changed = { ...served, name: 'evil' };
    const payload = jose.base64url.encode(canonicalizeAgentCard(AgentCard.fromJSON(changed)));
    await expect(
      jose.flattenedVerify(
        {
          payload,
          protected: served.signatures?.[0]?.protected ?? '',
          signature: served.signatures?.[0]?.signature ?? '',
        },
        key,
      ),
    ).rejects.toThrow();
  });

  it('is rejected with CARD_BAD_SIGNATURE when a field was changed after signing', () => {
    const result = verifyAgentCard({ ...served, description: 'now with extra powers' }, world.directory);
    expect(result.reasons.map((r) => r.code)).toEqual(['CARD_BAD_SIGNATURE']);
  });

  it("never trusts the card's own jwk or jku: a self-signed card is CARD_UNKNOWN_KEY", () => {
    const attacker = newSigningKey('org-child');
    const card = buildAgentCard({ baseUrl: 'http://127.0.0.1:1', name: 'impostor', deployer: 'org-child' });
    const header = {
      alg: 'EdDSA',
      kid: attacker.kid,
      typ: 'JOSE',
      jku: 'http://attacker.example/jwks.json',
      jwk: { kty: 'OKP', crv: 'Ed25519', x: attacker.publicKey },
    };
    const protectedB64 = Buffer.from(JSON.stringify(header)).toString('base64url');
    const payload = Buffer.from(canonicalizeAgentCard(AgentCard.fromJSON(card))).toString('base64url');
    const signed = {
      ...card,
      signatures: [
        {
          protected: protectedB64,
          signature: signEd25519(attacker.privateKey, Buffer.from(`${protectedB64}.${payload}`)),
        },
      ],
    };
    expect(verifyAgentCard(signed, world.directory).reasons.map((r) => r.code)).toEqual(['CARD_UNKNOWN_KEY']);
  });

  it('is rejected with CARD_WRONG_DEPLOYER when signed by a trusted key of another organisation', () => {
    const card = signAgentCard(
      buildAgentCard({ baseUrl: 'http://127.0.0.1:1', name: 'x', deployer: 'org-child' }),
      world.parent,
    );
    expect(verifyAgentCard(card, world.directory).reasons.map((r) => r.code)).toEqual(['CARD_WRONG_DEPLOYER']);
  });

  it('is rejected with CARD_KEY_NOT_VALID when the key was revoked', () => {
    const revoked = new KeyDirectory(revokeKey(trust([world.child]).file, world.child.kid, Date.now() - 1000));
    expect(verifyAgentCard(served, revoked).reasons.map((r) => r.code)).toEqual(['CARD_KEY_NOT_VALID']);
  });

  it('refuses a protected header in another base64url spelling of the same bytes (padding or stray low bits)', () => {
    const card = signAgentCard(
      buildAgentCard({ baseUrl: 'http://127.0.0.1:1', name: 'x', deployer: 'org-child' }),
      world.child,
    );
    const sig = card.signatures![0]!;
    for (const spelling of [`${sig.protected}=`, `${sig.protected}+`]) {
      const result = verifyAgentCard({ ...card, signatures: [{ ...sig, protected: spelling }] }, world.directory);
      expect(result.ok).toBe(false);
      expect(result.reasons[0]!.message).toMatch(/canonical spelling/);
    }
  });

  it('is rejected with CARD_UNSIGNED when it carries no signatures', () => {
    const { signatures: _s, ...unsigned } = served;
    expect(verifyAgentCard(unsigned, world.directory).reasons.map((r) => r.code)).toEqual(['CARD_UNSIGNED']);
  });

  it.each([
    ['not an object', 'card'],
    ['no supportedInterfaces', { name: 'x' }],
    ['signatures not an array', { name: 'x', supportedInterfaces: [], signatures: {} }],
    [
      'a protected header that is not JSON',
      { name: 'x', supportedInterfaces: [], signatures: [{ protected: 'bm90IGpzb24', signature: 'AA' }] },
    ],
    [
      'an alg other than EdDSA',
      {
        name: 'x',
        supportedInterfaces: [],
        signatures: [{ protected: Buffer.from('{"alg":"none","kid":"k"}').toString('base64url'), signature: '' }],
      },
    ],
  ])('is CARD_MALFORMED with a clear message for %s', (_what, card) => {
    const result = verifyAgentCard(card, world.directory);
    expect(result.ok).toBe(false);
    expect(result.reasons[0]?.code).toBe('CARD_MALFORMED');
    expect(result.reasons[0]?.message.length).toBeGreaterThan(10);
  });

  it('refuses to sign a card with empty fields the SDK canonical form would drop', () => {
    const card = {
      ...buildAgentCard({ baseUrl: 'http://127.0.0.1:1', name: 'x', deployer: 'org-child' }),
      documentationUrl: '',
    };
    expect(() => signAgentCard(card, world.child)).toThrow(/other A2A SDKs/);
  });
});
