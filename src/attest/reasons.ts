/**
 * @module
 * The one vocabulary of reason codes (attest.md §3, §8): every code any Witness
 * verifier reports, with what it means. Verifiers return lists of these, never a bare
 * boolean, so a caller can tell a flipped byte from a revoked key from a dropped log
 * line. Each verifier uses its part of the table: receipts and delegation paths
 * (`REASON_CODES`), hash-chained signed logs such as the mailbox's call log
 * (`LOG_CODES`), archives that carry their own evidence such as E12 results files
 * (`ARCHIVE_CODES`), A2A tasks whose artifacts carry receipts (`TASK_CODES`). A new
 * kind of evidence adds its codes here, once.
 */

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

/** A2A task results: the artifacts a completed task carries, each with its own receipt path (docs/a2a.md). */
export const TASK_CODES = {
  TASK_NOT_COMPLETED: 'the A2A task is not in TASK_STATE_COMPLETED: nothing it carries is a released result',
  ARTIFACT_MISSING: 'the completed A2A task carries no artifact: there is no released output to check',
  ARTIFACT_UNATTESTED: 'an artifact of the task carries no evidence (`agent-witness.dev/evidence` in its metadata)',
} as const;

/** Every code, with its meaning: the one vocabulary. */
export const EVIDENCE_CODES = { ...REASON_CODES, ...LOG_CODES, ...ARCHIVE_CODES, ...TASK_CODES } as const;
export type EvidenceCode = keyof typeof EVIDENCE_CODES;
export type ReasonCode = keyof typeof REASON_CODES;
export type LogCode = keyof typeof LOG_CODES;
export type TaskCode = keyof typeof TASK_CODES;

/** The part of the vocabulary one verifier reports, with the same meanings. */
export function codesFor<const C extends EvidenceCode>(
  codes: readonly C[],
): { readonly [K in C]: (typeof EVIDENCE_CODES)[K] } {
  return Object.fromEntries(codes.map((c) => [c, EVIDENCE_CODES[c]])) as { [K in C]: (typeof EVIDENCE_CODES)[K] };
}

export interface Reason {
  code: ReasonCode;
  /** What exactly was wrong, in words a user can act on. */
  message: string;
  /** Position on the path (0 = root) of the receipt concerned, when there is one. */
  index?: number;
}

export function reason(code: ReasonCode, message: string, index?: number): Reason {
  return index === undefined ? { code, message } : { code, message, index };
}
