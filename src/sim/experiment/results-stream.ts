/**
 * @module
 * Reading results files as streams: one line at a time from fixed-size chunks, so a
 * reader's memory is what it keeps (a cell summary, a set of ids), not the file — a
 * 2-million-run file is ~2.5 GB, past the longest string V8 can hold.
 * Synchronous on purpose: the callers (summary, report, resume) are synchronous and
 * read only local files. Bounded: only a regular file is read, no further than its size
 * when opened, and a line longer than MAX_LINE_BYTES is an error naming the file and
 * the line (docs/errors.md, "Limits on what is read").
 */
import { closeSync, existsSync, fstatSync, openSync, readSync } from 'node:fs';
import { notRegularFile } from '../../attest/files.js';
import { WitnessError } from '../../core/errors.js';
import type { RunRecord } from './record.js';
import { checkRecord } from './record-schema.js';

const CHUNK = 1 << 20;
/**
 * The longest line read: 16 MiB. A results line is a few KB, a signed transcript line
 * some hundreds; a longer one is damage (or not a results file), and joining it into
 * one string could pass what V8 can hold.
 */
export const MAX_LINE_BYTES = 16 * 1024 * 1024;
/** Problems kept with their text; the rest are only counted. */
const PROBLEMS_KEPT = 100;

export interface ResultsScan {
  /** Lines that are valid records. */
  runs: number;
  /** The first problems (line numbers and messages); `problemCount` says how many in all. */
  problems: { line: number; message: string }[];
  problemCount: number;
  /** The file ends in an unterminated line (a torn write), which is skipped. */
  tornTail: boolean;
}

/**
 * Every complete line of a file, without its newline, with its 1-based number, its byte
 * offset in the file and its length in bytes (for an index that reads it again); `chunk`:
 * bytes read at once. Refuses a file that is not a regular file before reading, reads no
 * further than the size it had when opened, and throws CORRUPT at a line past
 * `maxLineBytes` (an unterminated last line that long is only skipped, as any torn tail
 * is, and reported as one: its bytes are not kept).
 */
export function* fileLines(
  path: string,
  chunk = CHUNK,
  maxLineBytes = MAX_LINE_BYTES,
): Generator<{ line: number; raw: string; offset: number; bytes: number }, { tornTail: boolean }> {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (cause) {
    throw new WitnessError('IO', `Cannot read ${path}: ${(cause as Error).message}.`, { cause });
  }
  const buffer = Buffer.alloc(chunk);
  let carry: Buffer[] = [];
  let carried = 0;
  let tooLong = false;
  let line = 0;
  // Byte offsets in the file: of the buffer's first byte, and of the line being read.
  let base = 0;
  let lineStart = 0;
  try {
    const stats = fstatSync(fd);
    if (!stats.isFile()) throw notRegularFile(path, 'file');
    // What a writer appends while this reads is left for the next read.
    let left = stats.size;
    while (left > 0) {
      const n = readSync(fd, buffer, 0, Math.min(chunk, left), null);
      if (n === 0) break;
      left -= n;
      let start = 0;
      for (let at = buffer.indexOf(0x0a, 0); at >= 0 && at < n; at = buffer.indexOf(0x0a, start)) {
        if (tooLong || carried + at - start > maxLineBytes) throw _lineTooLong(path, line + 1, maxLineBytes);
        const piece = buffer.subarray(start, at);
        const raw = carry.length > 0 ? Buffer.concat([...carry, piece]).toString('utf8') : piece.toString('utf8');
        carry = [];
        carried = 0;
        line++;
        yield { line, raw, offset: lineStart, bytes: base + at - lineStart };
        start = at + 1;
        lineStart = base + start;
      }
      if (!tooLong && carried + n - start > maxLineBytes) {
        // Too long to keep: skipped to its end, where a newline makes it an error.
        [carry, carried, tooLong] = [[], 0, true];
      }
      // Copied: the buffer is reused by the next read.
      if (start < n && !tooLong) {
        carry.push(Buffer.from(buffer.subarray(start, n)));
        carried += n - start;
      }
      base += n;
    }
  } finally {
    closeSync(fd);
  }
  return { tornTail: tooLong || carry.some((c) => c.length > 0) };
}

function _lineTooLong(path: string, line: number, max: number): WitnessError {
  return new WitnessError(
    'CORRUPT',
    `${path} line ${line} is longer than ${max} bytes, the longest line read (docs/errors.md, "Limits on what is read"): the file is damaged or is not one Witness wrote.`,
  );
}

/**
 * A results file's valid records, one at a time, with their raw text and line; the
 * counts land in `scan` as the file is read (complete once iteration ends). A file
 * with lines but not one record is not a results file (e.g. `witness report
 * README.md`): an error, not an empty table.
 */
export function* resultsRecords(
  path: string,
  scan: ResultsScan = emptyScan(),
): Generator<{ record: RunRecord; raw: string; line: number; offset: number; bytes: number }> {
  if (!existsSync(path))
    throw new WitnessError(
      'NOT_FOUND',
      `${path} has no results (missing or empty). Run \`witness sim --out ${path}\` first.`,
    );
  const lines = fileLines(path);
  for (let next = lines.next(); ; next = lines.next()) {
    if (next.done) {
      scan.tornTail = next.value.tornTail;
      break;
    }
    const { line, raw, offset, bytes } = next.value;
    if (raw.trim() === '') continue;
    let record: RunRecord;
    try {
      record = checkRecord(JSON.parse(raw));
    } catch (error) {
      if (scan.problemCount++ < PROBLEMS_KEPT) scan.problems.push({ line, message: (error as Error).message });
      continue;
    }
    scan.runs++;
    yield { record, raw, line, offset, bytes };
  }
  if (scan.runs === 0 && scan.problemCount === 0 && !scan.tornTail) {
    throw new WitnessError(
      'NOT_FOUND',
      `${path} has no results (missing or empty). Run \`witness sim --out ${path}\` first.`,
    );
  }
  if (scan.runs === 0 && scan.problemCount > 0) throw _notResults(path, scan);
}

function _notResults(path: string, scan: ResultsScan): WitnessError {
  const first = scan.problems[0]!;
  return new WitnessError(
    'INVALID_INPUT',
    `${path} is not a results file: none of its ${scan.problemCount} lines is a run record (line ${first.line}: ${first.message}). Give a JSONL file written by \`witness sim\`.`,
  );
}

export function emptyScan(): ResultsScan {
  return { runs: 0, problems: [], problemCount: 0, tornTail: false };
}

/** Just the records (for `summarizeCells` and `poolRuns`, which take any iterable). */
export function* recordsOf(
  path: string,
  scan: ResultsScan = emptyScan(),
  keep: (record: RunRecord) => boolean = () => true,
): Generator<RunRecord> {
  for (const { record } of resultsRecords(path, scan)) if (keep(record)) yield record;
}
