/**
 * @module
 * Durable append-only JSON Lines files.
 *
 * Rules:
 * - A record is written as `<json>\n` to a file opened with O_APPEND through core's
 *   `writeAll` (a short write is finished or failed, never taken as whole), so a
 *   complete line is in the kernel before `append` returns, and a process killed
 *   afterwards (even by SIGKILL) does not lose it. A failed append (disk full) cuts
 *   the file back to its last complete line and throws: nothing half-written stays
 *   for the next line to be glued to.
 * - fsync policy: `always` (fsync after each append: survives power loss, slow),
 *   `batch` (fsync at most every `batchMs` and on close: the default for results) or
 *   `never` (leave it to the OS).
 * - Earlier lines are never rewritten. A crash mid-write can leave a torn last line
 *   (no trailing newline); `openJsonlWriter` cuts only that unterminated tail before
 *   appending, and reports the bytes it cut. Readers skip a torn tail and report
 *   corrupt lines with their line numbers instead of failing the whole file.
 */
import {
  closeSync,
  existsSync,
  fstatSync,
  fsyncSync,
  ftruncateSync,
  openSync,
  readFileSync,
  readSync,
  statSync,
} from 'node:fs';
import { writeAll } from './atomic-write.js';
import { WitnessError } from './errors.js';

export type FsyncPolicy = 'always' | 'batch' | 'never';

export interface JsonlWriterOptions {
  fsync?: FsyncPolicy;
  /** With `batch`: the longest time, in ms, written lines may wait for an fsync. */
  batchMs?: number;
}

export interface JsonlWriter {
  /** Append one record as one line. */
  append(record: unknown): void;
  /** Append one line of JSON text already written (without its newline), in one write. */
  appendLine(text: string): void;
  /**
   * Append one line already encoded: UTF-8 bytes ending in its newline, in one write.
   * For a writer that builds lines in a reused buffer (the signed results writer
   * hashes the same bytes it writes); the bytes are copied to the file before it returns.
   */
  appendLineBytes(bytes: Uint8Array): void;
  /** Flush to disk now (whatever the policy). */
  sync(): void;
  close(): void;
  /** Bytes of an unterminated last line that were cut when the file was opened. */
  readonly repairedBytes: number;
}

export function openJsonlWriter(path: string, options: JsonlWriterOptions = {}): JsonlWriter {
  const policy = options.fsync ?? 'batch';
  const batchMs = options.batchMs ?? 1000;
  const fd = _open(path);
  const repairedBytes = _cutTornTail(fd);
  let size = fstatSync(fd).size; // the end of the last complete line
  let dirty = false;
  let lastSync = Date.now();
  let closed = false;
  const sync = () => {
    if (dirty) fsyncSync(fd);
    dirty = false;
    lastSync = Date.now();
  };
  const appendLineBytes = (bytes: Uint8Array) => {
    if (closed) throw new WitnessError('IO', `Cannot append to ${path}: the writer is closed.`);
    if (bytes[bytes.length - 1] !== 0x0a)
      throw new WitnessError('INTERNAL', `A line given to appendLineBytes for ${path} must end with its newline.`);
    try {
      writeAll(fd, bytes, policy === 'always' ? { sync: 'full' } : {});
    } catch (cause) {
      _cutBack(fd, size);
      throw new WitnessError(
        'IO',
        `Cannot append to ${path}: ${(cause as Error).message}. The line was not stored (the file ends with its last complete line); free space or check the disk, then resume.`,
        { cause },
      );
    }
    size += bytes.length;
    dirty = policy !== 'always'; // `always` synced inside writeAll
    if (policy === 'batch' && Date.now() - lastSync >= batchMs) sync();
  };
  return {
    repairedBytes,
    append: (record: unknown) => appendLineBytes(Buffer.from(`${JSON.stringify(record)}\n`, 'utf8')),
    appendLine: (text: string) => appendLineBytes(Buffer.from(`${text}\n`, 'utf8')),
    appendLineBytes,
    sync,
    close() {
      if (closed) return;
      closed = true;
      if (policy !== 'never') sync();
      closeSync(fd);
    },
  };
}

