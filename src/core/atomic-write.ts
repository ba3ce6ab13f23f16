/**
 * @module
 * The one way Witness replaces a file that must survive a crash (a key directory,
 * mailbox.json, agents.json, a read cursor, a runtime's MCP config, merged results):
 * write a temporary file in the same folder, write every byte, fsync it, rename it
 * over the target, fsync the folder. A reader — or the machine after a power loss —
 * sees the old file or the new one, never half of either, and never an empty file
 * where the rename reached the disk before the data did.
 *
 * The temporary file is created exclusively (O_EXCL) and without following a link
 * (O_NOFOLLOW), so a link planted at its name cannot redirect the write; `rename`
 * replaces a link at the target itself, never the file it points to (`exclusive`
 * links instead of renaming, so an existing file is never replaced). Errors are the
 * file system's own (with their `code`, e.g. ENOSPC): each caller names the file's
 * role in its own message; the temporary file is removed on any failure.
 */
import { randomBytes } from 'node:crypto';
import {
  closeSync,
  constants,
  fchmodSync,
  fdatasyncSync,
  fsyncSync,
  linkSync,
  lstatSync,
  openSync,
  renameSync,
  type Stats,
  statSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { WitnessError } from './errors.js';

const { O_CREAT, O_EXCL, O_NOFOLLOW, O_RDONLY, O_WRONLY } = constants;

export interface AtomicWriteOptions {
  /**
   * Permission bits of the new file. Default: those of the file being replaced when
   * it is a regular file (a user's 0600 config stays 0600), else 0644.
   */
  mode?: number;
  /**
   * Fsync the folder after the rename (default true). A caller replacing several
   * files of one folder in one commit passes false and calls `syncFolder` once.
   */
  syncFolder?: boolean;
  /**
   * Never replace: fail with EEXIST when `path` exists (a new signing key must not
   * overwrite an old one). The finished temporary file is hard-linked to `path`,
   * which the file system refuses atomically when the name is taken.
   */
  exclusive?: boolean;
}

/**
 * Replaces `path` with `data` atomically and durably (see the module comment). `data`
 * may be chunks (any iterable of strings or bytes, e.g. a generator): each is written
 * as it comes, so a file larger than memory (a merge of 2 million runs) is never held
 * whole; the chunks are fsynced once, after the last. A chunk source that throws
 * leaves the target untouched (the temporary file is removed).
 * @example writeFileAtomic('/srv/trusted.json', `${JSON.stringify(directory, null, 2)}\n`, { mode: 0o600 })
 * @example writeFileAtomic('all.jsonl', (function* () { for (const l of lines) yield `${l}\n`; })())
 */
export function writeFileAtomic(
  path: string,
  data: string | Uint8Array | Iterable<string | Uint8Array>,
  options: AtomicWriteOptions = {},
): void {
  const temp = _TempFile.open(path, options);
  try {
    // A string or bytes is one chunk (both are iterable themselves: test them first).
    const chunks = typeof data === 'string' || data instanceof Uint8Array ? [data] : data;
    for (const chunk of chunks) temp.write(chunk);
    temp.commit();
  } finally {
    temp.cleanUp();
  }
}

/**
 * `writeFileAtomic` for chunks that come asynchronously (rows read from a database):
 * the same temporary file, fsync, rename and folder fsync; a source that throws
 * leaves the target untouched.
 * @example await writeFileAtomicAsync('mailbox.export.jsonl', exportLines(dir))
 */
export async function writeFileAtomicAsync(
  path: string,
  chunks: AsyncIterable<string | Uint8Array>,
  options: AtomicWriteOptions = {},
): Promise<void> {
  const temp = _TempFile.open(path, options);
  try {
    for await (const chunk of chunks) temp.write(chunk);
    temp.commit();
  } finally {
    temp.cleanUp();
  }
}

/** The temporary file of one atomic write: created beside the target, written, then renamed (or linked) over it. */
class _TempFile {
  private renamed = false;

  private constructor(
    private readonly path: string,
    private readonly tmp: string,
    private readonly fd: number,
    private readonly options: AtomicWriteOptions,
  ) {}

  static open(path: string, options: AtomicWriteOptions): _TempFile {
    checkOutputFile(path);
    const mode = options.mode ?? _modeOf(path);
    const tmp = join(dirname(path), `.${basename(path)}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`);
    const fd = openSync(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, mode);
    const temp = new _TempFile(path, tmp, fd, options);
    try {
      fchmodSync(fd, mode); // the umask can only remove bits; make them exactly `mode`
    } catch (error) {
      temp.cleanUp();
      throw error;
    }
    return temp;
  }

  write(chunk: string | Uint8Array): void {
    writeAll(this.fd, typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk);
  }

  commit(): void {
    fsyncSync(this.fd);
    closeSync(this.fd);
    if (this.options.exclusive) linkSync(this.tmp, this.path);
    else renameSync(this.tmp, this.path);
    this.renamed = true;
    if (this.options.exclusive) _quiet(() => unlinkSync(this.tmp));
    if (this.options.syncFolder ?? true) syncFolder(dirname(this.path));
  }

  /** After a failure: the temporary file closed and removed, the target as it was. */
  cleanUp(): void {
    if (this.renamed) return;
    _quiet(() => closeSync(this.fd));
    _quiet(() => unlinkSync(this.tmp));
  }
}

/**
 * Refuses an output path that exists and is not a regular file (a directory, a device,
 * a FIFO, a socket, or a link to one): a rename would replace a device with a regular
 * file, and a stream written to one could not be synced (fsync: EINVAL). A missing
 * path, a regular file or a link to one pass (a link is replaced, not followed). The
 * one check of every file Witness writes: atomic writes make it themselves; a writer
 * that appends (results files) calls it before opening.
 */
export function checkOutputFile(path: string): void {
  let stats: Stats;
  try {
    stats = statSync(path);
  } catch {
    return; // missing (or a dangling link): the write creates it, or fails with its own error
  }
  if (stats.isFile()) return;
  throw new WitnessError(
    'USAGE',
    `${path} exists and is ${_kindOf(stats)}, not a regular file; give the path of a file to write (Witness writes regular files only).`,
  );
}

function _kindOf(stats: Stats): string {
  if (stats.isDirectory()) return 'a directory';
  if (stats.isCharacterDevice()) return 'a character device';
  if (stats.isBlockDevice()) return 'a block device';
  if (stats.isFIFO()) return 'a named pipe (FIFO)';
  if (stats.isSocket()) return 'a socket';
  return 'not a file';
}

/** Fsyncs a folder, so a rename or a new name in it survives a power loss. */
export function syncFolder(dir: string): void {
  const fd = openSync(dir, O_RDONLY);
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

export interface WriteAllOptions {
  /**
   * After the last byte: `full` fsyncs (data and metadata), `data` fdatasyncs (data
   * and size, the mtime may wait). Default: no sync, for a caller that syncs several
   * files at once (the mailbox's group commit) or batches syncs (results files).
   */
  sync?: 'full' | 'data';
}

/**
 * Writes every byte of `data` at the descriptor's position (O_APPEND: at the end),
 * looping over short writes — a short write is never taken for a whole one — and
 * failing (EIO) when a write stores nothing; then syncs if asked. Any error is the
 * file system's own (ENOSPC…): nothing may be acknowledged, and the caller cuts the
 * file back to its last good size. The one write under every acknowledgement.
 * @example writeAll(fd, Buffer.from(`${line}\n`), { sync: 'data' })
 */
export function writeAll(fd: number, data: Uint8Array, options: WriteAllOptions = {}): void {
  let done = 0;
  while (done < data.length) {
    const n = writeSync(fd, data, done, data.length - done);
    if (n <= 0) throw Object.assign(new Error(`write stored ${done} of ${data.length} bytes`), { code: 'EIO' });
    done += n;
  }
  if (options.sync === 'full') fsyncSync(fd);
  else if (options.sync === 'data') fdatasyncSync(fd);
}

function _modeOf(path: string): number {
  try {
    const stat = lstatSync(path);
    return stat.isFile() ? stat.mode & 0o777 : 0o644;
  } catch {
    return 0o644;
  }
}

function _quiet(fn: () => void): void {
  try {
    fn();
  } catch {
    // already gone, or never opened: nothing to undo
  }
}
