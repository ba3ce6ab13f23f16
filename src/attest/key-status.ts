/**
 * @module
 * Whether a trusted key may vouch for a receipt: inside its validity window at issue
 * time, and not revoked (attest.md §3). Shared by the releasing signature and by
 * co-signatures so both follow the same boundaries.
 */
import type { TrustedKey } from './key-directory.js';
import { type Reason, reason } from './reasons.js';

/**
 * `from-revoked-at` (default): receipts issued at or after `revoked_at` are refused.
 * `all`: once `revoked_at` has passed, every receipt of the key is refused — for a key
 * known to have leaked, whose holder could backdate `issued_at`.
 */
export type RevocationPolicy = 'from-revoked-at' | 'all';

export function keyProblem(
  key: TrustedKey,
  issuedAt: number,
  now: number,
  policy: RevocationPolicy,
  index?: number,
): Reason | undefined {
  if (key.revokedAt !== undefined) {
    if (issuedAt >= key.revokedAt) {
      return reason(
        'REVOKED_KEY',
        `Key ${key.kid} was revoked at ${_iso(key.revokedAt)}, at or before the receipt was issued (${_iso(issuedAt)}).`,
        index,
      );
    }
    if (policy === 'all' && now >= key.revokedAt) {
      return reason(
        'REVOKED_KEY',
        `Key ${key.kid} was revoked at ${_iso(key.revokedAt)}; the revocation policy "all" refuses every receipt of a revoked key.`,
        index,
      );
    }
  }
  if (issuedAt < key.notBefore || issuedAt >= key.notAfter) {
    return reason(
      'KEY_NOT_VALID_AT_ISSUE',
      `Key ${key.kid} is trusted for receipts issued from ${_iso(key.notBefore)} up to (not including) ${_iso(key.notAfter)}; this one was issued at ${_iso(issuedAt)}.`,
      index,
    );
  }
  return undefined;
}

function _iso(ms: number): string {
  return new Date(ms).toISOString();
}
