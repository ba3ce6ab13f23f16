/**
 * @module
 * Domain-separation tags: one per kind of record Witness signs (docs/attest.md §6).
 * Every signature covers the record kind's tag followed by the RFC 8785 text of the
 * record without its signatures, so a signature over one kind of record never
 * verifies as another — not even under the same key (a deployer's key may sign both
 * release receipts and its mailbox's call log). Each tag ends in NUL, which no tag
 * holds elsewhere, so no tag is a prefix of another or of a canonical JSON text.
 */
import { canonicalize } from '../core/canonical-json.js';

export const DOMAIN_TAGS = Object.freeze({
  /** A release receipt (`type: "output"`): a deployer released these output bytes. */
  releaseReceipt: 'witness/receipt/v1\0',
  /** A dag delegation edge (`type: "edge"`): signed by the child and co-signed by the parent. */
  delegationEdge: 'witness/edge/v1\0',
  /** A mailbox call-log line (format v2; v1 lines were signed untagged). */
  callLogLine: 'witness/call/v1\0',
  /** A JSONL mailbox writer's intent in its lock file: what recovery may cut if the writer dies. */
  mailboxIntent: 'witness/mailbox-intent/v1\0',
  /** A simulation results line (`witness sim --sign`). */
  simulationRecord: 'witness/sim-record/v1\0',
  /** A signed checkpoint of a simulation results file (count and root). */
  resultsCheckpoint: 'witness/sim-checkpoint/v1\0',
} as const);

/** The kinds of signed record, each with its own tag. */
export type RecordKind = keyof typeof DOMAIN_TAGS;
export type DomainTag = (typeof DOMAIN_TAGS)[RecordKind];

/**
 * The exact bytes a signature over `record` of this kind covers: the kind's tag, then
 * RFC 8785 of the record. Pass the record without its signature member(s).
 * @example signedMessage('simulationRecord', { v: 1, seq: 1, run: 'ab12…', prev: '00…' })
 */
export function signedMessage(kind: RecordKind, record: unknown): Buffer {
  return taggedBytes(DOMAIN_TAGS[kind], canonicalize(record));
}

/** Tag + an already canonical text, as UTF-8 bytes (for callers that produced the RFC 8785 text themselves). */
export function taggedBytes(tag: DomainTag, canonicalText: string): Buffer {
  return Buffer.from(tag + canonicalText, 'utf8');
}
