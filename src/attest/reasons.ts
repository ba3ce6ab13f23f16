/**
 * @module
 * Why a receipt or ancestry path was rejected (attest.md §4). The verifier returns a
 * list of these, never a bare boolean, so a caller can tell a flipped byte from a
 * revoked key from a missing parent co-signature.
 */

/** Every reason code with what it means; the order is the order checks report them. */
export const REASON_CODES = {
  MALFORMED: 'the receipt is not valid JSON or does not match the receipt schema',
  PATH_TOO_LONG: 'the path holds more receipts than any valid delegation can (at most 4097: depth 0–4096)',
  NON_CANONICAL: 'the receipt has no single canonical reading (duplicate keys, lone surrogates, non-canonical encodings)',
  CONSTRUCTION_MISMATCH: 'the ancestry construction or record type is not the one expected on this path',
  DEPTH_MISMATCH: 'the depth field does not equal the receipt position on the path',
  PARENT_MISSING: 'the receipt names a parent that was not supplied',
  PARENT_DIGEST_MISMATCH: 'the parent digest (or Merkle ancestry root) does not match the supplied ancestors',
  UNKNOWN_KEY: "the signing key is not in the verifier's own key directory",
  WRONG_DEPLOYER: 'the signing key belongs to a different deployer than the receipt names',
  KEY_NOT_VALID_AT_ISSUE: "the receipt was issued outside the key's validity window",
  REVOKED_KEY: 'the signing key was revoked at or before the time that matters',
  BAD_SIGNATURE: "the releasing deployer's signature does not verify over the receipt bytes",
  COSIGNATURE_MISSING: 'a deployer the co-signer policy requires (at least the parent) did not sign the edge',
  COSIGNATURE_INVALID: 'a co-signature is present but does not verify over this edge',
  NOT_YET_VALID: 'the receipt is issued in the future, beyond the allowed clock skew',
  EXPIRED: 'the receipt validity window has ended',
  OUTPUT_MISMATCH: 'the SHA-256 of the output bytes differs from the receipt',
  LENGTH_MISMATCH: 'the length of the output bytes differs from the receipt',
  REPLAY: 'this receipt nonce was already accepted by a verifier sharing the nonce store',
} as const;

export type ReasonCode = keyof typeof REASON_CODES;

export interface Reason {
  code: ReasonCode;
  /** What exactly was wrong, in words a user can act on. */
  message: string;
  /** Position on the path (0 = root) of the receipt concerned, when there is one. */
  index?: number;
}

export function reason(code: ReasonCode, message: string, index?: number): Reason {
  return index === undefined ? { code, message } : { code, message, index };
}
