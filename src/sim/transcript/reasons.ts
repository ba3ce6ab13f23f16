/**
 * @module
 * Why a signed results file does not verify. Each problem names a line (1-based) when
 * it concerns one, and has its own code, so an edited value, a dropped run and a
 * line from another plan read differently. Codes shared with receipts (attest's
 * `REASON_CODES`) keep attest's meaning.
 */
import type { Problem } from '../../core/problem.js';

export const RESULTS_REASON_CODES = {
  MALFORMED: 'a line or the checkpoint file is not valid JSON or misses or mistypes a field',
  NON_CANONICAL: 'duplicate keys, or a receipt that is not the last member in RFC 8785 form',
  UNSIGNED_LINE: 'a line carries no receipt',
  CONTENT_MISMATCH:
    "the line's content (the line without its receipt) does not hash to the receipt's content_sha256: a value was edited",
  RECEIPT_MISMATCH: "the receipt names another run, seq, seed, cell or prompt pack than the line's own fields",
  CHAIN_BROKEN:
    "the receipt's prev is not the digest of the previous line of its chain: a line was removed, inserted or moved before it, or the line before it was edited",
  NOT_IN_PLAN:
    "the run is not one of the plan's (another experiment, shard or seed), or its seq, cell, index or seed differ from the plan's",
  DUPLICATE_RUN: 'a run appears on more than one line',
  OUT_OF_ORDER: 'a run comes after a run that follows it in the plan',
  RUN_MISSING: 'a run of the plan has no line',
  NOT_COVERED:
    'the line is not covered by a signed checkpoint (a sweep killed before its next checkpoint and not resumed, or a line appended later)',
  CHECKPOINT_MISSING: 'the checkpoint file is missing, or no checkpoint covers the chain of a line',
  CHECKPOINT_MISMATCH: "the chain's length or head differs from what its signed checkpoint says",
  SHARD_MISSING:
    'the checkpoints declare a sharding and some of its shards are not in the file (one shard alone, or a merge of some); accepted only with --allow-partial',
  PLAN_MISMATCH:
    'the checkpoints disagree about the experiment or sharding, name a shard twice, or hold an experiment that does not load',
  TRUNCATED:
    'the file holds fewer lines of a chain than a kept checkpoint (--checkpoint KEPT) signed: lines were cut off its end, or the file was rolled back',
  INCONSISTENT:
    "a chain's first lines do not have the Merkle root a kept checkpoint signed for their count (changed, removed, inserted or reordered, or rewritten), or the kept checkpoint is of no chain of this file",
  UNKNOWN_KEY: "the signing key is not in the verifier's own key directory",
  WRONG_KEY: "a line names a key other than the one that signed its chain's checkpoint",
  WRONG_DEPLOYER: 'the signing key belongs to a different deployer than the checkpoint names',
  KEY_NOT_VALID_AT_ISSUE: "the signature was made outside the key's validity window",
  REVOKED_KEY: 'the signing key was revoked at or before the signature',
  BAD_SIGNATURE: 'a checkpoint or line signature does not verify',
  SIGNATURE_MISSING: 'the checkpoint says every line is signed, and this one is not',
  CASSETTE_MISMATCH:
    'the cassette given does not hash to what the checkpoint signed, or the checkpoint signs no cassette',
} as const;

export type ResultsReasonCode = keyof typeof RESULTS_REASON_CODES;

/** A results file's problem; `at` is "line N" exactly when `line` is given. */
export interface ResultsProblem extends Problem<ResultsReasonCode> {
  /** 1-based line of the results file; absent for a problem of the checkpoint file or the whole file. */
  line?: number;
}

export function problem(code: ResultsReasonCode, message: string, line?: number): ResultsProblem {
  return line === undefined ? { code, message } : { code, message, at: `line ${line}`, line };
}
