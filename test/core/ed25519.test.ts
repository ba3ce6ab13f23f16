import { describe, expect, it } from 'vitest';
import { generateEd25519KeyPair, keyIdFor, signEd25519, verifyEd25519 } from '../../src/core/ed25519.js';

describe('Ed25519', () => {
  it('verifies its own signature and rejects a changed message', () => {
    const pair = generateEd25519KeyPair();
    const msg = Buffer.from('hello');
    const sig = signEd25519(pair.privateKey, msg);
    expect(verifyEd25519(pair.publicKey, msg, sig)).toBe(true);
    expect(verifyEd25519(pair.publicKey, Buffer.from('hellp'), sig)).toBe(false);
  });
  it('rejects a signature made by another key', () => {
    const a = generateEd25519KeyPair();
    const b = generateEd25519KeyPair();
    expect(verifyEd25519(b.publicKey, Buffer.from('m'), signEd25519(a.privateKey, Buffer.from('m')))).toBe(false);
  });
  it('answers false, not an exception, for a malformed key or signature', () => {
    const pair = generateEd25519KeyPair();
    expect(verifyEd25519('short', Buffer.from('m'), 'AAAA')).toBe(false);
    expect(verifyEd25519(pair.publicKey, Buffer.from('m'), 'not base64url!')).toBe(false);
  });
  it('derives a stable key id from the public key', () => {
    const pair = generateEd25519KeyPair();
    expect(keyIdFor(pair.publicKey)).toBe(keyIdFor(pair.publicKey));
    expect(keyIdFor(pair.publicKey)).toMatch(/^ed25519:[0-9a-f]{16}$/);
  });
});
