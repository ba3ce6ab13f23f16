/**
 * @module
 * The one vocabulary of reason codes (attest.md §3, §8): every code any Witness
 * verifier reports, with what it means. Verifiers return lists of these, never a bare
 * boolean, so a caller can tell a flipped byte from a revoked key from a dropped log
 * line. Each verifier uses its part of the table: receipts and delegation paths
 * (`REASON_CODES`), hash-chained signed logs such as the mailbox's call log
 * (`LOG_CODES`), archives that carry their own evidence such as E12 results files
 * (`ARCHIVE_CODES`), a delegation's answer as the parent receives it (`DELEGATION_CODES`),
 * and streamed results and their chunk receipts (`STREAM_CODES`). A new kind of
 * evidence adds its codes here, once.
 */
import type { Problem } from '../core/problem.js';

/** Receipts and delegation paths; the order is the order checks report them. */
export const REASON_CODES = {
  MALFORMED: 'the evidence is not valid JSON or does not match its schema (a receipt, a path, an archive)',
  PATH_TOO_LONG: 'the path holds more receipts than any valid delegation can (at most 4097: depth 0–4096)',
  NON_CANONICAL:
    'the receipt has no single canonical reading (duplicate keys, lone surrogates, non-canonical encodings)',
  CONSTRUCTION_MISMATCH: 'the ancestry construction or record type is not the one expected on this path',
  DEPTH_MISMATCH: 'the depth field does not equal the receipt position on the path',
  PARENT_MISSING: 'the receipt names a parent that was not supplied',
  PARENT_DIGEST_MISMATCH: 'the parent digest (or Merkle ancestry root) does not match the supplied ancestors',
  UNKNOWN_KEY: "the signing key is not in the verifier's own key directory",
  WRONG_DEPLOYER: 'the signing key belongs to a different deployer than the receipt names',
  KEY_NOT_VALID_AT_ISSUE: "the receipt was issued outside the key's validity window",
  REVOKED_KEY: 'the signing key was revoked at or before the time that matters',
  BAD_SIGNATURE: "the releasing deployer's signature does not verify over the receipt bytes",
  COSIGNATURE_MISSING: 'a deployer the co-signer policy requires (at least the parent) did not sign the edge',
  COSIGNATURE_INVALID: 'a co-signature is present but does not verify over this edge',
  NOT_YET_VALID: 'the receipt is issued in the future, beyond the allowed clock skew',
  EXPIRED: 'the receipt validity window has ended',
  OUTPUT_MISMATCH:
    'the SHA-256 of the output bytes differs from the one recorded (in the receipt, or an archived trial)',
  LENGTH_MISMATCH:
    'the length of the output bytes differs from the one recorded (in the receipt, or an archived trial)',
  REPLAY: 'this receipt nonce was already accepted by a verifier sharing the nonce store',
} as const;

/** Hash-chained logs of signed records (the mailbox call log and what its lines vouch for). */
export const LOG_CODES = {
  FORGED:
    'a record whose signature does not verify but which the chain accepts (written without the key), or a second copy of a genuine record',
  MODIFIED: 'a record changed after it was signed, or stored data that differs from the digest a record signed',
  REORDERED: 'records out of sequence',
  DELETED:
    'a record missing: a gap in the sequence with the record nowhere, or data a signed record vouches for that is not there',
  CORRUPT:
    'a line that is not a record (unparseable, a repeated key, too long), an unterminated last line, or an evidence file that is not a regular file',
  ORPHAN: 'stored data that no verified record vouches for',
  SKIPPED: 'data a read cursor was moved past that no signed read delivered',
  WRONG_KEY: "the key given to check the log is not the log's own key (its key id differs from the one the log names)",
  TRUNCATED: 'the log holds fewer entries than a checkpoint signed for it: its end was cut off or it was rolled back',
  INCONSISTENT:
    "the log's first entries do not have the root a checkpoint signed for their count: one was changed, removed, inserted or reordered, or the log forked",
  NOT_WITNESSED:
    'no checkpoint of the log cosigned by a witness the verifier requires was found (in the file given, at the witness, or kept with the log): nothing shows the log was not cut or rolled back',
  WITNESS_STALE:
    'the newest checkpoint a required witness cosigned is older than the verifier allows (--witnessed-within): entries since then are not witnessed',
} as const;

