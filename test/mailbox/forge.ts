/**
 * What an attacker who can write the mailbox but lacks its key can produce: a call-log
 * line that continues the chain (right seq, right prev, the server's kid and alg) with
 * a signature by a key of its own, in the line format asked for.
 */
import { createHmac, randomBytes } from 'node:crypto';
import { DOMAIN_TAGS } from '../../src/attest/domain.js';
import { canonicalBytes } from '../../src/core/canonical-json.js';
import { generateEd25519KeyPair, signEd25519 } from '../../src/core/ed25519.js';
import { sha256Hex } from '../../src/core/hash.js';

/** A plausible next line after `previous` (its exact text), signed by a stranger's key; `version` 1 signs the untagged line. */
export function forgedCallLine(previous: string, entry: Record<string, unknown>, version: 1 | 2): string {
  const last = JSON.parse(previous) as { seq: number; receipt: { alg: string; kid: string } };
  const unsigned = { v: version, seq: last.seq + 1, ts: new Date().toISOString(), ...entry, prev: sha256Hex(previous) };
  const bytes =
    version === 1
      ? canonicalBytes(unsigned)
      : Buffer.concat([Buffer.from(DOMAIN_TAGS.callLogLine), canonicalBytes(unsigned)]);
  const sig =
    last.receipt.alg === 'ed25519'
      ? signEd25519(generateEd25519KeyPair().privateKey, bytes)
      : createHmac('sha256', randomBytes(32)).update(bytes).digest('base64url');
  return JSON.stringify({ ...unsigned, receipt: { alg: last.receipt.alg, kid: last.receipt.kid, sig } });
}
