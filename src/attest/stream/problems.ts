/**
 * @module
 * What a stream verifier reports: a code of the one vocabulary (reasons.ts) — the
 * stream's own codes, the receipt codes of its final receipt and checkpoints, the log
 * codes of a checkpoint the stream does not extend — with the chunk's sequence number
 * and the recording's line when there is one.
 */
import { capPerCode } from '../../core/cap-per-code.js';
import type { ReasonCode, StreamCode } from '../reasons.js';

export type StreamProblemCode = StreamCode | ReasonCode | 'INCONSISTENT' | 'TRUNCATED';

export interface StreamProblem {
  code: StreamProblemCode;
  /** What exactly was wrong, in words a user can act on. */
  message: string;
  /** The chunk's sequence number (0-based), when the problem is one chunk's. */
  seq?: number;
  /** 1-based line of the recording the problem was found on. */
  line?: number;
}

export function streamProblem(
  code: StreamProblemCode,
  message: string,
  where: { seq?: number | undefined; line?: number | undefined } = {},
): StreamProblem {
  const p: StreamProblem = { code, message };
  if (where.seq !== undefined) p.seq = where.seq;
  if (where.line !== undefined) p.line = where.line;
  return p;
}

/** Problems of one code listed before the rest are only counted. */
export const MAX_STREAM_PROBLEMS_PER_CODE = 16;

/** At most MAX_STREAM_PROBLEMS_PER_CODE of each code, then one that counts the rest. */
export function boundStreamProblems(problems: StreamProblem[]): StreamProblem[] {
  return capPerCode(problems, MAX_STREAM_PROBLEMS_PER_CODE, (code, more) =>
    streamProblem(
      code,
      `…and ${more} more ${code} problems in this stream (the first ${MAX_STREAM_PROBLEMS_PER_CODE} are listed).`,
    ),
  );
}
