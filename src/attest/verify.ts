/**
 * @module
 * The verifier (attest.md §4). Checks a whole ancestry path root → leaf and the leaf's
 * output bytes, and answers with reason codes — every problem found, never a bare
 * boolean and never an exception for bad evidence. Trust comes only from the caller's
 * own key directory; nothing inside the evidence can add a key.
 */
import { hash } from 'node:crypto';
import { checkLink, checkRoot } from './ancestry/chain.js';
import { checkCosignatures } from './ancestry/dag.js';
import { MerkleFrontier } from '../core/tlog/merkle.js';
import { checkAncestryRoot } from './ancestry/merkle.js';
import type { KeyDirectory } from './key-directory.js';
import { keyProblem, type RevocationPolicy } from './key-status.js';
import type { NonceStore } from './nonce-store.js';
import { capPerCode } from '../core/cap-per-code.js';
import { WitnessError } from '../core/errors.js';
import {
  type Construction,
  evidencePath,
  MAX_DEPTH,
  type PreparedReceipt,
  parseJsonText,
  parseReceipt,
  type Receipt,
} from './receipt.js';
import { type Reason, reason } from './reasons.js';

/** The longest path a verifier reads: the root and MAX_DEPTH delegations (PATH_TOO_LONG beyond). */
export const MAX_PATH_LENGTH = MAX_DEPTH + 1;
/** The largest clock skew a verifier may allow, ms (1 hour); the nonce store keeps nonces that long past expiry. */
export const MAX_SKEW_MS = 3_600_000;
/** Reasons of one code listed before the rest are only counted. */
export const MAX_REASONS_PER_CODE = 16;

export interface VerifyOptions {
  /** The verifier's own key directory: the only trust root. */
  directory: KeyDirectory;
  /** Shared memory of accepted nonces; without one, replays are not detected. */
  nonceStore?: NonceStore;
  /** Verification time (default: now). */
  now?: number | Date;
  /** Clock skew tolerated on the receipt's validity window, ms (default 0, at most MAX_SKEW_MS). */
  skewMs?: number;
  /** The construction this verifier requires of the path; a different one is CONSTRUCTION_MISMATCH. */
  construction?: Construction;
  revocation?: RevocationPolicy;
  /** Deployers that must co-sign every dag edge, beyond each edge's own policy. */
  requireCosigners?: readonly string[];
}

export interface VerifyResult {
  ok: boolean;
  /** Empty exactly when `ok`. */
  reasons: Reason[];
  /** The path root → leaf, when every receipt parsed. */
  path?: Receipt[];
  /** Signatures on the path, each verified when the path is valid (for benchmarks against raw Ed25519). */
  signaturesChecked: number;
}

/** Verifies evidence (one receipt, or `{path: [...]}`, as value or JSON text) against output bytes. */
export async function verifyEvidence(
  evidence: unknown,
  output: Uint8Array,
  options: VerifyOptions,
): Promise<VerifyResult> {
  let value = evidence;
  if (typeof evidence === 'string' || evidence instanceof Uint8Array) {
    const parsed = parseJsonText(evidence, 'the evidence');
    if (!parsed.ok) return { ok: false, reasons: parsed.reasons, signaturesChecked: 0 };
    value = parsed.value;
  }
  const path = evidencePath(value);
  if (!path.ok) return { ok: false, reasons: path.reasons, signaturesChecked: 0 };
  return verifyPath(path.value, output, options);
}

/** Verifies an ancestry path, root first, whose last receipt released `output`; consumes the leaf's nonce when valid. */
export async function verifyPath(
  path: readonly unknown[],
  output: Uint8Array,
  options: VerifyOptions,
): Promise<VerifyResult> {
  return acceptPath(checkPath(path, output, options), options);
}

/** What `checkPath` found: every reason, and the parsed path when every receipt parsed. */
export interface PathCheck {
  reasons: Reason[];
  path?: Receipt[];
  leaf?: PreparedReceipt;
  signaturesChecked: number;
}

/**
 * Every check of `verifyPath` except the nonce: nothing is consumed. A wrapper with
 * checks of its own (a DSSE envelope) adds its reasons, then calls `acceptPath`.
 */
