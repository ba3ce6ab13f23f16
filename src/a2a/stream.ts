/**
 * @module
 * Streamed results over A2A (docs/a2a.md, "Streamed results"): the pure mapping between
 * attest's chunk receipts (attest/stream) and `TaskArtifactUpdateEvent`s, in their
 * A2A v1.0 wire JSON. Each event is one chunk: its stream is the event's context
 * (session), task and artifact; its bytes are one line — the RFC 8785 text of the
 * event's parts, every part with its own metadata, and a newline — so the reassembled
 * stream is JSON Lines, one parts array per chunk. The chunk's receipt, a checkpoint
 * signed with it and, on the last chunk, the final statement with its evidence ride in
 * the artifact's metadata, which the chunk bytes do not cover.
 */
import { canonicalize } from '../core/canonical-json.js';
import { WitnessError } from '../core/errors.js';
import type { SignedChunk, StreamFinal, StreamRecorder, StreamRef } from '../attest/index.js';

/** On an artifact-update event's artifact metadata: the chunk's receipt. */
export const CHUNK_KEY = 'agent-witness.dev/chunk';
/** Beside it when one fell due with this chunk: a checkpoint `{key_id, note}` of the stream so far. */
export const STREAM_CHECKPOINT_KEY = 'agent-witness.dev/stream-checkpoint';
/** On the last chunk's event (`lastChunk: true`): `{statement, evidence}`, the final release receipt over the whole. */
export const STREAM_FINAL_KEY = 'agent-witness.dev/stream-final';

/** A `TaskArtifactUpdateEvent` as A2A v1.0 JSON on the wire (what this mapping reads; the rest is left alone). */
export interface ArtifactUpdateJson {
  taskId: string;
  contextId: string;
  artifact?: { artifactId: string; parts: unknown[]; metadata?: Record<string, unknown> };
}

/** What one event brings a recorder: its stream, its chunk bytes, and the witness entries as they arrived. */
export interface ReadArtifactUpdate {
  stream: StreamRef;
  bytes: Buffer;
  receipt: unknown;
  checkpoint?: unknown;
  final?: unknown;
}

/** The stream an event belongs to: its context is the session. */
export function streamOfEvent(event: ArtifactUpdateJson): StreamRef {
  return { session: event.contextId, task: event.taskId, artifact: _artifact(event).artifactId };
}

/** The bytes a chunk receipt covers: the RFC 8785 text of the event's parts (wire JSON) and a newline. */
export function chunkBytes(parts: readonly unknown[]): Buffer {
  return Buffer.from(`${canonicalize(parts)}\n`, 'utf8');
}

/** The entries to merge into the event's artifact metadata: the receipt, a checkpoint that fell due, the final. */
export function chunkMetadata(signed: SignedChunk, final?: StreamFinal): Record<string, unknown> {
  return {
    [CHUNK_KEY]: signed.receipt,
    ...(signed.checkpoint ? { [STREAM_CHECKPOINT_KEY]: signed.checkpoint } : {}),
    ...(final ? { [STREAM_FINAL_KEY]: final } : {}),
  };
}

/** Reads an event for a recorder; the entries are taken as they are (the verifier judges them). */
export function readArtifactUpdate(event: ArtifactUpdateJson): ReadArtifactUpdate {
  const artifact = _artifact(event);
  const metadata = artifact.metadata ?? {};
  return {
    stream: streamOfEvent(event),
    bytes: chunkBytes(artifact.parts),
    receipt: metadata[CHUNK_KEY],
    ...(STREAM_CHECKPOINT_KEY in metadata ? { checkpoint: metadata[STREAM_CHECKPOINT_KEY] } : {}),
    ...(STREAM_FINAL_KEY in metadata ? { final: metadata[STREAM_FINAL_KEY] } : {}),
  };
}

/** Records one event: its chunk, then its checkpoint and final, if it carries them. */
export function recordArtifactUpdate(recorder: StreamRecorder, event: ArtifactUpdateJson): void {
  const read = readArtifactUpdate(event);
  recorder.chunk(read.bytes, read.receipt, read.checkpoint);
  if (read.final !== undefined) recorder.final(read.final);
}

/** Each chunk's parts, from reassembled stream bytes (one JSON line per chunk). */
export function streamedParts(bytes: Uint8Array): unknown[][] {
  const text = Buffer.from(bytes).toString('utf8');
  return text === ''
    ? []
    : (text
        .slice(0, -1)
        .split('\n')
        .map((line) => JSON.parse(line)) as unknown[][]);
}

/** The output a user reads: the text parts of every chunk, concatenated in order. */
export function streamedText(bytes: Uint8Array): string {
  return streamedParts(bytes)
    .flat()
    .map((part) => (part !== null && typeof part === 'object' && 'text' in part ? String(part.text) : ''))
    .join('');
}

function _artifact(event: ArtifactUpdateJson): NonNullable<ArtifactUpdateJson['artifact']> {
  const artifact = event.artifact;
  if (!artifact || typeof artifact.artifactId !== 'string' || !Array.isArray(artifact.parts))
    throw new WitnessError(
      'INVALID_INPUT',
      'Not an artifact update: the event has no artifact with an artifactId and parts (A2A v1.0 TaskArtifactUpdateEvent, as wire JSON).',
    );
  return artifact;
}
