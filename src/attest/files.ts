/**
 * @module
 * Reading a file the user named (evidence, output, key, key directory). Node's own
 * errors say "EISDIR: illegal operation on a directory, read" with no path; these say
 * which file, in which role, and what to do — one line, with the exit status of
 * docs/errors.md: a missing file or a directory is the caller's to fix (2), a file
 * that cannot be read is an IO failure (1). Only regular files are read (a device such
 * as /dev/zero, a FIFO or a socket never ends, or ends anywhere), and never more than a
 * documented number of bytes (docs/errors.md, "Limits on what is read"), so no file can
 * make a reader hold gigabytes or fail with an internal error.
 */
import { closeSync, fstatSync, openSync, readSync, type Stats, statSync } from 'node:fs';
import { WitnessError } from '../core/errors.js';

export interface NamedFileOptions {
  /** Said after "does not exist", e.g. how to create the file. */
  whenMissing?: string;
  /** The most bytes read (default MAX_NAMED_FILE_BYTES); a larger file is refused. */
  maxBytes?: number;
}

/**
 * The most bytes of one file read whole: 256 MiB, half the longest string V8 can hold
 * (a JSON document is parsed from one string). Evidence larger than this is JSONL,
 * read as a stream by its line.
 */
export const MAX_NAMED_FILE_BYTES = 256 * 1024 * 1024;

/** The file's metadata; throws NOT_FOUND for a missing path and USAGE for a directory. */
export function statNamedFile(path: string, what: string, options: NamedFileOptions = {}): Stats {
  let stats: Stats;
  try {
    stats = statSync(path);
  } catch (cause) {
    const code = (cause as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR')
      throw new WitnessError(
        'NOT_FOUND',
        `The ${what} ${path} does not exist.${options.whenMissing ? ` ${options.whenMissing}` : ''}`,
        { cause },
      );
    throw _unreadable(path, what, cause);
  }
  if (stats.isDirectory()) throw new WitnessError('USAGE', `The ${what} ${path} is a directory; give a file.`);
  if (!stats.isFile()) throw notRegularFile(path, what);
  return stats;
}

/** The refusal of a path that is not a regular file (a device, a FIFO, a socket). */
export function notRegularFile(path: string, what: string): WitnessError {
  return new WitnessError(
    'INVALID_INPUT',
    `The ${what} ${path} is not a regular file (a device, a FIFO or a socket), so it has no end to read to; save its contents to a file and give that.`,
  );
}

/** The refusal of a file larger than its reader takes. */
export function fileTooLarge(path: string, what: string, max: number): WitnessError {
  return new WitnessError(
    'INVALID_INPUT',
    `The ${what} ${path} is larger than ${max} bytes, the most read for a ${what} (docs/errors.md, "Limits on what is read"); it is not one Witness wrote, or it was damaged.`,
  );
}

/** The file's bytes, with the errors of `statNamedFile`, and IO when it cannot be read. */
export function readNamedFile(path: string, what: string, options: NamedFileOptions = {}): Buffer {
  statNamedFile(path, what, options);
  const max = options.maxBytes ?? MAX_NAMED_FILE_BYTES;
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (cause) {
    throw _unreadable(path, what, cause);
  }
  try {
    // Checked again on what was opened: the path may have been replaced since the stat.
    if (!fstatSync(fd).isFile()) throw notRegularFile(path, what);
    const chunks: Buffer[] = [];
    let total = 0;
    for (;;) {
      const chunk = Buffer.allocUnsafe(Math.min(1 << 20, max + 1 - total));
      const n = _read(fd, chunk, path, what);
      if (n === 0) break;
      chunks.push(chunk.subarray(0, n));
      total += n;
      if (total > max) throw fileTooLarge(path, what, max);
    }
    return Buffer.concat(chunks, total);
  } finally {
    closeSync(fd);
  }
}

function _read(fd: number, chunk: Buffer, path: string, what: string): number {
  try {
    return readSync(fd, chunk, 0, chunk.length, null);
  } catch (cause) {
    throw _unreadable(path, what, cause);
  }
}

function _unreadable(path: string, what: string, cause: unknown): WitnessError {
  const code = (cause as NodeJS.ErrnoException).code;
  const why =
    code === 'EACCES' || code === 'EPERM' ? 'permission denied; check its owner and mode' : (cause as Error).message;
  return new WitnessError('IO', `Cannot read the ${what} ${path}: ${why}.`, { cause });
}
