/**
 * @module
 * The child's streamed release (docs/a2a.md §5): when a client asked for a stream
 * (SendStreamingMessage), the answer goes out as `TaskArtifactUpdateEvent`s of one
 * artifact — the first `append: false`, the rest appended, the last `lastChunk: true` —
 * each carrying its chunk receipt (stream.ts, `chunkMetadata`), a checkpoint signed
 * with the runtime's key at least every N chunks or T ms, and on the last chunk the
 * stream's final receipt. The last chunk also carries the artifact's own evidence
 * (EVIDENCE_KEY over `artifactBytes` of every part, artifact.ts), so the completed task
 * verifies as any other. Both receipts come from the runtime's one release signer (the
 * stream signer's final receipt is a release receipt); the backend never sees the key.
 *
 * The chunks go out as they are cut; the two receipts are made before the last chunk is
 * sent. Under dag both are edges the parent's co-signer must sign (a streamed answer
 * needs a grant of two edges, cosigner.ts): a refusal or a timeout throws, the last
 * chunk never goes out, and the stream ends without its final receipt (fail closed:
 * the parent's check says STREAM_CUT and the task FAILED).
 */
import { randomUUID } from 'node:crypto';
import { type Artifact, type Part, Part as PartJson } from '@a2a-js/sdk';
import { createStreamSigner, DEFAULT_CHECKPOINT_EVERY, type StreamPolicy } from '../attest/stream/index.js';
import { WitnessError } from '../core/errors.js';
import type { TaskRef } from './artifact.js';
import { EVIDENCE_KEY, type ChildTimings } from './metadata.js';
import {
  type Answered,
  answerArtifact,
  childTimings,
  type ReleaseSetup,
  releaseSigner,
  textPart,
  wireArtifactBytes,
} from './release.js';
import { chunkBytes, chunkMetadata } from './stream.js';

/** How a streamed answer is cut and checkpointed (`witness a2a serve --stream-policy`, `--checkpoint-every`, `--checkpoint-ms`). */
export interface StreamReleaseOptions {
  /** `chunk` (one line of the answer per chunk), `tokens:N` (N words per chunk) or `turn` (the whole answer in one). */
  policy: StreamPolicy;
  /** A checkpoint is signed with the chunk that reaches either bound. */
  checkpointEvery: { chunks: number; ms: number };
}

export const DEFAULT_STREAM_RELEASE: StreamReleaseOptions = {
  policy: 'chunk',
  checkpointEvery: { ...DEFAULT_CHECKPOINT_EVERY },
};

/** The policies a child can keep when it cuts its answer: it makes no tool call per chunk, so not `tool-call`. */
export const STREAM_RELEASE_POLICIES = ['chunk', 'tokens:N', 'turn'] as const;

/** One chunk event's artifact and where it stands in the stream. */
export type PublishChunk = (artifact: Artifact, chunk: { append: boolean; lastChunk: boolean }) => void;

/**
 * Streams the answer of `ids` as chunk events through `publish`, then releases the
 * stream's final receipt and the artifact's evidence with the last chunk. Returns the
 * child's timings.
 */
export async function streamAnswer(
  setup: ReleaseSetup,
  ids: TaskRef,
  answered: Answered,
  publish: PublishChunk,
): Promise<ChildTimings> {
  const options = setup.stream ?? DEFAULT_STREAM_RELEASE;
  const artifactId = randomUUID();
  const release = releaseSigner(setup, answered);
  const signer = createStreamSigner({
    ...release.options,
    stream: { session: ids.contextId, task: ids.taskId, artifact: artifactId },
    policy: options.policy,
    checkpointEvery: options.checkpointEvery,
  });
  const pieces = cutAnswer(answered.output, options.policy);
  const parts: Part[] = [];
  const context = { ancestors: answered.ancestors, construction: answered.construction };
  for (const [i, piece] of pieces.entries()) {
    const part = textPart(piece);
    parts.push(part);
    const signed = signer.chunk(chunkBytes([PartJson.toJSON(part)]));
    const last = i === pieces.length - 1;
    const chunk = answerArtifact(artifactId, [part]);
    if (last) {
      // The whole artifact's receipt first: it is what GetTask and a non-streaming parent check.
      const receipt = await release.signer.releaseOutput(
        wireArtifactBytes(ids, answerArtifact(artifactId, parts)),
        context,
      );
      const final = await signer.finish(context);
      chunk.metadata = { ...chunkMetadata(signed, final), [EVIDENCE_KEY]: { path: [...answered.ancestors, receipt] } };
    } else chunk.metadata = chunkMetadata(signed);
    publish(chunk, { append: i > 0, lastChunk: last });
  }
  return childTimings(answered, release.cosignMs());
}

/**
 * The answer cut as `policy` says, never empty (an empty answer is one empty chunk):
 * `chunk` one line each (with its newline), `tokens:N` N words each (a word with the
 * whitespace after it — the runtime cuts the text it releases and does not see the
 * model's tokens), `turn` the whole answer in one. Joined, the pieces are the answer.
 */
export function cutAnswer(text: string, policy: StreamPolicy): string[] {
  if (policy === 'turn' || text === '') return [text];
  if (policy === 'chunk') return text.match(/[^\n]*\n|[^\n]+$/g) ?? [text];
  const n = /^tokens:(\d+)$/.exec(policy)?.[1];
  if (n === undefined)
    throw new WitnessError('USAGE', `A child cuts its answer by chunk, tokens:N or turn, not ${policy}.`);
  const words = text.match(/\s+|\S+\s*/g) ?? [text];
  const size = Number(n);
  const out: string[] = [];
  for (let i = 0; i < words.length; i += size) out.push(words.slice(i, i + size).join(''));
  return out;
}
