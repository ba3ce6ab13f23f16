/**
 * @module
 * Reassembling a recorded stream: which received chunk stands at each sequence number,
 * and what is wrong with the rest. Chunks are taken by their receipts, never by their
 * place in the recording; the place is only compared with the sequence afterwards.
 *
 * Which chunk is the stream's at each number is decided by the hash chain, from both
 * ends: backwards from the last receipt digest the final statement signs (each
 * receipt's `prev` names the one before it, so every receipt down to the first break is
 * the one that was signed), and forwards from chunk 0. A break between them is a chunk
 * that is not the stream's (spliced, or forged to fit edited bytes) or a gap. Moved
 * chunks are the fewest that explain the arrival order: those outside one longest
 * increasing run of sequence numbers.
 */
import { sha256Hex } from '../../core/hash.js';
import { leafHash } from '../../core/tlog/merkle.js';
import {
  type ChunkReceipt,
  chunkReceiptDigest,
  describeStream,
  type FinalStatement,
  sameStream,
  type StreamRef,
} from './format.js';
import { type StreamProblem, streamProblem } from './problems.js';

/** A received chunk of this stream. */
export interface ReceivedChunk {
  receipt: ChunkReceipt;
  bytes: Buffer;
  line: number;
  /** Its place among the chunks received (0 = first to arrive). */
  arrival: number;
  /** Digest of its receipt, hex. */
  digest: string;
  /** Its leaf hash in the stream's tree. */
  leaf: Buffer;
  /** The bytes match the receipt's SHA-256 and length. */
  bytesMatch: boolean;
  /** On the hash chain from the signed last digest (given a final statement). */
  signedChain: boolean;
}

export interface Assembled {
  /** The chunk standing at each sequence number. */
  chosen: Map<number, ReceivedChunk>;
  /** Chunks the stream holds: the signed size, else what the chunks and checkpoints show. */
  size: number;
  /** Chunks 0..linked-1 are all present, each naming the one before it. */
  linked: number;
  problems: StreamProblem[];
}

export interface AssembleInput {
  stream: StreamRef;
  chunks: readonly { receipt: ChunkReceipt; bytes: Buffer; line: number }[];
  /** The final statement, when one of this stream arrived. */
  statement?: FinalStatement;
  /** The stream's policy (the statement's, else the first chunk's). */
  policy?: string;
  /** The largest size a verified checkpoint signed (a cut stream holds at least that many chunks). */
  checkpointed: number;
}

export function assemble(input: AssembleInput): Assembled {
  const problems: StreamProblem[] = [];
  /** Numbers where a chunk that is not the stream's was received: the stream's own is missing, not dropped. */
  const replaced = new Set<number>();
  const candidates = _candidates(input, problems, replaced);
  let size = input.statement?.size ?? input.checkpointed;
  if (!input.statement) for (const seq of candidates.keys()) size = Math.max(size, seq + 1);
  const chosen = new Map<number, ReceivedChunk>();
  if (input.statement) _walkBack(input.statement, candidates, chosen, problems, replaced);
  const linked = _walkForward(size, candidates, chosen, problems);
  for (const [seq, list] of [...candidates].sort((a, b) => a[0] - b[0])) {
    const pick = chosen.get(seq) ?? (list[0] as ReceivedChunk);
    chosen.set(seq, pick);
    for (const other of list)
      if (other !== pick)
        problems.push(
          streamProblem(
            'CHUNK_FOREIGN',
            `Chunk ${seq} on line ${other.line} differs from chunk ${seq} on line ${pick.line}${pick.signedChain ? ', which the signed chain holds' : ''}: a stream has one chunk ${seq}.`,
            { seq, line: other.line },
          ),
        );
  }
  _gaps(size, chosen, replaced, problems);
  _reordered(chosen, problems);
  return { chosen, size, linked, problems };
}