export function checkPath(path: readonly unknown[], output: Uint8Array, options: VerifyOptions): PathCheck {
  const skew = options.skewMs ?? 0;
  if (!(skew >= 0 && skew <= MAX_SKEW_MS))
    throw new WitnessError(
      'USAGE',
      `The clock skew must be from 0 to ${MAX_SKEW_MS} ms (${MAX_SKEW_MS / 1000} s); got ${skew}.`,
    );
  if (path.length === 0)
    return { reasons: [reason('MALFORMED', 'The path is empty; give at least one receipt.')], signaturesChecked: 0 };
  // Checked before any receipt is parsed: the work a path can cause stays bounded.
  if (path.length > MAX_PATH_LENGTH)
    return {
      reasons: [
        reason(
          'PATH_TOO_LONG',
          `The path holds ${path.length} receipts; a delegation path holds at most ${MAX_PATH_LENGTH} receipts (depth 0–${MAX_DEPTH}).`,
        ),
      ],
      signaturesChecked: 0,
    };
  const prepared: PreparedReceipt[] = [];
  const parseReasons: Reason[] = [];
  for (let i = 0; i < path.length; i++) {
    const parsed = parseReceipt(path[i], path.length > 1 ? i : undefined);
    if (parsed.ok) prepared.push(parsed.value);
    else parseReasons.push(...parsed.reasons);
  }
  if (parseReasons.length > 0) return { reasons: boundReasons(parseReasons), signaturesChecked: 0 };

  const now =
    options.now === undefined ? Date.now() : typeof options.now === 'number' ? options.now : options.now.getTime();
  if (!(Math.abs(now) <= 8.64e15))
    throw new WitnessError('USAGE', `The verification time must be a valid date; got ${String(options.now)}.`);
  const ctx: _Ctx = {
    directory: options.directory,
    construction: options.construction,
    now,
    skew,
    revocation: options.revocation ?? 'from-revoked-at',
    requireCosigners: options.requireCosigners ?? [],
  };
  const leaf = prepared[prepared.length - 1] as PreparedReceipt;
  const reasons: Reason[] = [];
  _checkStructure(prepared, ctx, reasons);
  _checkSignatures(prepared, ctx, reasons);
  _checkLeaf(leaf, output, ctx, prepared.length - 1, reasons);
  // A lone receipt has no path positions worth naming.
  if (prepared.length === 1)
    for (const r of reasons) {
      delete r.index;
      delete r.at;
    }
  let signaturesChecked = 0;
  const receipts: Receipt[] = [];
  for (const p of prepared) {
    signaturesChecked += p.receipt.signatures.length;
    receipts.push(p.receipt);
  }
  return { reasons: boundReasons(reasons), path: receipts, leaf, signaturesChecked };
}

/**
 * The last step of every verification: evidence that passed every check, and only
 * that, consumes its leaf's nonce — a forger cannot burn a genuine receipt's nonce with
 * an invalid copy or a broken envelope. The nonce is kept until the receipt has expired
 * beyond the largest skew any verifier may allow, so pruning by the real clock never
 * forgets a receipt some verifier could still accept.
 */
export async function acceptPath(check: PathCheck, options: Pick<VerifyOptions, 'nonceStore'>): Promise<VerifyResult> {
  const reasons = [...check.reasons];
  const leaf = check.leaf;
  if (reasons.length === 0 && leaf && options.nonceStore) {
    const fresh = await options.nonceStore.claim(
      `${leaf.receipt.key_id}:${leaf.receipt.nonce}`,
      leaf.notAfter + MAX_SKEW_MS,
    );
    if (!fresh)
      reasons.push(
        reason(
          'REPLAY',
          `Nonce ${leaf.receipt.nonce} of key ${leaf.receipt.key_id} was already accepted; this receipt is a replay.`,
        ),
      );
  }
  return {
    ok: reasons.length === 0,
    reasons,
    ...(check.path ? { path: check.path } : {}),
    signaturesChecked: check.signaturesChecked,
  };
}

/**
 * At most MAX_REASONS_PER_CODE reasons of each code, then one that counts the rest:
 * a long broken path says what is wrong without repeating it thousands of times.
 */
export function boundReasons(reasons: Reason[]): Reason[] {
  return capPerCode(reasons, MAX_REASONS_PER_CODE, (code, more) =>
    reason(code, `…and ${more} more ${code} reasons on this path (the first ${MAX_REASONS_PER_CODE} are listed).`),
  );
}

interface _Ctx {
  directory: KeyDirectory;
  construction: Construction | undefined;
  now: number;
  skew: number;
  revocation: RevocationPolicy;
  requireCosigners: readonly string[];
}

/** Links, depths and construction consistency; Merkle roots and dag co-signatures per edge. */
function _checkStructure(path: PreparedReceipt[], ctx: _Ctx, reasons: Reason[]): void {
  const construction = (path[path.length - 1] as PreparedReceipt).receipt.construction;
  if (ctx.construction !== undefined && construction !== ctx.construction) {
    reasons.push(
      reason(
        'CONSTRUCTION_MISMATCH',
        `The path uses construction ${construction}; this verifier requires ${ctx.construction}.`,
        path.length - 1,
      ),
    );
  }
  const frontier = construction === 'merkle' ? new MerkleFrontier() : undefined;
  for (let i = 0; i < path.length; i++) {
    const p = path[i] as PreparedReceipt;
    _shapeProblems(p.receipt, i, construction, path.length, reasons);
    const parent = path[i - 1];
    if (!parent) reasons.push(...checkRoot(p));
    else {
      reasons.push(...checkLink(parent, p, i));
      if (p.receipt.type === 'edge') reasons.push(...checkCosignatures(parent, p, i, ctx));
      else if (ctx.requireCosigners.length > 0) {
        reasons.push(
          reason(
            'COSIGNATURE_MISSING',
            `Receipt ${i} is a ${p.receipt.construction} link, not a dag edge: it carries no co-signature, and this verifier requires ${ctx.requireCosigners.join(', ')} to co-sign every delegation.`,
            i,
          ),
        );
      }
    }
    // Only a Merkle path commits to a tree; other constructions skip the hashing (a
    // stray merkle receipt elsewhere is already a CONSTRUCTION_MISMATCH).
    if (frontier) {
      if (p.receipt.construction === 'merkle') reasons.push(...checkAncestryRoot(frontier, p, i));
      frontier.append(p.digestBytes);
    }
  }
}

