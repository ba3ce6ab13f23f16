/**
 * @module
 * Reading a file the user named (evidence, output, key, key directory). Node's own
 * errors say "EISDIR: illegal operation on a directory, read" with no path; these say
 * which file, in which role, and what to do — one line, with the exit status of
 * docs/errors.md: a missing file or a directory is the caller's to fix (2), a file
 * that cannot be read is an IO failure (1).
 */
import { readFileSync, type Stats, statSync } from 'node:fs';
import { WitnessError } from '../core/errors.js';

export interface NamedFileOptions {
  /** Said after "does not exist", e.g. how to create the file. */
  whenMissing?: string;
}

/** The file's metadata; throws NOT_FOUND for a missing path and USAGE for a directory. */
export function statNamedFile(path: string, what: string, options: NamedFileOptions = {}): Stats {
  let stats: Stats;
  try {
    stats = statSync(path);
  } catch (cause) {
    const code = (cause as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') throw new WitnessError('NOT_FOUND', `The ${what} ${path} does not exist.${options.whenMissing ? ` ${options.whenMissing}` : ''}`, { cause });
    throw _unreadable(path, what, cause);
  }
  if (stats.isDirectory()) throw new WitnessError('USAGE', `The ${what} ${path} is a directory; give a file.`);
  return stats;
}

/** The file's bytes, with the errors of `statNamedFile`, and IO when it cannot be read. */
export function readNamedFile(path: string, what: string, options: NamedFileOptions = {}): Buffer {
  statNamedFile(path, what, options);
  try {
    return readFileSync(path);
  } catch (cause) {
    throw _unreadable(path, what, cause);
  }
}

function _unreadable(path: string, what: string, cause: unknown): WitnessError {
  const code = (cause as NodeJS.ErrnoException).code;
  const why = code === 'EACCES' || code === 'EPERM' ? 'permission denied; check its owner and mode' : (cause as Error).message;
  return new WitnessError('IO', `Cannot read the ${what} ${path}: ${why}.`, { cause });
}
