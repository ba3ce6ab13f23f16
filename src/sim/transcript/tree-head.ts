/**
 * @module
 * A signed results chain as a transparency log (c2sp.org/tlog-checkpoint): each
 * checkpoint carries a C2SP signed-note checkpoint of its chain — origin, line count,
 * base64 RFC 6962 root (leaf data: each line's receipt digest) — signed by the sweep's
 * key under the chain's origin. A user who keeps one (`witness sim checkpoint`) can
 * later prove the file is that log or an append-only extension of it
 * (`witness verify RESULTS --checkpoint KEPT`): cut lines are TRUNCATED, rewritten
 * ones INCONSISTENT, whatever the file's own (replaceable) checkpoint says.
 */
import type { SigningKey } from '../../attest/keys.js';
import type { TrustedKey } from '../../attest/key-directory.js';
import {
  checkpointFor,
  NOTE_TYPE,
  noteSigner,
  noteVerifierOf,
  parseCheckpoint,
  type SignedCheckpoint,
} from '../../attest/tlog/index.js';
import { canonicalize } from '../../core/canonical-json.js';
import { sha256Hex } from '../../core/hash.js';

/**
 * The log name of one chain: the experiment (by digest) and the shard. Two sweeps of
 * one experiment by different keys share it; their notes' keys tell them apart.
 */
export function chainOrigin(experiment: unknown, shard: { index: number; count: number } | null): string {
  return `witness.sim/${sha256Hex(canonicalize(experiment)).slice(0, 16)}/${shard ? `shard-${shard.index}-of-${shard.count}` : 'all'}`;
}

/** Signs tree heads of one chain (one note signer, built once). */
export function treeHeadSigner(key: SigningKey, origin: string): (size: number, rootHex: string) => string {
  const signer = noteSigner(key, origin);
  return (size, rootHex) => checkpointFor(origin, size, Buffer.from(rootHex, 'hex'), signer);
}

/** Reads a tree-head note of `origin` signed by `key` (a key of the verifier's directory); throws INVALID_INPUT (data.problem) when it is not. */
export function readTreeHead(note: string, origin: string, key: TrustedKey): SignedCheckpoint {
  const x = key.key.export({ format: 'jwk' }).x as string;
  return parseCheckpoint(note, [noteVerifierOf(origin, NOTE_TYPE.ed25519, Buffer.from(x, 'base64url'))]);
}