/** Field combinations a construction allows at a position (type, policy, ancestry root, signature count). */
function _shapeProblems(r: Receipt, i: number, construction: Construction, length: number, out: Reason[]): void {
  const problems: string[] = [];
  if (i > 0 && r.construction !== construction)
    problems.push(`construction ${r.construction} inside a ${construction} path`);
  if (i === 0 && length > 1 && r.construction !== construction && r.construction !== 'none')
    problems.push(`a ${r.construction} root under a ${construction} path`);
  if (i > 0 && r.construction === 'none') problems.push('construction none cannot have a parent');
  const isEdge = r.construction === 'dag' && r.parent !== null;
  if (r.type !== (isEdge ? 'edge' : 'output'))
    problems.push(
      isEdge
        ? 'a dag receipt with a parent must be of type edge'
        : `type ${r.type} is only for dag receipts with a parent`,
    );
  if (!isEdge && r.cosigners.length > 0)
    problems.push(`a co-signer policy belongs only on dag edges, not on a ${r.construction} receipt`);
  if ((r.construction === 'merkle') !== (r.ancestry_root !== undefined))
    problems.push(
      r.construction === 'merkle'
        ? 'a merkle receipt needs ancestry_root'
        : 'ancestry_root belongs only on merkle receipts',
    );
  for (const why of problems) out.push(reason('CONSTRUCTION_MISMATCH', `Receipt ${i}: ${why}.`, i));
  if (!isEdge && r.signatures.length !== 1)
    out.push(
      reason(
        'MALFORMED',
        `Receipt ${i}: a ${r.construction} receipt carries exactly one signature, this one ${r.signatures.length}.`,
        i,
      ),
    );
}

/** The releasing deployer's key and signature on every receipt of the path. */
function _checkSignatures(path: PreparedReceipt[], ctx: _Ctx, reasons: Reason[]): void {
  for (let i = 0; i < path.length; i++) {
    const p = path[i] as PreparedReceipt;
    const r = p.receipt;
    const index = i;
    const key = ctx.directory.get(r.key_id);
    if (!key) {
      reasons.push(
        reason(
          'UNKNOWN_KEY',
          `Key ${r.key_id} is not in the verifier's key directory; a key carried by the evidence is never trusted. Add the deployer's public key with: witness keys add`,
          index,
        ),
      );
      continue;
    }
    if (key.deployer !== r.deployer)
      reasons.push(
        reason(
          'WRONG_DEPLOYER',
          `Receipt ${i} names deployer ${r.deployer}, but key ${r.key_id} belongs to ${key.deployer}.`,
          index,
        ),
      );
    const problem = keyProblem(key, p.issuedAt, ctx.now, ctx.revocation, index);
    if (problem) reasons.push(problem);
    let sig: Receipt['signatures'][number] | undefined;
    for (const s of r.signatures) if (s.key_id === r.key_id) sig = s;
    if (!sig || !key.verify(p.signingBytes, sig.sig)) {
      reasons.push(
        reason(
          'BAD_SIGNATURE',
          sig
            ? `Receipt ${i}: the signature of ${r.key_id} does not verify over the receipt bytes.`
            : `Receipt ${i} has no signature by its own key_id ${r.key_id}.`,
          index,
        ),
      );
    }
  }
}

/** Validity window against the verifier clock, and the output bytes. */
function _checkLeaf(leaf: PreparedReceipt, output: Uint8Array, ctx: _Ctx, i: number, reasons: Reason[]): void {
  const r = leaf.receipt;
  const index = i;
  if (leaf.issuedAt > ctx.now + ctx.skew)
    reasons.push(
      reason(
        'NOT_YET_VALID',
        `The receipt is issued at ${r.issued_at}, after the verifier's time ${new Date(ctx.now).toISOString()} (skew ${ctx.skew} ms).`,
        index,
      ),
    );
  if (ctx.now - ctx.skew >= leaf.notAfter)
    reasons.push(
      reason(
        'EXPIRED',
        `The receipt expired at ${r.not_after}; the verifier's time is ${new Date(ctx.now).toISOString()} (skew ${ctx.skew} ms).`,
        index,
      ),
    );
  const outputSha256 = hash('sha256', output, 'hex');
  if (outputSha256 !== r.output_sha256)
    reasons.push(
      reason(
        'OUTPUT_MISMATCH',
        `The output's SHA-256 is ${outputSha256}, the receipt says ${r.output_sha256}: these are not the bytes that were released.`,
        index,
      ),
    );
  if (output.length !== r.output_len)
    reasons.push(
      reason('LENGTH_MISMATCH', `The output has ${output.length} bytes, the receipt says ${r.output_len}.`, index),
    );
}
