/**
 * @module
 * Small file primitives for the JSONL store and recovery. Agents may be able to
 * write the mailbox folder, so every mailbox file is opened by a path checked to stay
 * inside it, through real folders, without following a symbolic link (O_NOFOLLOW),
 * and is checked to be a regular file once open. Writes that back an acknowledgement
 * go through `writeAll` (a short write is never taken for a whole one), and any
 * failure becomes one clear IO error (`writeFailure`).
 */
import { closeSync, constants, fstatSync, lstatSync, openSync, readSync, unlinkSync } from 'node:fs';
import { isAbsolute, join, relative, resolve, sep } from 'node:path';
import { writeFileAtomic } from '../../core/atomic-write.js';
import { WitnessError } from '../../core/errors.js';
import { AGENT_NAME_PATTERN } from '../names.js';

const { O_APPEND, O_CREAT, O_NOFOLLOW, O_RDONLY, O_RDWR } = constants;
export const READ = O_RDONLY;
export const UPDATE = O_RDWR;
export const APPEND = O_RDWR | O_APPEND | O_CREAT;
/** Every byte of a buffer at a descriptor (core's, looping over short writes): what backs an acknowledgement. */
export { writeAll } from '../../core/atomic-write.js';

/** True for the only relative paths the store writes: calls.jsonl, inbox/NAME.jsonl, cursors/NAME.json. */
export function isMailboxFile(rel: string): boolean {
  if (rel === 'calls.jsonl') return true;
  const m = /^(inbox|cursors)\/(.+)\.(jsonl|json)$/.exec(rel);
  return !!m && (m[1] === 'inbox' ? m[3] === 'jsonl' : m[3] === 'json') && AGENT_NAME_PATTERN.test(m[2]!);
}

/**
 * The absolute path of `rel` inside `dir`, its folders checked to be real folders
 * (a symlinked `inbox/` is refused); IO error when it would lead outside.
 */
export function insidePath(dir: string, rel: string): string {
  const path = resolve(dir, rel);
  const back = relative(resolve(dir), path);
  if (back === '' || back === '..' || back.startsWith(`..${sep}`) || isAbsolute(back)) {
    throw new WitnessError(
      'IO',
      `Refusing the path ${JSON.stringify(rel)}: it leads outside the mailbox folder ${dir}. Mailbox files are only calls.jsonl, inbox/NAME.jsonl and cursors/NAME.json.`,
    );
  }
  const parts = back.split(sep);
  for (let i = 1; i < parts.length; i++) _assertRealFolder(dir, join(...parts.slice(0, i)));
  return path;
}

/**
 * Opens a mailbox file: inside `dir`, through real folders (a symlinked `inbox/` is
 * refused), without following a symlink at the file itself, and a regular file.
 * Returns undefined when it does not exist and `flags` do not create it.
 */
export function openInside(dir: string, rel: string, flags: number, mode = 0o644): number | undefined {
  const path = insidePath(dir, rel);
  let fd: number;
  try {
    fd = openSync(path, flags | O_NOFOLLOW, mode);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' && !(flags & O_CREAT)) return undefined;
    if (code === 'ELOOP') throw notRegularFile(path, 'a symbolic link');
    if (code === 'EISDIR') throw notRegularFile(path, 'a folder, not a regular file');
    throw writeFailure(error, dir, path);
  }
  if (!fstatSync(fd).isFile()) {
    closeSync(fd);
    throw notRegularFile(path, 'not a regular file');
  }
  return fd;
}

function _assertRealFolder(dir: string, rel: string): void {
  const path = join(dir, rel);
  let stat: ReturnType<typeof lstatSync> | undefined;
  try {
    stat = lstatSync(path);
  } catch {
    return; // missing: opening below fails with ENOENT
  }
  if (stat.isSymbolicLink() || !stat.isDirectory()) {
    throw new WitnessError(
      'IO',
      `Refusing ${path}: it is ${stat.isSymbolicLink() ? 'a symbolic link' : 'not a folder'}, and the mailbox's folders must be real folders inside ${dir}. Remove it and recreate the folder (nothing was written through it).`,
    );
  }
}

/** The one refusal of a mailbox file that is a link or not a regular file (the JSONL and SQLite stores). */
export function notRegularFile(path: string, what: string): WitnessError {
  return new WitnessError(
    'IO',
    `Refusing ${path}: it is ${what}; mailbox files must be regular files inside the mailbox folder. Remove it (nothing was written through it); \`witness mailbox verify\` shows what is missing.`,
  );
}

/** One clear IO error for a failed write or sync (disk full above all); WitnessErrors pass through. */
export function writeFailure(error: unknown, dir: string, path = dir): WitnessError {
  if (error instanceof WitnessError) return error;
  const code = String((error as { code?: unknown }).code ?? '');
  if (code === 'ENOSPC' || code === 'EDQUOT' || code === 'SQLITE_FULL') {
    return new WitnessError(
      'IO',
      `The disk holding the mailbox ${dir} is full (${code}): this call was not stored and nothing of it was acknowledged; the mailbox is as it was before it. Free some space on that disk, then retry.`,
      { cause: error },
    );
  }
  return new WitnessError(
    'IO',
    `Writing the mailbox failed at ${path} (${code || 'error'}: ${(error as Error).message}): this call was not stored. Check the disk and the folder's permissions, then retry.`,
    { cause: error },
  );
}

/**
 * Replaces `rel` atomically and durably (core's `writeFileAtomic`: the temporary file
 * never follows a planted link). `syncFolder: false` when the caller syncs the folder
 * once for a batch of replacements.
 */
export function replaceFile(dir: string, rel: string, content: string, options: { syncFolder?: boolean } = {}): void {
  writeFileAtomic(insidePath(dir, rel), content, { mode: 0o644, syncFolder: options.syncFolder ?? true });
}

/** A small file's text, never through a symlink; undefined when missing, '' when over `max` bytes. */
export function readSmall(dir: string, rel: string, max = 4096): string | undefined {
  const fd = openInside(dir, rel, READ);
  if (fd === undefined) return undefined;
  try {
    const size = fstatSync(fd).size;
    if (size > max) return '';
    const buf = Buffer.alloc(size);
    let read = 0;
    while (read < size) {
      const n = readSync(fd, buf, read, size - read, read);
      if (n === 0) break;
      read += n;
    }
    return buf.subarray(0, read).toString('utf8');
  } finally {
    closeSync(fd);
  }
}

/** Removes a mailbox file (never a file a link points to); false when it did not exist. */
export function removeInside(dir: string, rel: string): boolean {
  try {
    unlinkSync(insidePath(dir, rel));
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw error;
  }
}
