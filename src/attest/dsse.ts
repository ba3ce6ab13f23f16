/**
 * @module
 * Export for interoperability (attest.md §2): a DSSE envelope (secure-systems-lab
 * DSSE v1) carrying an in-toto Statement v1 whose subject digest is the output's
 * SHA-256 and whose predicate is the Witness evidence path. The envelope signature is
 * Ed25519 over DSSE's pre-authentication encoding (PAE), made with the releasing
 * deployer's key; PAE's "DSSEv1" prefix and our receipt tags keep the two kinds of
 * signature from ever verifying as each other.
 */
import { z } from 'zod';
import { WitnessError } from '../core/errors.js';
import type { SigningKey } from './keys.js';
import { ed25519Signer } from './signature.js';
import { parseJsonText, type Receipt } from './receipt.js';
import { type Reason, reason } from './reasons.js';
import { acceptPath, checkPath, type VerifyOptions, type VerifyResult } from './verify.js';
import { decodeBase64Strict } from './tlog/note.js';

export const IN_TOTO_PAYLOAD_TYPE = 'application/vnd.in-toto+json';
export const STATEMENT_TYPE = 'https://in-toto.io/Statement/v1';
export const PREDICATE_TYPE = 'https://agent-witness.dev/attest/receipt/v1';

export interface DsseEnvelope {
  payloadType: string;
  /** Standard base64 of the serialized statement. */
  payload: string;
  signatures: Array<{ keyid: string; sig: string }>;
}

// Strict, as every Witness format is: a member no reader checks is one that can be edited unseen.
const EnvelopeSchema = z.strictObject({
  payloadType: z.string(),
  payload: z.string().regex(/^[A-Za-z0-9+/]*={0,2}$/, 'expected standard base64'),
  signatures: z.array(z.strictObject({ keyid: z.string(), sig: z.string() })).min(1),
});

const StatementSchema = z.object({
  _type: z.literal(STATEMENT_TYPE),
  subject: z.array(z.object({ name: z.string(), digest: z.record(z.string(), z.string()) })).min(1),
  predicateType: z.literal(PREDICATE_TYPE),
  predicate: z.object({ path: z.array(z.unknown()).min(1) }),
});

/** DSSE v1 pre-authentication encoding: "DSSEv1" SP len(type) SP type SP len(body) SP body. */
export function pae(payloadType: string, payload: Uint8Array): Buffer {
  const type = Buffer.from(payloadType, 'utf8');
  return Buffer.concat([Buffer.from(`DSSEv1 ${type.length} `), type, Buffer.from(` ${payload.length} `), payload]);
}

/** Wraps an evidence path (root → leaf) in a signed DSSE envelope; `key` must be the leaf's key. */
export function exportDsse(path: readonly Receipt[], key: SigningKey, options: { name?: string } = {}): DsseEnvelope {
  const leaf = path.at(-1);
  if (!leaf) throw new WitnessError('USAGE', 'Nothing to export: the evidence path is empty.');
  if (leaf.key_id !== key.kid)
    throw new WitnessError(
      'USAGE',
      `The key ${key.kid} did not sign this receipt (${leaf.key_id}); export with the releasing deployer's key.`,
    );
  const statement = {
    _type: STATEMENT_TYPE,
    subject: [{ name: options.name ?? 'output', digest: { sha256: leaf.output_sha256 } }],
    predicateType: PREDICATE_TYPE,
    predicate: { path },
  };
  const payload = Buffer.from(JSON.stringify(statement), 'utf8');
  return {
    payloadType: IN_TOTO_PAYLOAD_TYPE,
    payload: payload.toString('base64'),
    signatures: [
      {
        keyid: key.kid,
        sig: Buffer.from(
          ed25519Signer(key, 'sign a DSSE envelope').sign(pae(IN_TOTO_PAYLOAD_TYPE, payload)),
          'base64url',
        ).toString('base64'),
      },
    ],
  };
}

/**
 * Verifies an envelope: its PAE signature by the leaf's key (from the verifier's own
 * directory), the subject digest, then the evidence path inside against `output`. The
 * leaf's nonce is consumed only when all of these pass.
 */
export async function verifyDsse(envelope: unknown, output: Uint8Array, options: VerifyOptions): Promise<VerifyResult> {
  const fail = (reasons: Reason[]): VerifyResult => ({ ok: false, reasons, signaturesChecked: 0 });
  const env = EnvelopeSchema.safeParse(envelope);
  if (!env.success)
    return fail([
      reason(
        'MALFORMED',
        `Not a DSSE envelope: ${env.error.issues[0]?.path.join('.')}: ${env.error.issues[0]?.message}.`,
      ),
    ]);
  if (env.data.payloadType !== IN_TOTO_PAYLOAD_TYPE)
    return fail([reason('MALFORMED', `The envelope carries ${env.data.payloadType}, not an in-toto statement.`)]);
  // One spelling per byte string: Node's decoder ignores stray characters and unused low bits, so another text of the same bytes would verify.
  const payload = decodeBase64Strict(env.data.payload);
  const sigs = env.data.signatures.map((s) => decodeBase64Strict(s.sig));
  if (payload === undefined || sigs.includes(undefined))
    return fail([
      reason(
        'NON_CANONICAL',
        `The envelope's ${payload === undefined ? 'payload' : `signature ${sigs.indexOf(undefined) + 1}`} is not in the one canonical spelling of standard base64 (RFC 4648 §4, padded, unused bits zero): it was written or edited by something other than a DSSE signer.`,
      ),
    ]);
  const json = parseJsonText(payload, 'the envelope payload');
  if (!json.ok) return fail(json.reasons);
  const parsed = StatementSchema.safeParse(json.value);
  if (!parsed.success)
    return fail([
      reason(
        'MALFORMED',
        `The statement is not a Witness receipt statement: ${parsed.error.issues[0]?.path.join('.')}: ${parsed.error.issues[0]?.message}.`,
      ),
    ]);
  const statement = parsed.data;
  const check = checkPath(statement.predicate.path, output, options);
  const leaf = check.path?.at(-1);
  if (leaf) {
    const key = options.directory.get(leaf.key_id);
    const signed = env.data.signatures.some(
      (s, i) =>
        s.keyid === leaf.key_id &&
        key !== undefined &&
        key.verify(pae(env.data.payloadType, payload), sigs[i] as Buffer),
    );
    if (!signed)
      check.reasons.push(
        reason('BAD_SIGNATURE', `The envelope has no valid DSSE signature by the releasing key ${leaf.key_id}.`),
      );
    if (!statement.subject.some((s) => s.digest.sha256 === leaf.output_sha256))
      check.reasons.push(
        reason('OUTPUT_MISMATCH', "The statement subject's sha256 is not the receipt's output digest."),
      );
  }
  return acceptPath(check, options);
}
