/**
 * @module
 * Streamed results with chunk receipts (docs/attest.md §10). A final receipt over "the
 * output" says nothing about what a client was shown on the way; here every chunk
 * carries a small unsigned receipt (its stream, sequence number, the previous receipt's
 * digest, its bytes' SHA-256 and length, the promised granularity), the receipts are
 * leaves of an RFC 6962 tree whose heads are signed as C2SP checkpoints along the way,
 * and the final release receipt signs the tree's root and size. Independent of A2A's
 * wire types (`agent-witness/a2a` maps them onto artifact-update events).
 *
 * ```ts
 * // The runtime, at the release boundary:
 * const signer = createStreamSigner({ key, instance, stream: { session, task, artifact }, policy: 'tokens:16' });
 * const { receipt, checkpoint } = signer.chunk(bytes); // send with the chunk
 * const final = await signer.finish({ ancestors });     // send at the end
 * // The client, as events arrive:
 * const recorder = recordStreamToFile('stream.jsonl', { session, task, artifact });
 * recorder.chunk(bytes, receipt, checkpoint); recorder.final(final); recorder.close();
 * // Anyone, later, with their own key directory:
 * const r = await verifyStream(readFileSync('stream.jsonl'), { directory }); // r.verdict, r.bytes, r.problems
 * ```
 */
export {
  CHUNK_RECEIPT_TYPE,
  ChunkReceiptSchema,
  chunkReceiptDigest,
  FinalStatementSchema,
  finalStatementBytes,
  RECORDED_STREAM_TYPE,
  STREAM_FINAL_TYPE,
  STREAM_ORIGIN_PREFIX,
  StreamCheckpointSchema,
  StreamFinalSchema,
  StreamPolicySchema,
  StreamRefSchema,
  streamOrigin,
} from './format.js';
export type {
  ChunkReceipt,
  FinalStatement,
  StreamCheckpoint,
  StreamFinal,
  StreamPolicy,
  StreamRef,
} from './format.js';
export { MAX_STREAM_PROBLEMS_PER_CODE } from './problems.js';
export type { StreamProblem, StreamProblemCode } from './problems.js';
export {
  readRecording,
  RecordedLineSchema,
  RecordingHeaderSchema,
  recordStreamToFile,
  StreamRecorder,
} from './record.js';
export type { ReadRecording, RecordedEvent, RecordingHeader } from './record.js';
export { createStreamSigner, DEFAULT_CHECKPOINT_EVERY } from './signer.js';
export type { SignedChunk, StreamSigner, StreamSignerOptions } from './signer.js';
export { verifyStream } from './verify.js';
export type { StreamVerifyOptions, StreamVerifyResult } from './verify.js';
