// A real signed stream for the stream tests: a fresh Ed25519 key, the real stream signer,
// the real recorder, a directory that trusts the key, and a fixed clock.
import { createStreamSigner, type StreamPolicy, type StreamRef, StreamRecorder } from '../../src/attest/index.js';
import type { SigningKey } from '../../src/attest/keys.js';
import type { Receipt } from '../../src/attest/receipt.js';
import { NOW } from './helpers.js';

export const STREAM: StreamRef = { session: 'ctx-7f3a', task: 'task-42', artifact: 'report' };

export interface StreamOptions {
  stream?: StreamRef;
  policy?: StreamPolicy;
  checkpointEvery?: number;
  ancestors?: Receipt[];
  /** The bytes of chunk i (default: a short line naming it). */
  chunk?: (i: number) => Buffer;
}

/** The recorded lines (parsed values, header first) of an honest stream of `n` chunks, every event in order. */
export async function recordedStream(key: SigningKey, n: number, options: StreamOptions = {}): Promise<unknown[]> {
  const stream = options.stream ?? STREAM;
  const signer = createStreamSigner({
    key,
    instance: 'writer-1',
    stream,
    policy: options.policy ?? 'tokens:8',
    checkpointEvery: { chunks: options.checkpointEvery ?? 64, ms: 60_000 },
    clock: () => NOW,
  });
  const recorder = new StreamRecorder(stream);
  for (let i = 0; i < n; i++) {
    const bytes = options.chunk?.(i) ?? Buffer.from(`chunk ${i} of ${stream.task}: ${'x'.repeat(i % 7)}\n`);
    const signed = signer.chunk(bytes);
    recorder.chunk(bytes, signed.receipt, signed.checkpoint);
  }
  recorder.final(await signer.finish(options.ancestors ? { ancestors: options.ancestors } : {}));
  return recorder.lines.map((l) => JSON.parse(l) as unknown);
}

type Line = { type: string; receipt?: { seq: number }; bytes?: string };

/** The index (in `lines`) of chunk `seq`'s line. */
export function lineOfChunk(lines: readonly unknown[], seq: number): number {
  const at = lines.findIndex((l) => (l as Line).type === 'chunk' && (l as Line).receipt?.seq === seq);
  if (at < 0) throw new Error(`no chunk ${seq} in the recording`);
  return at;
}

/** The recording as JSON Lines text. */
export function text(lines: readonly unknown[]): string {
  return lines.map((l) => `${JSON.stringify(l)}\n`).join('');
}
