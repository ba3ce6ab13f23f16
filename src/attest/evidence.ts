/**
 * @module
 * Evidence files: one receipt, a delegation path `{"type": "witness/path", "path":
 * [root, …, leaf]}` when the output answers a delegation, or a bundle that carries the
 * output bytes with their evidence (`{"type": "witness/bundle", …}`). A signer reading
 * its parent's evidence needs well-formed receipts (it does not judge trust: that is
 * the verifier's job), so problems are errors here, while the verifier turns the same
 * problems into reason codes.
 */
import { z } from 'zod';
import { WitnessError } from '../core/errors.js';
import { readNamedFile } from './files.js';
import { evidencePath, PATH_TYPE, parseJsonText, parseReceipt, type Receipt } from './receipt.js';
import { type Reason, reason } from './reasons.js';
import { type VerifyOptions, type VerifyResult, verifyEvidence } from './verify.js';

/** The declared type of evidence that carries its output: `{type, v: 1, evidence, output_base64}`. */
export const BUNDLE_TYPE = 'witness/bundle';

export interface EvidenceBundle {
  type: typeof BUNDLE_TYPE;
  v: 1;
  /** One receipt, or a delegation path. */
  evidence: Receipt | { type: typeof PATH_TYPE; path: Receipt[] };
  /** The output bytes the leaf receipt released, standard base64 (RFC 4648 §4). */
  output_base64: string;
}

/** The JSON value of the evidence a signer or exporter should write. */
export function evidenceOf(path: readonly Receipt[]): Receipt | { type: typeof PATH_TYPE; path: Receipt[] } {
  return path.length === 1 ? (path[0] as Receipt) : { type: PATH_TYPE, path: [...path] };
}

/** The evidence with the bytes it vouches for, in one file: a verifier needs nothing but its own key directory. */
export function bundleOf(path: readonly Receipt[], output: Uint8Array): EvidenceBundle {
  return { type: BUNDLE_TYPE, v: 1, evidence: evidenceOf(path), output_base64: Buffer.from(output).toString('base64') };
}

const BundleSchema = z.strictObject({
  type: z.literal(BUNDLE_TYPE),
  v: z.literal(1),
  evidence: z.unknown(),
  output_base64: z
    .string()
    .refine(
      (s) => Buffer.from(s, 'base64').toString('base64') === s,
      'expected the output in standard base64 (RFC 4648 §4, padded)',
    ),
});

/** Verifies a bundle: its evidence against the output it carries, with every option of `verifyEvidence`. */
export async function verifyBundle(bundle: unknown, options: VerifyOptions): Promise<VerifyResult> {
  const checked = BundleSchema.safeParse(bundle);
  if (!checked.success) {
    const issue = checked.error.issues[0];
    return {
      ok: false,
      reasons: [
        reason('MALFORMED', `Not a Witness evidence bundle: ${issue?.path.join('.') || '(root)'}: ${issue?.message}.`),
      ],
      signaturesChecked: 0,
    };
  }
  return verifyEvidence(checked.data.evidence, Buffer.from(checked.data.output_base64, 'base64'), options);
}

/** Reads an evidence file as a path root → leaf; malformed content is an INVALID_INPUT error listing the problems. */
export function readEvidenceFile(file: string): Receipt[] {
  const text = readNamedFile(file, 'evidence file');
  const parsed = parseJsonText(text, file);
  if (!parsed.ok) throw _invalid(file, parsed.reasons);
  const path = evidencePath(parsed.value);
  if (!path.ok) throw _invalid(file, path.reasons);
  return path.value.map((item, i) => {
    const receipt = parseReceipt(item, path.value.length > 1 ? i : undefined);
    if (!receipt.ok) throw _invalid(file, receipt.reasons);
    return receipt.value.receipt;
  });
}

function _invalid(file: string, reasons: Reason[]): WitnessError {
  const lines = reasons.map((r) => `  ${r.code}: ${r.message}`).join('\n');
  return new WitnessError(
    'INVALID_INPUT',
    `${file} is not a valid Witness receipt or evidence path:\n${lines}\nPass the file \`witness attest sign\` printed.`,
    { data: { reasons } },
  );
}
