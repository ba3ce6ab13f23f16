/**
 * @module
 * The formats of a streamed result (docs/attest.md §10): the small receipt each chunk
 * carries, the statement the final release receipt signs, and the lines of a recorded
 * stream. A final receipt over "the output" says nothing about what a client was shown
 * on the way; these bind every chunk, in its place, to one signed whole.
 *
 * A chunk receipt is unsigned (a signature per chunk would cost more than most chunks
 * take to produce): it names its stream (session, task, artifact), its sequence number,
 * the digest of the chunk receipt before it (a hash chain), the SHA-256 and length of
 * its bytes, and the granularity policy the stream promised. Its digest — SHA-256 of its
 * RFC 8785 form — is the leaf data of the stream's RFC 6962 tree, whose heads are signed
 * as C2SP checkpoints along the way and, with the last digest, by the final receipt.
 */
import { z } from 'zod';
import { canonicalBytes } from '../../core/canonical-json.js';
import { sha256 } from '../../core/hash.js';
import { Ed25519KeyIdSchema, Sha256HexSchema } from '../formats.js';

/** The `type` of a chunk receipt. */
export const CHUNK_RECEIPT_TYPE = 'witness/stream-chunk';
/** The `type` of the statement a stream's final release receipt signs (its output bytes). */
export const STREAM_FINAL_TYPE = 'witness/stream-final';
/** The `type` a recorded stream declares on its first line (what `witness verify` recognises). */
export const RECORDED_STREAM_TYPE = 'witness/stream';
/** Prefix of a stream's checkpoint origin: `<prefix>/<session>/<task>/<artifact>`. */
export const STREAM_ORIGIN_PREFIX = 'agent-witness.dev/stream';

const HEX64 = Sha256HexSchema;
// No "/" (the origin joins the ids with it, so each must stay one segment), no space or "+" (note key names).
const ID = z.string().regex(/^[A-Za-z0-9._:-]{1,128}$/, 'expected 1–128 letters, digits or ._:- (a UUID, say)');
const COUNT = z.int().nonnegative().max(Number.MAX_SAFE_INTEGER);

/**
 * What a stream promised about its chunks: `chunk` (whatever the producer emits),
 * `tokens:N` (N model tokens each), `tool-call` (one per tool call), `turn` (one per
 * turn). The verifier reports it and can require one; it cannot count tokens.
 */
export const StreamPolicySchema = z
  .string()
  .regex(/^(chunk|tool-call|turn|tokens:[1-9][0-9]{0,8})$/, 'expected chunk, tokens:N, tool-call or turn');
export type StreamPolicy = z.infer<typeof StreamPolicySchema>;

/** Which stream: the A2A context (session), task and artifact it delivers. */
export const StreamRefSchema = z.strictObject({ session: ID, task: ID, artifact: ID });
export type StreamRef = z.infer<typeof StreamRefSchema>;

export const ChunkReceiptSchema = z
  .strictObject({
    v: z.literal(1),
    type: z.literal(CHUNK_RECEIPT_TYPE),
    session: ID.describe('the session (A2A context id) of the stream'),
    task: ID.describe('the task the stream delivers'),
    artifact: ID.describe('the artifact the stream delivers'),
    seq: COUNT.describe('position of the chunk in the stream, 0-based'),
    prev: HEX64.nullable().describe(
      'digest of the previous chunk receipt (SHA-256 of its RFC 8785 form); null for chunk 0',
    ),
    chunk_sha256: HEX64.describe('SHA-256 of the chunk bytes'),
    chunk_len: COUNT.describe('length of the chunk in bytes'),
    policy: StreamPolicySchema.describe('the granularity the stream promised: chunk, tokens:N, tool-call or turn'),
  })
  .refine((r) => (r.seq === 0) === (r.prev === null), {
    message: 'prev is null exactly for chunk 0',
    path: ['prev'],
  });
export type ChunkReceipt = z.infer<typeof ChunkReceiptSchema>;

export const FinalStatementSchema = z.strictObject({
  v: z.literal(1),
  type: z.literal(STREAM_FINAL_TYPE),
  session: ID,
  task: ID,
  artifact: ID,
  policy: StreamPolicySchema,
  size: COUNT.describe('chunks in the stream'),
  root: HEX64.describe('RFC 6962 root of the tree whose leaf data are the chunk receipt digests, in order'),
  head: HEX64.nullable().describe('digest of the last chunk receipt; null for an empty stream'),
  len: COUNT.describe('bytes in the whole stream'),
  sha256: HEX64.describe('SHA-256 of every chunk’s bytes, concatenated in order'),
});
export type FinalStatement = z.infer<typeof FinalStatementSchema>;

export const KEY_ID = Ed25519KeyIdSchema;

/** A signed checkpoint made mid-stream: a C2SP note, and which key of the verifier's directory signed it. */
export const StreamCheckpointSchema = z.strictObject({
  key_id: KEY_ID.describe('the Witness key that signed the note (the releasing runtime’s)'),
  note: z.string().min(1).max(65_536).describe('a C2SP signed-note checkpoint: origin, size, base64 root, signature'),
});
export type StreamCheckpoint = z.infer<typeof StreamCheckpointSchema>;

/** The end of a stream: the statement and the release evidence (one receipt, or a delegation path) that signs it. */
export const StreamFinalSchema = z.strictObject({
  statement: FinalStatementSchema,
  evidence: z.unknown().describe('a release receipt whose output is the statement’s RFC 8785 bytes, or a witness/path'),
});
export type StreamFinal = { statement: FinalStatement; evidence: unknown };

/** The origin (log name) of a stream's checkpoints. */
export function streamOrigin(ref: StreamRef): string {
  return `${STREAM_ORIGIN_PREFIX}/${ref.session}/${ref.task}/${ref.artifact}`;
}

/** SHA-256 of the chunk receipt's RFC 8785 form: what the next receipt's `prev` names, and its tree leaf's data. */
export function chunkReceiptDigest(receipt: ChunkReceipt): Buffer {
  return sha256(canonicalBytes(receipt));
}

/** The bytes the final release receipt signs: the RFC 8785 form of the statement. */
export function finalStatementBytes(statement: FinalStatement): Buffer {
  return canonicalBytes(statement);
}

/** Same stream? (ids only; the policy is compared separately, with its own code.) */
export function sameStream(a: StreamRef, b: StreamRef): boolean {
  return a.session === b.session && a.task === b.task && a.artifact === b.artifact;
}

/** "task t of session s, artifact a", for messages. */
export function describeStream(ref: StreamRef): string {
  return `artifact ${ref.artifact} of task ${ref.task} in session ${ref.session}`;
}
