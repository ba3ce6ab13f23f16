/**
 * @module
 * The signing side of a stream, at the release boundary: the runtime passes each chunk
 * through `chunk(bytes)` just before it is sent, and gets the chunk's receipt (and, when
 * one is due, a signed checkpoint) to send with it; at the end, `finish()` releases the
 * statement that binds the whole stream through the one release signer (signer.ts), so
 * the final receipt is an ordinary receipt: same key, nonce, validity and delegation
 * ancestry as any other. Checkpoints are C2SP notes signed with the same key through
 * tlog's note signer — the way mailbox and simulation logs sign theirs.
 */
import { WitnessError } from '../../core/errors.js';
import { RunningSha256, sha256Hex } from '../../core/hash.js';
import { leafHash, MerkleFrontier } from '../../core/tlog/merkle.js';
import { evidenceOf } from '../evidence.js';
import { type ReleaseContext, type ReleaseSignerOptions, createReleaseSigner } from '../signer.js';
import { checkpointFor } from '../tlog/checkpoint.js';
import { noteSigner } from '../tlog/note.js';
import {
  CHUNK_RECEIPT_TYPE,
  type ChunkReceipt,
  chunkReceiptDigest,
  type FinalStatement,
  finalStatementBytes,
  STREAM_FINAL_TYPE,
  type StreamCheckpoint,
  type StreamFinal,
  type StreamPolicy,
  StreamPolicySchema,
  type StreamRef,
  StreamRefSchema,
  streamOrigin,
} from './format.js';

/** Checkpoint at least this often by default: every 64 chunks, or the first chunk a second after the last checkpoint. */
export const DEFAULT_CHECKPOINT_EVERY = { chunks: 64, ms: 1000 } as const;

export interface StreamSignerOptions extends ReleaseSignerOptions {
  stream: StreamRef;
  policy: StreamPolicy;
  /** A checkpoint is signed with the chunk that reaches either bound (default DEFAULT_CHECKPOINT_EVERY). */
  checkpointEvery?: { chunks?: number; ms?: number };
}

/** A chunk's receipt, to send with the chunk; and a checkpoint when one fell due with it. */
export interface SignedChunk {
  receipt: ChunkReceipt;
  checkpoint?: StreamCheckpoint;
}

export interface StreamSigner {
  /** The checkpoints' origin, `agent-witness.dev/stream/<session>/<task>/<artifact>`. */
  readonly origin: string;
  /** Chunks so far. */
  readonly size: number;
  /** The receipt of the next chunk; call it just before the chunk is sent. */
  chunk(bytes: Uint8Array): SignedChunk;
  /** A checkpoint of every chunk so far, now (a runtime's timer may call it while a stream is idle). */
  checkpoint(): StreamCheckpoint;
  /** Ends the stream: the final statement and its release evidence (the path when `context.ancestors` is given). */
  finish(context?: ReleaseContext): Promise<StreamFinal>;
}

/**
 * A stream signer: the key stays in the closures of the release and note signers it makes.
 * @example
 * const s = createStreamSigner({ key, instance: 'writer-1', stream: { session, task, artifact }, policy: 'tokens:16' });
 * for (const piece of pieces) send(piece, s.chunk(piece));
 * send(await s.finish());
 */
export function createStreamSigner(options: StreamSignerOptions): StreamSigner {
  const stream = _checked(options);
  const release = createReleaseSigner(options);
  const origin = streamOrigin(stream);
  const notes = noteSigner(options.key, origin);
  const clock = options.clock ?? Date.now;
  const everyChunks = options.checkpointEvery?.chunks ?? DEFAULT_CHECKPOINT_EVERY.chunks;
  const everyMs = options.checkpointEvery?.ms ?? DEFAULT_CHECKPOINT_EVERY.ms;
  _checkBound('chunks', everyChunks);
  _checkBound('ms', everyMs);
  const tree = new MerkleFrontier();
  const whole = new RunningSha256();
  let head: Buffer | null = null;
  let sinceCheckpoint = 0;
  let lastCheckpointAt = clock();
  let finished = false;
  const checkpoint = (): StreamCheckpoint => {
    sinceCheckpoint = 0;
    lastCheckpointAt = clock();
    return { key_id: options.key.kid, note: checkpointFor(origin, tree.size, tree.root(), notes) };
  };
  return Object.freeze({
    origin,
    get size() {
      return tree.size;
    },
    chunk(bytes: Uint8Array): SignedChunk {
      if (finished) throw new WitnessError('USAGE', `The stream ${origin} is finished; start another for more chunks.`);
      const receipt: ChunkReceipt = {
        v: 1,
        type: CHUNK_RECEIPT_TYPE,
        ...stream,
        seq: tree.size,
        prev: head === null ? null : head.toString('hex'),
        chunk_sha256: sha256Hex(bytes),
        chunk_len: bytes.length,
        policy: options.policy,
      };
      head = chunkReceiptDigest(receipt);
      tree.appendLeafHash(leafHash(head));
      whole.update(bytes);
      sinceCheckpoint++;
      const due = sinceCheckpoint >= everyChunks || clock() - lastCheckpointAt >= everyMs;
      return due ? { receipt, checkpoint: checkpoint() } : { receipt };
    },
    checkpoint,
    async finish(context: ReleaseContext = {}): Promise<StreamFinal> {
      if (finished) throw new WitnessError('USAGE', `The stream ${origin} is already finished.`);
      finished = true;
      const digest = whole.digest();
      const statement: FinalStatement = {
        v: 1,
        type: STREAM_FINAL_TYPE,
        ...stream,
        policy: options.policy,
        size: tree.size,
        root: tree.root().toString('hex'),
        head: head === null ? null : head.toString('hex'),
        len: digest.bytes,
        sha256: digest.sha256,
      };
      const receipt = await release.releaseOutput(finalStatementBytes(statement), context);
      return { statement, evidence: evidenceOf([...(context.ancestors ?? []), receipt]) };
    },
  });
}

function _checked(options: StreamSignerOptions): StreamRef {
  const ref = StreamRefSchema.safeParse(options.stream);
  if (!ref.success) {
    const issue = ref.error.issues[0];
    throw new WitnessError('USAGE', `Cannot sign a stream: stream.${issue?.path.join('.')}: ${issue?.message}.`);
  }
  if (!StreamPolicySchema.safeParse(options.policy).success)
    throw new WitnessError(
      'USAGE',
      `Cannot sign a stream: the policy ${JSON.stringify(options.policy)} is none of chunk, tokens:N, tool-call or turn.`,
    );
  return { session: ref.data.session, task: ref.data.task, artifact: ref.data.artifact };
}

function _checkBound(name: string, value: number): void {
  if (!(Number.isSafeInteger(value) && value >= 1))
    throw new WitnessError('USAGE', `checkpointEvery.${name} must be a whole number of at least 1; got ${value}.`);
}