/** This stream's received chunks by sequence number, each distinct receipt once; foreign, damaged and repeated ones reported. */
function _candidates(
  input: AssembleInput,
  problems: StreamProblem[],
  replaced: Set<number>,
): Map<number, ReceivedChunk[]> {
  const bySeq = new Map<number, ReceivedChunk[]>();
  input.chunks.forEach(({ receipt, bytes, line }, arrival) => {
    const at = { seq: receipt.seq, line };
    if (!sameStream(receipt, input.stream)) {
      replaced.add(receipt.seq);
      problems.push(
        streamProblem(
          'CHUNK_FOREIGN',
          `Chunk ${receipt.seq} names ${describeStream(receipt)}, not ${describeStream(input.stream)}.`,
          at,
        ),
      );
      return;
    }
    if (input.statement && receipt.seq >= input.statement.size) {
      problems.push(
        streamProblem(
          'CHUNK_FOREIGN',
          `Chunk ${receipt.seq} lies beyond the stream's end: the final receipt signs ${input.statement.size} chunks.`,
          at,
        ),
      );
      return;
    }
    if (input.policy !== undefined && receipt.policy !== input.policy)
      problems.push(
        streamProblem(
          'POLICY_MISMATCH',
          `Chunk ${receipt.seq} promises policy ${receipt.policy}; the stream promised ${input.policy}.`,
          at,
        ),
      );
    const bytesMatch = bytes.length === receipt.chunk_len && sha256Hex(bytes) === receipt.chunk_sha256;
    if (!bytesMatch)
      problems.push(
        streamProblem(
          'CHUNK_MISMATCH',
          `Chunk ${receipt.seq} has ${bytes.length} bytes with SHA-256 ${sha256Hex(bytes)}; its receipt says ${receipt.chunk_len} bytes with ${receipt.chunk_sha256}: these are not the bytes that were released.`,
          at,
        ),
      );
    const digestBytes = chunkReceiptDigest(receipt);
    const digest = digestBytes.toString('hex');
    const list = bySeq.get(receipt.seq) ?? [];
    const same = list.find((c) => c.digest === digest);
    if (same) {
      problems.push(
        streamProblem('CHUNK_REPEATED', `Chunk ${receipt.seq} was received again (first on line ${same.line}).`, at),
      );
      return;
    }
    const leaf = leafHash(digestBytes);
    list.push({ receipt, bytes, line, arrival, digest, leaf, bytesMatch, signedChain: false });
    bySeq.set(receipt.seq, list);
  });
  return bySeq;
}

/** From the signed last digest down: each receipt found is the one signed; the first number where none is, is foreign or a gap. */
function _walkBack(
  statement: FinalStatement,
  candidates: Map<number, ReceivedChunk[]>,
  chosen: Map<number, ReceivedChunk>,
  problems: StreamProblem[],
  replaced: Set<number>,
): void {
  let expected = statement.head;
  if (expected === null) return; // an empty stream (a non-empty one without a head is the statement's problem)
  let seq = statement.size - 1;
  for (; seq >= 0 && expected !== null; seq--) {
    const match = candidates.get(seq)?.find((c) => c.digest === expected);
    if (!match) break;
    match.signedChain = true;
    chosen.set(seq, match);
    expected = match.receipt.prev;
  }
  const unsigned = seq >= 0 ? candidates.get(seq) : undefined;
  if (!unsigned) return;
  // The signed chain names this chunk's receipt exactly; none received is it.
  for (const c of unsigned)
    problems.push(
      streamProblem(
        'CHUNK_FOREIGN',
        `Chunk ${seq} on line ${c.line} is not the chunk the stream signed at ${seq}: ${seq === statement.size - 1 ? 'the final receipt' : 'the next receipt'} names ${expected}, this one's digest is ${c.digest} (spliced from another stream, or its receipt was changed — also by an edit to a chunk before it, with the receipts after that re-chained without the key: none of chunks 0–${seq} is proven).`,
        { seq, line: c.line },
      ),
    );
  candidates.delete(seq);
  replaced.add(seq);
}

