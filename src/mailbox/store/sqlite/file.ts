/**
 * @module
 * Opening `mailbox.sqlite`, the SQLite store's one file, the way the JSONL store
 * opens its files (files.ts): agents may be able to write the mailbox folder, so a
 * symbolic link planted at `mailbox.sqlite` (or at its `-wal`, `-shm` or `-journal`
 * companions, which SQLite opens by name next to it) must not send the store's
 * writes — or a verifier's reads — to a file elsewhere. better-sqlite3 cannot pass
 * SQLITE_OPEN_NOFOLLOW, so the file is first opened by us with O_NOFOLLOW (created
 * when the store may create it) and checked to be a regular file; SQLite then opens
 * the name, and the name must still be that file. A link swapped in and out again
 * between the two opens is the accepted race NOTES.md names (Node has no openat).
 */
import { closeSync, constants, fstatSync, lstatSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { WitnessError } from '../../../core/errors.js';
import { notRegularFile, openInside, READ, UPDATE } from '../files.js';

export const SQLITE_FILE = 'mailbox.sqlite';
/** The files SQLite opens by name beside the database (WAL mode, or a rollback journal). */
const COMPANIONS = ['-wal', '-shm', '-journal'].map((s) => `${SQLITE_FILE}${s}`);

export function sqlitePath(dir: string): string {
  return join(dir, SQLITE_FILE);
}

export interface OpenSqliteOptions {
  /** Read only, and the file must exist (verify, snapshots, tail). Default: the store's read-write open, creating the file. */
  readonly?: boolean;
  timeout?: number;
}

/** Opens the mailbox's database: a regular file inside `dir`, never through a link (see the module comment). */
export function openMailboxDatabase(dir: string, options: OpenSqliteOptions = {}): Database.Database {
  const path = sqlitePath(dir);
  _checkCompanions(dir);
  const fd = options.readonly
    ? openInside(dir, SQLITE_FILE, READ)
    : openInside(dir, SQLITE_FILE, UPDATE | constants.O_CREAT, 0o644);
  if (fd === undefined)
    throw new WitnessError(
      'IO',
      `Cannot open ${path}: it does not exist. Was the mailbox created with --store sqlite?`,
    );
  let db: Database.Database | undefined;
  try {
    const opened = fstatSync(fd);
    try {
      db = new Database(path, {
        readonly: options.readonly ?? false,
        fileMustExist: true,
        timeout: options.timeout ?? 30_000,
      });
    } catch (cause) {
      throw new WitnessError('IO', `Cannot open ${path}: ${(cause as Error).message}.`, { cause });
    }
    const now = lstatSync(path);
    if (!now.isFile() || now.ino !== opened.ino || now.dev !== opened.dev)
      throw notRegularFile(path, 'not the file that was checked (it was replaced while being opened)');
    _checkCompanions(dir);
    return db;
  } catch (error) {
    db?.close();
    throw error;
  } finally {
    closeSync(fd);
  }
}

/** Each companion file is absent or a regular file: SQLite would follow a link there. */
function _checkCompanions(dir: string): void {
  for (const name of COMPANIONS) {
    const path = join(dir, name);
    let stat: ReturnType<typeof lstatSync>;
    try {
      stat = lstatSync(path);
    } catch {
      continue; // missing: SQLite creates it, in this folder
    }
    if (!stat.isFile()) throw notRegularFile(path, stat.isSymbolicLink() ? 'a symbolic link' : 'not a regular file');
  }
}
