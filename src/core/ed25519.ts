/**
 * @module
 * Ed25519 keys and signatures through `node:crypto` (OpenSSL, strict RFC 8032).
 * Keys travel as raw 32-byte values in base64url; `KeyObject`s are built once per key
 * and cached, because importing a key costs more than verifying with it.
 */
import { createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject, sign, verify } from 'node:crypto';
import { decodeBase64urlStrict } from './base64url.js';
import { sha256Hex } from './hash.js';
import { WitnessError } from './errors.js';

// DER prefixes that wrap a raw 32-byte Ed25519 key (RFC 8410).
const SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');
const PKCS8_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');

export interface Ed25519KeyPair {
  /** Raw 32-byte public key, base64url. */
  publicKey: string;
  /** Raw 32-byte private seed, base64url. Keep it away from agents. */
  privateKey: string;
}

export function generateEd25519KeyPair(): Ed25519KeyPair {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  const pub = publicKey.export({ format: 'der', type: 'spki' }).subarray(SPKI_PREFIX.length);
  const priv = privateKey.export({ format: 'der', type: 'pkcs8' }).subarray(PKCS8_PREFIX.length);
  return { publicKey: pub.toString('base64url'), privateKey: priv.toString('base64url') };
}

/** A short stable id for a public key: `ed25519:` + first 16 hex of SHA-256 of the raw key. */
export function keyIdFor(publicKey: string): string {
  return `ed25519:${sha256Hex(_raw(publicKey, 'public key')).slice(0, 16)}`;
}

const _publicCache = new Map<string, KeyObject>();
const _privateCache = new Map<string, KeyObject>();

export function publicKeyObject(publicKey: string | Uint8Array): KeyObject {
  const raw = typeof publicKey === 'string' ? _raw(publicKey, 'public key') : Buffer.from(publicKey);
  const cacheKey = raw.toString('base64url');
  let key = _publicCache.get(cacheKey);
  if (!key) {
    if (raw.length !== 32)
      throw new WitnessError('INVALID_INPUT', `An Ed25519 public key has 32 bytes, this one has ${raw.length}.`);
    key = createPublicKey({ key: Buffer.concat([SPKI_PREFIX, raw]), format: 'der', type: 'spki' });
    _publicCache.set(cacheKey, key);
  }
  return key;
}

export function privateKeyObject(privateKey: string): KeyObject {
  let key = _privateCache.get(privateKey);
  if (!key) {
    const raw = _raw(privateKey, 'private key');
    if (raw.length !== 32)
      throw new WitnessError('INVALID_INPUT', `An Ed25519 private key has 32 bytes, this one has ${raw.length}.`);
    key = createPrivateKey({ key: Buffer.concat([PKCS8_PREFIX, raw]), format: 'der', type: 'pkcs8' });
    _privateCache.set(privateKey, key);
  }
  return key;
}

/** Signs `message`; returns the 64-byte signature as base64url. */
export function signEd25519(privateKey: string | KeyObject, message: Uint8Array): string {
  const key = typeof privateKey === 'string' ? privateKeyObject(privateKey) : privateKey;
  return sign(null, message, key).toString('base64url');
}

/**
 * True only for a valid signature. Malformed keys or signatures — including a
 * signature text that is not the canonical base64url of its bytes — are `false`, never
 * an exception, so a verifier can turn them into a reason code.
 */
export function verifyEd25519(
  publicKey: string | Uint8Array | KeyObject,
  message: Uint8Array,
  signature: string | Uint8Array,
): boolean {
  try {
    const key =
      typeof publicKey === 'string' || publicKey instanceof Uint8Array ? publicKeyObject(publicKey) : publicKey;
    const sig = typeof signature === 'string' ? decodeBase64urlStrict(signature) : Buffer.from(signature);
    if (sig === undefined || sig.length !== 64) return false;
    return verify(null, message, key, sig);
  } catch {
    return false;
  }
}

function _raw(value: string, what: string): Buffer {
  if (!/^[A-Za-z0-9_-]*$/.test(value)) throw new WitnessError('INVALID_INPUT', `The ${what} is not base64url text.`);
  return Buffer.from(value, 'base64url');
}
