/**
 * @module
 * A commit's intent and how it is undone. Before writing, a JSONL commit records in
 * the lock file each file's size and each cursor's content (lock.ts); undoing it
 * restores them. The lock file lies in a folder agents may be able to write, so an
 * intent is trusted only when it names mailbox files (calls.jsonl, inbox/NAME.jsonl,
 * cursors/NAME.json) with plain sizes, and files are opened without following links
 * (store/files.ts).
 */
import { closeSync, fdatasyncSync, fstatSync, ftruncateSync } from 'node:fs';
import { WitnessError } from '../../../core/errors.js';
import { isMailboxFile, openInside, readSmall, removeInside, replaceFile, UPDATE } from '../files.js';

export interface LockIntent {
  /** Path relative to the directory → size in bytes before the write. */
  files: Record<string, number>;
  /** Path relative to the directory → content before the write (null: did not exist). */
  restore?: Record<string, string | null>;
}

/**
 * Restores files to the sizes and contents recorded in `intent`, durably. A cursor
 * is rewritten only if it changed (a full disk may have no room for a copy), and
 * atomically; a file that is not a regular mailbox file is not ours and is left alone.
 */
export function rollBack(dir: string, intent: LockIntent): void {
  if (!trustedIntent(intent))
    throw new WitnessError('IO', `Refusing to roll back ${dir} to an intent that names files outside the mailbox.`);
  for (const [rel, size] of Object.entries(intent.files)) {
    const fd = _openIfRegular(dir, rel);
    if (fd === undefined) continue;
    try {
      if (fstatSync(fd).size > size) {
        ftruncateSync(fd, size);
        fdatasyncSync(fd);
      }
    } finally {
      closeSync(fd);
    }
  }
  for (const [rel, content] of Object.entries(intent.restore ?? {})) {
    if (_quietRead(dir, rel) === content) continue;
    if (content === null) removeInside(dir, rel);
    else replaceFile(dir, rel, content);
  }
}

/** An intent names only mailbox files, with whole sizes and string (or null) contents. */
export function trustedIntent(intent: unknown): intent is LockIntent {
  if (typeof intent !== 'object' || intent === null) return false;
  const { files, restore } = intent as { files?: unknown; restore?: unknown };
  if (typeof files !== 'object' || files === null || Array.isArray(files)) return false;
  const sizesOk = Object.entries(files).every(
    ([rel, size]) => isMailboxFile(rel) && Number.isSafeInteger(size) && (size as number) >= 0,
  );
  if (restore === undefined) return sizesOk;
  if (typeof restore !== 'object' || restore === null || Array.isArray(restore)) return false;
  return (
    sizesOk &&
    Object.entries(restore).every(
      ([rel, content]) =>
        isMailboxFile(rel) && rel.startsWith('cursors/') && (content === null || typeof content === 'string'),
    )
  );
}

function _openIfRegular(dir: string, rel: string): number | undefined {
  try {
    return openInside(dir, rel, UPDATE);
  } catch (error) {
    if (error instanceof WitnessError) return undefined; // a link or a folder planted in its place
    throw error;
  }
}

function _quietRead(dir: string, rel: string): string | null | undefined {
  try {
    return readSmall(dir, rel, 1 << 20) ?? null;
  } catch {
    return undefined;
  }
}