/** From chunk 0 up to the signed chain (or the end): the chunks that each name the one before. Returns how many lead without a break. */
function _walkForward(
  size: number,
  candidates: Map<number, ReceivedChunk[]>,
  chosen: Map<number, ReceivedChunk>,
  problems: StreamProblem[],
): number {
  let prev: string | null = null;
  let seq = 0;
  for (; seq < size; seq++) {
    const signedChunk = chosen.get(seq);
    if (signedChunk?.signedChain) {
      prev = signedChunk.digest;
      continue;
    }
    const list = candidates.get(seq);
    if (!list) break;
    const match = list.find((c) => c.receipt.prev === prev);
    if (!match) {
      // Below the signed chain (or without one) nothing says which of the two is foreign: reported where it shows.
      const first = list[0] as ReceivedChunk;
      problems.push(
        streamProblem(
          'CHUNK_FOREIGN',
          `Chunk ${seq} does not follow chunk ${seq - 1} received: its receipt names ${first.receipt.prev} as the one before, chunk ${seq - 1}'s digest is ${prev}; one of the two is not this stream's.`,
          { seq, line: first.line },
        ),
      );
      break;
    }
    chosen.set(seq, match);
    prev = match.digest;
  }
  return seq;
}

/**
 * One CHUNK_MISSING per run of absent sequence numbers below the stream's size; a
 * number where a chunk that is not the stream's came instead (`replaced`) is its own
 * problem, saying so: the stream's chunk was not received, but nothing was dropped.
 */
function _gaps(
  size: number,
  chosen: Map<number, ReceivedChunk>,
  replaced: ReadonlySet<number>,
  problems: StreamProblem[],
): void {
  const stops = [...new Set([...chosen.keys(), ...replaced])].sort((a, b) => a - b);
  let next = 0;
  for (const seq of [...stops, size]) {
    if (seq > next) {
      const range = seq - next === 1 ? `Chunk ${next} was` : `Chunks ${next}–${seq - 1} (${seq - next}) were`;
      problems.push(streamProblem('CHUNK_MISSING', `${range} not received (dropped).`, { seq: next }));
    }
    if (replaced.has(seq) && !chosen.has(seq))
      problems.push(
        streamProblem(
          'CHUNK_MISSING',
          `The stream's chunk ${seq} was not received: a chunk that is not the stream's came in its place (CHUNK_FOREIGN).`,
          { seq },
        ),
      );
    next = Math.max(next, seq + 1);
  }
}

/** The chunks outside one longest run of increasing sequence numbers, in arrival order: the fewest that moved. */
function _reordered(chosen: Map<number, ReceivedChunk>, problems: StreamProblem[]): void {
  const arrived = [...chosen.values()].sort((a, b) => a.arrival - b.arrival);
  const kept = _longestIncreasing(arrived.map((c) => c.receipt.seq));
  let latest = -1;
  arrived.forEach((c, i) => {
    if (!kept.has(i))
      problems.push(
        streamProblem(
          'CHUNK_REORDERED',
          `Chunk ${c.receipt.seq} was received out of order${latest > c.receipt.seq ? `, after chunk ${latest}` : `, before chunks that precede it`}.`,
          { seq: c.receipt.seq, line: c.line },
        ),
      );
    latest = Math.max(latest, c.receipt.seq);
  });
}

/** Indexes of one longest strictly increasing subsequence (patience sorting, O(n log n)). */
function _longestIncreasing(values: readonly number[]): Set<number> {
  const tails: number[] = []; // index of the smallest tail of each run length
  const before = new Array<number>(values.length).fill(-1);
  values.forEach((v, i) => {
    let lo = 0;
    let hi = tails.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if ((values[tails[mid] as number] as number) < v) lo = mid + 1;
      else hi = mid;
    }
    if (lo > 0) before[i] = tails[lo - 1] as number;
    tails[lo] = i;
  });
  const kept = new Set<number>();
  for (let i = tails.at(-1) ?? -1; i >= 0; i = before[i] as number) kept.add(i);
  return kept;
}
