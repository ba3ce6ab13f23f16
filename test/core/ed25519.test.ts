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
  it('rejects a signature text that decodes to the same bytes but is spelt differently', () => {
    const pair = generateEd25519KeyPair();
    const sig = signEd25519(pair.privateKey, Buffer.from('m'));
    // 64 bytes take 86 characters; the last one carries 2 data bits and 4 unused ones.
    const last = sig.at(-1)!;
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    const twin = alphabet[(alphabet.indexOf(last) & 0b110000) | (~alphabet.indexOf(last) & 0b001111)]!;
    const respelt = sig.slice(0, -1) + twin;
    expect(Buffer.from(respelt, 'base64url').equals(Buffer.from(sig, 'base64url'))).toBe(true);
    expect(verifyEd25519(pair.publicKey, Buffer.from('m'), sig)).toBe(true);
    expect(verifyEd25519(pair.publicKey, Buffer.from('m'), respelt)).toBe(false);
  });
  it('derives a stable key id from the public key', () => {
    const pair = generateEd25519KeyPair();
    expect(keyIdFor(pair.publicKey)).toBe(keyIdFor(pair.publicKey));
    expect(keyIdFor(pair.publicKey)).toMatch(/^ed25519:[0-9a-f]{16}$/);
  });
});
