/**
 * @module
 * The release-boundary signer (attest.md §1–§2). The deployer's runtime creates it
 * with the key and hands agents nothing but the output channel: just before bytes are
 * delivered, the runtime calls `releaseOutput(bytes, context)`, which hashes exactly
 * those bytes and signs the record. The agent never holds the key and never fills in a
 * "verified" field. For a dag edge the parent's co-signature is requested before the
 * receipt exists; refusal or timeout fails closed (no receipt at all).
 */
import { randomBytes } from 'node:crypto';
import { WitnessError, type WitnessErrorCode } from '../core/errors.js';
import { sha256Hex } from '../core/hash.js';
import { ancestryRoot } from './ancestry/merkle.js';
import type { SigningKey } from './keys.js';
import { ed25519Signer } from './signature.js';
import {
  type Construction,
  isoTime,
  type Receipt,
  receiptDigest,
  type Signature,
  signingBytes,
  type UnsignedReceipt,
  unsignedRecordProblems,
} from './receipt.js';

/** The longest receipt lifetime a signer grants: 100 years of 365 days, ms. */
export const MAX_TTL_MS = 100 * 365 * 86_400_000;

/** Obtains a co-signature of a dag edge manifest from another deployer (e.g. the parent's signing service). */
export type CosignRequest = (edge: UnsignedReceipt, deployer: string) => Signature | Promise<Signature>;

export interface ReleaseSignerOptions {
  key: SigningKey;
  /** Id of the agent instance whose output this runtime releases. */
  instance: string;
  /** How long a receipt stays valid, ms (default one hour, at most MAX_TTL_MS). */
  ttlMs?: number;
  /** Construction for outputs released under a parent (default chain). */
  construction?: Exclude<Construction, 'none'>;
  /** Asks co-signers for dag edges; needed only for dag. */
  cosign?: CosignRequest;
  /** Longest wait for a co-signature, ms (default 10 s); then the release fails. */
  cosignTimeoutMs?: number;
  /** Clock, ms since the epoch (for tests). */
  clock?: () => number;
}

export interface ReleaseContext {
  /**
   * The ancestry path of the delegation this output answers, root first (the last one
   * is the parent); empty for a root output. chain and dag need only the parent, merkle
   * the whole path. The verifier will need the whole path either way.
   */
  ancestors?: readonly Receipt[];
  /** Overrides the signer's construction for this output. */
  construction?: Construction;
  /** dag co-signer policy (default: the parent's deployer). */
  cosigners?: readonly string[];
  /** Overrides the instance id (one runtime may host several agents). */
  instance?: string;
}

export interface ReleaseSigner {
  readonly deployer: string;
  readonly keyId: string;
  releaseOutput(bytes: Uint8Array, context?: ReleaseContext): Promise<Receipt>;
}

/** A signer whose key lives only in this closure: nothing on the returned object reveals it. */
export function createReleaseSigner(options: ReleaseSignerOptions): ReleaseSigner {
  const { kid, deployer } = options.key;
  const signer = ed25519Signer(options.key, 'sign release receipts');
  const clock = options.clock ?? Date.now;
  const ttl = options.ttlMs ?? 3_600_000;
  if (!(ttl > 0 && ttl <= MAX_TTL_MS))
    throw new WitnessError(
      'USAGE',
      `The receipt lifetime (ttlMs) must be more than 0 and at most ${MAX_TTL_MS} ms (100 years); got ${ttl}.`,
    );
  return Object.freeze({
    deployer,
    keyId: kid,
    async releaseOutput(bytes: Uint8Array, context: ReleaseContext = {}): Promise<Receipt> {
      const ancestors = context.ancestors ?? [];
      const parent = ancestors.at(-1);
      const construction = context.construction ?? (parent ? (options.construction ?? 'chain') : 'none');
      if (parent && construction === 'none')
        throw new WitnessError(
          'USAGE',
          'An output released under a parent needs a construction: chain, merkle or dag.',
        );
      const isEdge = construction === 'dag' && parent !== undefined;
      // chain and dag need only the parent; a Merkle commitment needs every ancestor.
      const depth = parent ? parent.depth + 1 : 0;
      if (construction === 'merkle' && ancestors.length !== depth) {
        throw new WitnessError(
          'USAGE',
          `A merkle receipt commits to every ancestor: pass the whole path (${depth} receipts, root first), not ${ancestors.length}.`,
        );
      }
      const issuedAt = clock();
      const record: UnsignedReceipt = {
        v: 1,
        type: isEdge ? 'edge' : 'output',
        output_sha256: sha256Hex(bytes),
        output_len: bytes.length,
        deployer,
        instance: context.instance ?? options.instance,
        key_id: kid,
        issued_at: isoTime(issuedAt),
        not_after: isoTime(issuedAt + ttl),
        nonce: randomBytes(16).toString('base64url'),
        parent: parent ? receiptDigest(parent) : null,
        depth,
        construction,
        cosigners: isEdge ? [...(context.cosigners ?? [(parent as Receipt).deployer])] : [],
        ...(construction === 'merkle' ? { ancestry_root: ancestryRoot(ancestors) } : {}),
      };
      _assertWellFormed(record);
      const own: Signature = { key_id: kid, alg: 'Ed25519', sig: signer.sign(signingBytes(record)) };
      const cosignatures = isEdge ? await _collectCosignatures(record, options) : [];
      return { ...record, signatures: [own, ...cosignatures] };
    },
  });
}

/** Never sign what a verifier would call MALFORMED (e.g. a bad co-signer name or instance id). */
function _assertWellFormed(record: UnsignedReceipt): void {
  const problems = unsignedRecordProblems(record);
  if (problems.length > 0)
    throw new WitnessError(
      'USAGE',
      `Refusing to sign a malformed receipt: ${problems.map((r) => r.message).join(' ')}`,
    );
}

/** What a co-signer's failure already says exactly, kept as it is; anything else a co-sign function throws is a refusal. */
const _COSIGN_FAILURES: ReadonlySet<WitnessErrorCode> = new Set(['REFUSED', 'TIMEOUT', 'UNAVAILABLE']);

async function _collectCosignatures(edge: UnsignedReceipt, options: ReleaseSignerOptions): Promise<Signature[]> {
  const request = options.cosign;
  if (!request)
    throw new WitnessError(
      'USAGE',
      'A dag edge needs co-signatures, but the signer has no cosign function; give it the parent signing service.',
    );
  const timeoutMs = options.cosignTimeoutMs ?? 10_000;
  const out: Signature[] = [];
  for (const deployer of edge.cosigners) {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () =>
          reject(
            new WitnessError(
              'TIMEOUT',
              `No co-signature within ${timeoutMs} ms; the output is not released (fail closed).`,
            ),
          ),
        timeoutMs,
      );
    });
    try {
      const sig = await Promise.race([Promise.resolve().then(() => request(edge, deployer)), timeout]);
      if (!out.some((s) => s.key_id === sig.key_id)) out.push(sig);
    } catch (cause) {
      if (cause instanceof WitnessError && _COSIGN_FAILURES.has(cause.code)) throw cause;
      throw new WitnessError(
        'REFUSED',
        `The co-signer refused or failed: ${(cause as Error).message} The output is not released (fail closed).`,
        { cause },
      );
    } finally {
      clearTimeout(timer);
    }
  }
  return out;
}
