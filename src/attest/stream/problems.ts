/**
 * @module
 * What a stream verifier reports: a code of the one vocabulary (reasons.ts) — the
 * stream's own codes, the receipt codes of its final receipt and checkpoints, the log
 * codes of a checkpoint the stream does not extend — with the chunk's sequence number
 * and the recording's line when there is one, and where that is in words (`at`).
 */
import { capPerCode } from '../../core/cap-per-code.js';
import type { Problem } from '../../core/problem.js';
import type { ReasonCode, StreamCode } from '../reasons.js';

export type StreamProblemCode = StreamCode | ReasonCode | 'INCONSISTENT' | 'TRUNCATED';

/** A stream's problem; `at` is "chunk N" for one chunk's, else "line N" when found on a line. */
export interface StreamProblem extends Problem<StreamProblemCode> {
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
  const { seq, line } = where;
  const p: StreamProblem = { code, message };
  // A chunk's problem is named by its chunk, whichever line of the recording showed it.
  if (seq !== undefined) p.at = `chunk ${seq}`;
  else if (line !== undefined) p.at = `line ${line}`;
  if (seq !== undefined) p.seq = seq;
  if (line !== undefined) p.line = line;
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