function _open(path: string): number {
  try {
    return openSync(path, 'a+');
  } catch (cause) {
    throw new WitnessError(
      'IO',
      `Cannot open ${path} for appending: ${(cause as Error).message}. Check the folder exists and is writable.`,
      { cause },
    );
  }
}

/** Undoes a partial append; if even that fails, the torn tail is cut when the file is next opened. */
function _cutBack(fd: number, size: number): void {
  try {
    ftruncateSync(fd, size);
  } catch {
    // the next open cuts the unterminated tail (_cutTornTail)
  }
}

/** Cuts an unterminated last line (a torn write); complete lines are never touched. */
function _cutTornTail(fd: number): number {
  const size = fstatSync(fd).size;
  if (size === 0) return 0;
  const chunk = Buffer.alloc(Math.min(size, 65536));
  let end = size;
  while (end > 0) {
    const start = Math.max(0, end - chunk.length);
    const n = readSync(fd, chunk, 0, end - start, start);
    const at = chunk.subarray(0, n).lastIndexOf(0x0a);
    if (at >= 0) {
      const keep = start + at + 1;
      if (keep < size) ftruncateSync(fd, keep);
      return size - keep;
    }
    end = start;
  }
  ftruncateSync(fd, 0);
  return size;
}

export interface JsonlLine<T = unknown> {
  /** 1-based line number in the file. */
  line: number;
  value: T;
  /** The line's text as stored, without its newline. */
  raw: string;
}

export interface JsonlProblem {
  line: number;
  message: string;
}

export interface JsonlContents<T = unknown> {
  records: JsonlLine<T>[];
  problems: JsonlProblem[];
  /** True when the file ends in an unterminated line (a torn write); it is not in `records`. */
  tornTail: boolean;
}

/** The largest file `readJsonl` reads whole (half the longest string V8 holds); larger ones are read as streams elsewhere. */
export const MAX_JSONL_FILE_BYTES = 256 * 1024 * 1024;

/**
 * Reads every line; a line that is not JSON (or fails `check`) becomes a problem with
 * its line number, and the other lines are still returned. Only a regular file of at
 * most MAX_JSONL_FILE_BYTES is read (a device such as /dev/zero never ends).
 */
export function readJsonl<T = unknown>(path: string, check?: (value: unknown) => T): JsonlContents<T> {
  if (!existsSync(path)) return { records: [], problems: [], tornTail: false };
  let text: string;
  try {
    const stats = statSync(path);
    if (!stats.isFile())
      throw new WitnessError(
        'INVALID_INPUT',
        `${path} is not a regular file (a device, a FIFO or a socket), so it has no end to read to; save its contents to a file and give that.`,
      );
    if (stats.size > MAX_JSONL_FILE_BYTES)
      throw new WitnessError(
        'INVALID_INPUT',
        `${path} is ${stats.size} bytes, more than the ${MAX_JSONL_FILE_BYTES} read whole (docs/errors.md, "Limits on what is read"); it is not one Witness wrote, or it was damaged.`,
      );
    text = readFileSync(path, 'utf8');
  } catch (cause) {
    if (cause instanceof WitnessError) throw cause;
    throw new WitnessError('IO', `Cannot read ${path}: ${(cause as Error).message}.`, { cause });
  }
  return parseJsonl(text, check);
}

export function parseJsonl<T = unknown>(text: string, check?: (value: unknown) => T): JsonlContents<T> {
  const lines = text.split('\n');
  const tornTail = lines.length > 0 && lines[lines.length - 1] !== '';
  lines.pop(); // the empty string after the final newline, or the torn tail
  const records: JsonlLine<T>[] = [];
  const problems: JsonlProblem[] = [];
  lines.forEach((raw, index) => {
    if (raw.trim() === '') return;
    try {
      const parsed: unknown = JSON.parse(raw);
      records.push({ line: index + 1, value: check ? check(parsed) : (parsed as T), raw });
    } catch (error) {
      problems.push({ line: index + 1, message: (error as Error).message });
    }
  });
  return { records, problems, tornTail };
}
