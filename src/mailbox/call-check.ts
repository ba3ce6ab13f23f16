/**
 * @module
 * Reading one call-log line as evidence: parsed strictly (a repeated key is refused:
 * a record must have one reading), shaped like a call record, and genuine — its
 * receipt names the verifier's key and algorithm and its signature holds. Shared by
 * `witness mailbox verify` and by the stores, which answer a retried keyed send as a
 * duplicate only on a genuine receipt (ops.receiptBacks).
 */
import type { Verifier } from '../attest/signature.js';
import { parseStrictJson } from '../core/strict-json.js';
import { type CallReceipt, type CallRecord, LEGACY_LINE_VERSION, LINE_VERSION, signedBytes } from './call-log.js';

/** A call record, parsed strictly, or why the line is not one. */
export function parseCallRecord(text: string): CallRecord | { reason: string } {
  let r: CallRecord;
  try {
    r = parseStrictJson(text, { what: 'the line' }) as CallRecord;
  } catch (error) {
    return { reason: (error as Error).message };
  }
  const shaped =
    typeof r === 'object' &&
    r !== null &&
    (r.v === LINE_VERSION || r.v === LEGACY_LINE_VERSION) &&
    Number.isSafeInteger(r.seq) &&
    typeof r.prev === 'string' &&
    typeof r.agent === 'string' &&
    typeof r.tool === 'string' &&
    typeof r.ok === 'boolean' &&
    Array.isArray(r.message_ids) &&
    r.message_ids.every((id) => typeof id === 'string') &&
    typeof r.receipt === 'object' &&
    r.receipt !== null &&
    typeof r.receipt.sig === 'string';
  return shaped
    ? r
    : {
        reason: `missing or mistyped v (${LEGACY_LINE_VERSION} or ${LINE_VERSION}), seq, prev, agent, tool, ok, message_ids or receipt`,
      };
}

/** The record's receipt is this verifier's and its signature holds. */
export function isGenuineCall(record: CallRecord, verifier: Verifier): boolean {
  return _receiptFits(record.receipt, verifier) && verifier.verify(_signedBytesOf(record), record.receipt.sig);
}

/** The line as a genuine call record, or undefined (unreadable, misshapen, forged). */
export function genuineCall(text: string | undefined, verifier: Verifier): CallRecord | undefined {
  if (text === undefined) return undefined;
  const record = parseCallRecord(text);
  return !('reason' in record) && isGenuineCall(record, verifier) ? record : undefined;
}

/** The bytes the receipt signed; a record with a value canonical JSON cannot hold signs nothing. */
function _signedBytesOf(record: CallRecord): Uint8Array {
  try {
    return signedBytes(record as unknown as Record<string, unknown>);
  } catch {
    return new Uint8Array(0);
  }
}

/**
 * The receipt names this key and algorithm and holds nothing else. Its fields are
 * outside the signed bytes, and the newest line has no successor whose `prev` would
 * catch an edit, so they are checked here.
 */
function _receiptFits(receipt: CallReceipt, verifier: Verifier): boolean {
  const keys = Object.keys(receipt).sort().join(',');
  return keys === 'alg,kid,sig' && receipt.alg === verifier.alg && receipt.kid === verifier.kid;
}
