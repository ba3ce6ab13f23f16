/**
 * @module
 * Every kind of artifact `witness verify FILE|DIR` recognises, as one table. An
 * artifact is recognised by the type it declares — a field of the parsed JSON, of the
 * first line of a JSONL file, or of a folder's manifest file — never by searching its
 * text. An artifact written before its kind declared a type is recognised by its exact
 * shape instead (`legacy`; docs/attest.md §9). A new kind of artifact is one entry.
 */
import { DELEGATION_RECORD_TYPE } from '../../a2a/delegation-record.js';
import { E12_KIND } from '../../a2a/e12.js';
import {
  BUNDLE_TYPE,
  IN_TOTO_PAYLOAD_TYPE,
  PATH_TYPE,
  verifyBundle,
  verifyDsse,
  verifyEvidence,
} from '../../attest/index.js';
import { MAILBOX_FORMAT } from '../../mailbox/index.js';
import { NOT_FOR_DELEGATION, verifyDelegationFile } from './delegation.js';
import { NOT_FOR_E12, verifyE12File } from './e12.js';
import { verifyMailboxFolder } from './mailbox.js';
import { RECEIPT_OPTIONS, verifyWithReceiptOptions } from './receipts.js';
import { RESULTS_KINDS } from './results.js';
import { STREAM_KINDS } from './stream.js';
import type { ArtifactKind } from './types.js';

function _isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** A receipt or a path: attest's `verifyEvidence` against `--output`, trusting `--keys`. */
const RECEIPT_EVIDENCE = {
  form: 'json',
  uses: RECEIPT_OPTIONS,
  requires: ['output', 'keys'],
  verify: (a, o, ctx) =>
    verifyWithReceiptOptions(ctx, o, (options, output) => verifyEvidence(a.value, output, options)),
} as const satisfies Omit<ArtifactKind, 'what' | 'declared'>;

export const ARTIFACT_KINDS: readonly ArtifactKind[] = [
  { what: 'a release receipt', declared: { field: 'type', values: ['output', 'edge'] }, ...RECEIPT_EVIDENCE },
  {
    what: 'a delegation path',
    declared: { field: 'type', values: [PATH_TYPE] },
    // Written before paths declared their type: exactly {"path": [...]}.
    legacy: (v) => _isRecord(v) && Object.keys(v).length === 1 && Array.isArray(v.path),
    ...RECEIPT_EVIDENCE,
  },
  {
    what: 'a DSSE envelope',
    form: 'json',
    declared: { field: 'payloadType', values: [IN_TOTO_PAYLOAD_TYPE] },
    uses: RECEIPT_OPTIONS,
    requires: ['output', 'keys'],
    verify: (a, o, ctx) => verifyWithReceiptOptions(ctx, o, (options, output) => verifyDsse(a.value, output, options)),
  },
  {
    what: 'an evidence bundle (a receipt or path with its output)',
    form: 'json',
    declared: { field: 'type', values: [BUNDLE_TYPE] },
    uses: RECEIPT_OPTIONS.filter((n) => n !== 'output'),
    requires: ['keys'],
    why: { output: 'it carries its own output' },
    verify: (a, o, ctx) => verifyWithReceiptOptions(ctx, o, (options) => verifyBundle(a.value, options)),
  },
  {
    what: 'an E12 results file',
    form: 'json',
    declared: { field: 'type', values: [E12_KIND] },
    // Written before E12 files declared `type`: they named themselves in `kind`.
    legacy: (v) => _isRecord(v) && v.kind === E12_KIND && !('type' in v),
    uses: ['keys', 'revocation', 'requireCosigner'],
    why: NOT_FOR_E12,
    verify: verifyE12File,
  },
  {
    what: 'an A2A delegation record',
    form: 'json',
    declared: { field: 'type', values: [DELEGATION_RECORD_TYPE] },
    uses: ['keys', 'revocation', 'requireCosigner'],
    requires: ['keys'],
    why: NOT_FOR_DELEGATION,
    verify: verifyDelegationFile,
  },
  {
    what: 'a mailbox folder',
    form: 'dir',
    manifest: 'mailbox.json',
    declared: { field: 'format', values: [MAILBOX_FORMAT] },
    uses: ['keys', 'checkpoint', 'witness', 'witnessUrl', 'witnessedWithin'],
    why: { output: 'a mailbox holds its own records' },
    verify: verifyMailboxFolder,
  },
  // Signed simulation results (`witness sim --sign`): the results file and its checkpoint file.
  ...RESULTS_KINDS,
  // A recorded stream with chunk receipts (attest/stream).
  ...STREAM_KINDS,
];
