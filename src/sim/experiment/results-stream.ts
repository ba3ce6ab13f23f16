/**
 * @module
 * Reading results files as streams: one line at a time from fixed-size chunks, so a
 * reader's memory is what it keeps (a cell summary, a set of ids), not the file — a
 * 2-million-run file is ~2.5 GB, past the longest string V8 can hold (issue 18 item 5).
 * Synchronous on purpose: the callers (summary, report, resume) are synchronous and
 * read only local files.
 */
import { closeSync, existsSync, openSync, readSync } from 'node:fs';
import { WitnessError } from '../../core/errors.js';
import type { RunRecord } from './record.js';
import { checkRecord } from './record-schema.js';

const CHUNK = 1 << 20;
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

/** Every complete line of a file, without its newline, with its 1-based number; `chunk`: bytes read at once. */
export function* fileLines(path: string, chunk = CHUNK): Generator<{ line: number; raw: string }, { tornTail: boolean }> {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (cause) {
    throw new WitnessError('IO', `Cannot read ${path}: ${(cause as Error).message}.`, { cause });
  }
  const buffer = Buffer.alloc(chunk);
  let carry: Buffer[] = [];
  let line = 0;
  try {
    for (;;) {
      const n = readSync(fd, buffer, 0, chunk, null);
      if (n === 0) break;
      let start = 0;
      for (let at = buffer.indexOf(0x0a, 0); at >= 0 && at < n; at = buffer.indexOf(0x0a, start)) {
        const piece = buffer.subarray(start, at);
        const raw = carry.length > 0 ? Buffer.concat([...carry, piece]).toString('utf8') : piece.toString('utf8');
        carry = [];
        line++;
        yield { line, raw };
        start = at + 1;
      }
      // Copied: the buffer is reused by the next read.
      if (start < n) carry.push(Buffer.from(buffer.subarray(start, n)));
    }
  } finally {
    closeSync(fd);
  }
  return { tornTail: carry.some((c) => c.length > 0) };
}

/**
 * A results file's valid records, one at a time, with their raw text and line; the
 * counts land in `scan` as the file is read (complete once iteration ends). A file
 * with lines but not one record is not a results file (e.g. `witness report
 * README.md`): an error, not an empty table.
 */
export function* resultsRecords(path: string, scan: ResultsScan = emptyScan()): Generator<{ record: RunRecord; raw: string; line: number }> {
  if (!existsSync(path)) throw new WitnessError('NOT_FOUND', `${path} has no results (missing or empty). Run \`witness sim --out ${path}\` first.`);
  const lines = fileLines(path);
  for (let next = lines.next(); ; next = lines.next()) {
    if (next.done) {
      scan.tornTail = next.value.tornTail;
      break;
    }
    const { line, raw } = next.value;
    if (raw.trim() === '') continue;
    let record: RunRecord;
    try {
      record = checkRecord(JSON.parse(raw));
    } catch (error) {
      if (scan.problemCount++ < PROBLEMS_KEPT) scan.problems.push({ line, message: (error as Error).message });
      continue;
    }
    scan.runs++;
    yield { record, raw, line };
  }
  if (scan.runs === 0 && scan.problemCount === 0 && !scan.tornTail) {
    throw new WitnessError('NOT_FOUND', `${path} has no results (missing or empty). Run \`witness sim --out ${path}\` first.`);
  }
  if (scan.runs === 0 && scan.problemCount > 0) throw _notResults(path, scan);
}

function _notResults(path: string, scan: ResultsScan): WitnessError {
  const first = scan.problems[0]!;
  return new WitnessError('INVALID_INPUT', `${path} is not a results file: none of its ${scan.problemCount} lines is a run record (line ${first.line}: ${first.message}). Give a JSONL file written by \`witness sim\`.`);
}

export function emptyScan(): ResultsScan {
  return { runs: 0, problems: [], problemCount: 0, tornTail: false };
}

/** Just the records (for `summarizeCells` and `poolRuns`, which take any iterable). */
export function* recordsOf(path: string, scan: ResultsScan = emptyScan(), keep: (record: RunRecord) => boolean = () => true): Generator<RunRecord> {
  for (const { record } of resultsRecords(path, scan)) if (keep(record)) yield record;
}
