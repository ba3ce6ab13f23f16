/**
 * @module
 * Creating a folder and its missing parents, one `mkdir` per missing part. Node's
 * `mkdirSync(path, { recursive: true })` never returns on a file system that answers
 * ENOENT for a new folder whose parent exists (/proc: `mkdir /proc/foo` says ENOENT,
 * Node retries the parent, gets EEXIST, retries the folder, for ever). Here each part
 * is tried once: the first refusal is the answer, with the path and the errno.
 */
import { mkdirSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { WitnessError } from './errors.js';

/** Errno values that name a path the user can change (docs/errors.md: exit 2). */
const _USERS_PATH = new Set(['ENOENT', 'ENOTDIR', 'EEXIST', 'EISDIR']);

/**
 * Creates `path` and its missing parents (`mode` for the new ones); an existing folder
 * is fine. Throws a one-line WitnessError naming the folder, the errno and what to do.
 * @example makeFolders('/srv/witness/results')
 */
export function makeFolders(path: string, mode?: number): void {
  const missing: string[] = [];
  for (let p = resolve(path); !_isFolder(p, path); p = dirname(p)) {
    missing.unshift(p);
    if (dirname(p) === p) break; // the root itself is not a folder: mkdir says why
  }
  for (const p of missing) {
    try {
      mkdirSync(p, mode === undefined ? {} : { mode });
    } catch (cause) {
      const code = (cause as NodeJS.ErrnoException).code ?? 'an error';
      // Made by someone else meanwhile: fine when it is a folder now.
      if (code === 'EEXIST' && _isFolder(p, path)) continue;
      const why =
        code === 'ENOENT'
          ? `, although ${dirname(p)} exists (a file system that does not allow new folders here, such as /proc)`
          : code === 'EACCES' || code === 'EPERM'
            ? ' (permission denied)'
            : '';
      throw new WitnessError(
        _USERS_PATH.has(code) ? 'USAGE' : 'IO',
        `Cannot create the folder ${p}: mkdir failed with ${code}${why}; choose another path.`,
        { cause },
      );
    }
  }
}

/** True for a folder; false for a missing path; a non-folder in the way is an error naming it. */
function _isFolder(p: string, asked: string): boolean {
  try {
    if (statSync(p).isDirectory()) return true;
  } catch (cause) {
    const code = (cause as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return false; // ENOTDIR: a file above it, found on the way up
    throw new WitnessError(
      'IO',
      `Cannot create the folder ${asked}: ${p} cannot be checked (${code}); choose another path.`,
      { cause },
    );
  }
  throw new WitnessError(
    'USAGE',
    `Cannot create the folder ${asked}: ${p} exists and is not a folder; choose another path.`,
  );
}
