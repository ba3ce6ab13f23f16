/**
 * @module
 * Evidence files: one receipt, or `{"path": [root, …, leaf]}` when the output answers a
 * delegation. A signer reading its parent's evidence needs well-formed receipts (it
 * does not judge trust: that is the verifier's job), so problems are errors here,
 * while the verifier turns the same problems into reason codes.
 */
import { WitnessError } from '../core/errors.js';
import { readNamedFile } from './files.js';
import { evidencePath, parseJsonText, parseReceipt, type Receipt } from './receipt.js';
import type { Reason } from './reasons.js';

/** The JSON value of the evidence a signer or exporter should write. */
export function evidenceOf(path: readonly Receipt[]): Receipt | { path: Receipt[] } {
  return path.length === 1 ? (path[0] as Receipt) : { path: [...path] };
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
  return new WitnessError('INVALID_INPUT', `${file} is not a valid Witness receipt or evidence path:\n${lines}\nPass the file \`witness attest sign\` printed.`, { data: { reasons } });
}
