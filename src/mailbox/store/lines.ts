/**
 * @module
 * Reading JSONL a page at a time: the complete lines of a file from a byte offset,
 * with never more than one page and one line in memory, whatever the file's size.
 * A line longer than `maxLine` (more than any record the server writes; a V8 string
 * cannot even hold 600 MB) is passed without its text — as damaged — and, when
 * asked, with the SHA-256 of its bytes so a hash chain can continue over it.
 */
import { createHash, type Hash } from 'node:crypto';
import { readSync } from 'node:fs';

const PAGE = 64 * 1024;
/** Longest line whose text is read: bodies are limited to far less (limits.ts). */
export const MAX_LINE = 32 * 1024 * 1024;
/** What verify reads of one line: longer is not a record of ours (a message body is at most a few MiB). */
export const MAX_LINE_BYTES = 64 * 1024 * 1024;
/** A stored record's text in SQL (SQLite and PostgreSQL alike), or NULL when it is too long to read into memory (then it counts as damaged). */
export const CAPPED_TEXT = `CASE WHEN octet_length(text) <= ${MAX_LINE} THEN text END`;

export interface Line {
  /** The text without its newline; undefined when longer than `maxLine`. */
  text: string | undefined;
  /** Byte offset of the line's first byte, and just past its newline. */
  start: number;
  end: number;
  /** SHA-256 (hex) of an over-long line's bytes, when `hashLong` was asked for. */
  hash?: string;
}

export interface ScanOptions {
  maxLine?: number;
  hashLong?: boolean;
}

/**
 * Calls `visit` for each complete line from `offset` on, until it returns false or
 * the file ends. Returns the offset just past the last line visited: where an
 * unterminated (torn) tail starts when the whole file was read.
 */
export function scanLines(
  fd: number,
  offset: number,
  visit: (line: Line) => unknown,
  options: ScanOptions = {},
): number {
  const line = new _LineBuilder(options.maxLine ?? MAX_LINE, options.hashLong ?? false);
  const page = Buffer.allocUnsafe(PAGE);
  let pos = offset;
  let start = offset;
  for (;;) {
    const n = readSync(fd, page, 0, PAGE, pos);
    if (n === 0) return start;
    const buf = page.subarray(0, n);
    let i = 0;
    while (i < n) {
      const nl = buf.indexOf(0x0a, i);
      if (nl < 0) {
        line.add(buf, i, n);
        break;
      }
      const end = pos + nl + 1;
      const done = line.finish(buf, i, nl, start, end);
      start = end;
      i = nl + 1;
      if (visit(done) === false) return start;
    }
    pos += n;
  }
}

/** Newlines (complete lines) between two byte offsets. */
export function countLines(fd: number, from: number, to: number): number {
  const page = Buffer.allocUnsafe(PAGE);
  let count = 0;
  for (let pos = from; pos < to; ) {
    const n = readSync(fd, page, 0, Math.min(PAGE, to - pos), pos);
    if (n === 0) break;
    for (let i = page.indexOf(0x0a, 0); i >= 0 && i < n; i = page.indexOf(0x0a, i + 1)) count++;
    pos += n;
  }
  return count;
}

/** The bytes of one line as they arrive page by page. */
class _LineBuilder {
  private parts: Buffer[] = [];
  private length = 0;
  private hash: Hash | undefined;
  private tooLong = false;

  constructor(
    private readonly max: number,
    private readonly hashLong: boolean,
  ) {}

  add(buf: Buffer, from: number, to: number): void {
    if (to <= from) return;
    const chunk = buf.subarray(from, to);
    if (!this.tooLong && this.length + chunk.length > this.max) {
      this.tooLong = true;
      if (this.hashLong) {
        this.hash = createHash('sha256');
        for (const p of this.parts) this.hash.update(p);
      }
      this.parts = [];
    }
    if (this.tooLong) this.hash?.update(chunk);
    else this.parts.push(Buffer.from(chunk)); // a copy: the page is reused
    this.length += chunk.length;
  }

  finish(buf: Buffer, from: number, to: number, start: number, end: number): Line {
    let line: Line;
    if (this.length === 0) line = { text: buf.toString('utf8', from, to), start, end };
    else {
      this.add(buf, from, to);
      line = this.tooLong
        ? { text: undefined, start, end, ...(this.hash ? { hash: this.hash.digest('hex') } : {}) }
        : { text: Buffer.concat(this.parts).toString('utf8'), start, end };
    }
    if (line.text !== undefined && end - start - 1 > this.max)
      line = {
        text: undefined,
        start,
        end,
        ...(this.hashLong ? { hash: createHash('sha256').update(buf.subarray(from, to)).digest('hex') } : {}),
      };
    this.parts = [];
    this.length = 0;
    this.hash = undefined;
    this.tooLong = false;
    return line;
  }
}
