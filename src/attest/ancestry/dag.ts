/**
 * @module
 * The dual-signed DAG (attest.md §1): for a delegation edge, the child's record itself
 * is the edge manifest (type "edge", tag `witness/edge/v1\0`). It holds the parent
 * receipt digest and the whole child record — output hash, nonce, validity, co-signer
 * policy — and the parent's deployer signs those same bytes. A co-signature therefore
 * cannot be moved to another edge, and a stolen child key alone cannot claim a parent.
 * The parent deployer must always be in the co-signer policy; the verifier may demand
 * more. If the parent's and child's keys both leak, the guarantee is gone.
 */
import { WitnessError } from '../../core/errors.js';
import type { KeyDirectory, TrustedKey } from '../key-directory.js';
import { keyProblem, type RevocationPolicy } from '../key-status.js';
import type { SigningKey } from '../keys.js';
import { ed25519Signer } from '../signature.js';
import {
  type PreparedReceipt,
  type Signature,
  signingBytes,
  type UnsignedReceipt,
  unsignedRecordProblems,
} from '../receipt.js';
import { type Reason, reason } from '../reasons.js';

export interface CosignCheckOptions {
  directory: KeyDirectory;
  now: number;
  revocation: RevocationPolicy;
  /** Deployers that must co-sign every edge, beyond the receipt's own policy. */
  requireCosigners: readonly string[];
}

/** Co-signature checks of the edge at `index`, whose parent receipt is `parent`. */
export function checkCosignatures(
  parent: PreparedReceipt,
  child: PreparedReceipt,
  index: number,
  options: CosignCheckOptions,
): Reason[] {
  const r = child.receipt;
  const reasons: Reason[] = [];
  if (!r.cosigners.includes(parent.receipt.deployer)) {
    reasons.push(
      reason(
        'COSIGNATURE_MISSING',
        `Edge ${index}'s co-signer policy [${r.cosigners.join(', ')}] omits the parent deployer ${parent.receipt.deployer}; without the parent's signature the edge is only the child's claim.`,
        index,
      ),
    );
  }
  const required = new Set([...r.cosigners, ...options.requireCosigners]);
  for (const deployer of required) {
    const problem = _cosignerProblem(child, deployer, index, options);
    if (problem) reasons.push(problem);
  }
  return reasons;
}

/** Finds one valid co-signature by `deployer`; otherwise the most telling problem. */
function _cosignerProblem(
  child: PreparedReceipt,
  deployer: string,
  index: number,
  options: CosignCheckOptions,
): Reason | undefined {
  const r = child.receipt;
  // The releasing signature never counts as a co-signature, even for the same deployer.
  const candidates: Array<{ sig: Signature; key: TrustedKey }> = [];
  for (const sig of r.signatures) {
    const key = sig.key_id === r.key_id ? undefined : options.directory.get(sig.key_id);
    if (key && key.deployer === deployer) candidates.push({ sig, key });
  }
  if (candidates.length === 0) {
    return reason(
      'COSIGNATURE_MISSING',
      `Edge ${index} carries no signature by a key the directory trusts for ${deployer}, which the co-signer policy requires.`,
      index,
    );
  }
  let first: Reason | undefined;
  for (const { sig, key } of candidates) {
    const problem =
      keyProblem(key, child.issuedAt, options.now, options.revocation, index) ??
      (key.verify(child.signingBytes, sig.sig)
        ? undefined
        : reason(
            'COSIGNATURE_INVALID',
            `Edge ${index}: the co-signature by ${key.kid} (${deployer}) does not verify over this edge.`,
            index,
          ));
    if (!problem) return undefined;
    first ??= problem;
  }
  return first;
}

/** Decides whether a parent deployer co-signs an edge: true, or the refusal reason. */
export type CosignGrant = (edge: UnsignedReceipt) => true | string;

export interface Cosigner {
  readonly deployer: string;
  readonly keyId: string;
  /** Signs the edge manifest, or throws `REFUSED` with the refusal. */
  cosign(edge: UnsignedReceipt): Signature;
}

/**
 * The parent side: co-signs only well-formed edges (a verifier would accept their
 * shape: real times, a non-empty window) that name it in the policy and that `grant`
 * accepts (a delegation this parent issued, §5). The key stays inside the closure.
 */
export function createCosigner(key: SigningKey, grant: CosignGrant): Cosigner {
  const signer = ed25519Signer(key, 'co-sign a dag edge');
  return Object.freeze({
    deployer: key.deployer,
    keyId: key.kid,
    cosign(edge: UnsignedReceipt): Signature {
      const problems = unsignedRecordProblems(edge);
      const refusal =
        problems.length > 0
          ? `the edge is malformed: ${problems.map((r) => r.message).join(' ')}`
          : edge.type !== 'edge' || edge.construction !== 'dag'
            ? 'only dag edge manifests are co-signed'
            : !edge.cosigners.includes(key.deployer)
              ? `the edge's co-signer policy does not name ${key.deployer}`
              : grant(edge);
      if (refusal !== true)
        throw new WitnessError('REFUSED', `${key.deployer} refused to co-sign the edge: ${refusal}.`);
      return { key_id: key.kid, alg: 'Ed25519', sig: signer.sign(signingBytes(edge)) };
    },
  });
}

/** A grant for one delegation: the parent receipt it issued, the child deployer, until when. */
export function delegationGrant(grant: {
  parentDigest: string;
  childDeployer: string;
  expiresAt: number;
  now?: () => number;
}): CosignGrant {
  return (edge) => {
    if (edge.parent !== grant.parentDigest) return 'no delegation was issued from that parent receipt';
    if (edge.deployer !== grant.childDeployer)
      return `the delegation was issued to ${grant.childDeployer}, not ${edge.deployer}`;
    if ((grant.now ?? Date.now)() >= grant.expiresAt) return 'the delegation grant has expired';
    return true;
  };
}