/** Archives that carry their own outputs and evidence (E12 results files). */
export const ARCHIVE_CODES = {
  TASK_ID_REPEATED: 'two trials share a task id',
  EVIDENCE_INVALID: "a trial's evidence does not verify (the verifier's reason codes follow)",
  VERDICT_NOT_REPRODUCED: 'the recorded verdict differs from the re-verification',
  SUMMARY_MISMATCH: "a summary row's `n` or `verified` is not the trials' own count",
  FORGERY_NOT_REPRODUCED:
    'the forgery is not accepted under chain and rejected (`COSIGNATURE_MISSING`) under dag, or not as recorded',
  CARD_INVALID: "the child's Agent Card does not verify",
  INCOMPLETE:
    'the run was interrupted before its last trial: the trials it holds are checked, but it is not the complete experiment',
} as const;

/** A delegation's answer as a parent receives it (an A2A Message, or a Task and its artifacts). */
export const DELEGATION_CODES = {
  EVIDENCE_MISSING:
    'a result carries no evidence (a message, or an artifact of a completed task), or a completed task has no artifact',
  ROOT_MISMATCH: 'the evidence path does not start at the task receipt the parent signed for this delegation',
  CHILD_MISMATCH: 'the result was released by another deployer than the child whose Agent Card the parent verified',
  TASK_FAILED:
    "the child's task ended without a result (failed, canceled, rejected), is waiting for input, or had not finished; the child's reason follows",
} as const;

/** Streamed results: each chunk's receipt against the stream's signed whole (attest/stream). */
export const STREAM_CODES = {
  CHUNK_MISSING: 'a chunk of the stream was not received: its sequence number is absent (dropped)',
  CHUNK_REORDERED: 'a chunk was received out of its sequence order: the client was shown it in another place',
  CHUNK_REPEATED: 'the same chunk was received more than once',
  CHUNK_FOREIGN:
    "a chunk that is not this stream's: its receipt names another session, task or artifact, lies beyond the stream's signed size, or is not the receipt the stream's signed chain holds at its sequence number",
  CHUNK_MISMATCH: "a chunk's bytes do not match the SHA-256 or length its receipt records",
  STREAM_CUT: 'the stream ended before its final receipt: nothing signed covers the whole',
  STREAM_MISMATCH:
    "the final receipt's statement or a checkpoint is not this stream's, or does not describe the chunks received",
  POLICY_MISMATCH:
    'a chunk promises another granularity policy than its stream, or the stream promised another policy than the verifier requires',
} as const;

/** Every code, with its meaning: the one vocabulary. */
export const EVIDENCE_CODES = {
  ...REASON_CODES,
  ...LOG_CODES,
  ...ARCHIVE_CODES,
  ...DELEGATION_CODES,
  ...STREAM_CODES,
} as const;
export type EvidenceCode = keyof typeof EVIDENCE_CODES;
export type ReasonCode = keyof typeof REASON_CODES;
export type LogCode = keyof typeof LOG_CODES;
export type StreamCode = keyof typeof STREAM_CODES;

/** The part of the vocabulary one verifier reports, with the same meanings. */
export function codesFor<const C extends EvidenceCode>(
  codes: readonly C[],
): { readonly [K in C]: (typeof EVIDENCE_CODES)[K] } {
  return Object.fromEntries(codes.map((c) => [c, EVIDENCE_CODES[c]])) as { [K in C]: (typeof EVIDENCE_CODES)[K] };
}

/** A receipt's or path's problem; `at` is "receipt N" exactly when `index` is given. */
export interface Reason extends Problem<ReasonCode> {
  /** Position on the path (0 = root) of the receipt concerned, when there is one. */
  index?: number;
}

export function reason(code: ReasonCode, message: string, index?: number): Reason {
  return index === undefined ? { code, message } : { code, message, at: `receipt ${index}`, index };
}
