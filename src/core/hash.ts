/**
 * @module
 * SHA-256 helpers. Digests are lower-case hex unless a function says otherwise.
 */
import * as crypto from 'node:crypto';
import { canonicalBytes } from './canonical-json.js';

type _OneShot = (algorithm: string, data: string | Uint8Array, encoding: 'hex' | 'buffer') => string | Buffer;
// One-shot `crypto.hash` (Node ≥ 20.12) is ~2× faster than createHash for short inputs,
// which matters when a sweep hashes once per run.
const _oneShot = (crypto as unknown as { hash?: _OneShot }).hash;

export function sha256(data: string | Uint8Array): Buffer {
  return _oneShot ? (_oneShot('sha256', data, 'buffer') as Buffer) : crypto.createHash('sha256').update(data).digest();
}

export function sha256Hex(data: string | Uint8Array): string {
  return _oneShot ? (_oneShot('sha256', data, 'hex') as string) : crypto.createHash('sha256').update(data).digest('hex');
}

/** SHA-256 of the RFC 8785 form of `value`, hex. */
export function canonicalSha256Hex(value: unknown): string {
  return sha256Hex(canonicalBytes(value));
}
