/**
 * @module
 * SHA-256 helpers. Digests are lower-case hex unless a function says otherwise.
 */
import { createHash } from 'node:crypto';
import { canonicalBytes } from './canonical-json.js';

export function sha256(data: string | Uint8Array): Buffer {
  return createHash('sha256').update(data).digest();
}

export function sha256Hex(data: string | Uint8Array): string {
  return createHash('sha256').update(data).digest('hex');
}

/** SHA-256 of the RFC 8785 form of `value`, hex. */
export function canonicalSha256Hex(value: unknown): string {
  return sha256Hex(canonicalBytes(value));
}
