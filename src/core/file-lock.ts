/**
 * @module
 * One writer per file: a lock file beside it (`FILE.lock`), created with O_EXCL and
 * holding its owner (pid, host, boot id, start time, since when). A lock whose owner
 * is known to be gone (process-liveness.ts: a dead or reused pid on this host, or an
 * earlier boot) is broken; a live owner's, or one on another host, is refused with its
 * holder named. Breaking happens under a mkdir guard (`FILE.lock.break`) and only when
 * the lock still names the owner found dead, so two processes never both break it and
 * take it — the same scheme as the mailbox lock (mailbox/store/jsonl/lock.ts), without its intents.
 */
import { randomBytes } from 'node:crypto';
import { closeSync, mkdirSync, openSync, readFileSync, rmdirSync, statSync, unlinkSync, writeSync } from 'node:fs';
import { WitnessError } from './errors.js';
import { ownerIsGone, type ProcessIdentity, THIS_PROCESS } from './process-liveness.js';

/** Who holds a file lock. */
export interface FileLockOwner extends ProcessIdentity {
  /** Tells successive owners with the same pid apart. */
  nonce: string;
  /** When it was taken, ms since the epoch. */
  since: number;
}

export interface FileLock {
  readonly path: string;
  release(): void;
}

/** A lock file that cannot be read this long after it was made is taken as its owner's dying words. */
const UNREADABLE_GRACE_MS = 10_000;

/**
 * Takes the lock of `file` or throws a USAGE error naming its holder; `what` says what
 * the lock protects, for that message (e.g. "results file").
 */
export function lockFile(file: string, what: string): FileLock {
  const path = `${file}.lock`;
  for (let attempt = 0; attempt < 3; attempt++) {
    const taken = _tryLock(path);
    if (taken) return taken;
    const owner = _readOwner(path);
    if (owner === 'missing') continue; // released meanwhile
    if (owner === 'unreadable' ? _ageMs(path) > UNREADABLE_GRACE_MS : ownerIsGone(owner)) {
      _break(path, owner);
      continue;
    }
    throw new WitnessError(
      'USAGE',
      `${file} is being written by another ${_holder(owner)} (lock ${path}): one writer per ${what}. Wait for it to finish, or write elsewhere (--out FILE); if that process is gone but the lock stays (another machine, or a lock it cannot read), remove ${path}.`,
      { data: { owner } },
    );
  }
  throw new WitnessError(
    'USAGE',
    `${path} keeps changing hands: another process is taking and releasing it; try again.`,
  );
}

function _tryLock(path: string): FileLock | undefined {
  let fd: number;
  try {
    fd = openSync(path, 'wx', 0o644);
  } catch (cause) {
    if ((cause as NodeJS.ErrnoException).code === 'EEXIST') return undefined;
    throw new WitnessError(
      'IO',
      `Cannot create the lock file ${path}: ${(cause as Error).message}. Check that its folder is writable.`,
      { cause },
    );
  }
  const owner: FileLockOwner = { ...THIS_PROCESS, nonce: randomBytes(8).toString('hex'), since: Date.now() };
  try {
    writeSync(fd, `${JSON.stringify(owner)}\n`);
  } catch (cause) {
    // A lock without its owner would hold everyone off for the grace period.
    unlinkSync(path);
    throw new WitnessError('IO', `Cannot write the lock file ${path}: ${(cause as Error).message}.`, { cause });
  } finally {
    closeSync(fd);
  }
  let released = false;
  return {
    path,
    release() {
      if (released) return;
      released = true;
      // Only our own lock: one broken as stale (a machine's clock, a frozen process) may be another's by now.
      const now = _readOwner(path);
      if (typeof now === 'object' && now.nonce === owner.nonce) _quiet(() => unlinkSync(path));
    },
  };
}

/** Removes a lock found stale, unless it changed hands since it was read. */
function _break(path: string, seen: FileLockOwner | 'unreadable'): void {
  const guard = `${path}.break`;
  try {
    mkdirSync(guard);
  } catch {
    // Another process is breaking it; a guard left by one that died is removed after the grace period.
    if (_ageMs(guard) > UNREADABLE_GRACE_MS) _quiet(() => rmdirSync(guard));
    return;
  }
  try {
    const now = _readOwner(path);
    const same =
      now === 'unreadable'
        ? seen === 'unreadable'
        : now !== 'missing' && seen !== 'unreadable' && now.nonce === seen.nonce;
    if (same) unlinkSync(path);
  } finally {
    _quiet(() => rmdirSync(guard));
  }
}

function _readOwner(path: string): FileLockOwner | 'missing' | 'unreadable' {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'missing' : 'unreadable';
  }
  try {
    const owner = JSON.parse(text) as FileLockOwner;
    return typeof owner.pid === 'number' && typeof owner.nonce === 'string' && typeof owner.host === 'string'
      ? owner
      : 'unreadable';
  } catch {
    return 'unreadable';
  }
}

function _holder(owner: FileLockOwner | 'unreadable'): string {
  if (owner === 'unreadable') return 'process (its lock file cannot be read yet)';
  const since = Number.isFinite(owner.since) ? new Date(owner.since).toISOString() : 'an unknown time';
  const where = owner.host === THIS_PROCESS.host ? '' : ` on host ${owner.host}`;
  return `process: pid ${owner.pid}${where}, since ${since}`;
}

function _ageMs(path: string): number {
  try {
    return Date.now() - statSync(path).mtimeMs;
  } catch {
    return 0;
  }
}

function _quiet(fn: () => void): void {
  try {
    fn();
  } catch {
    // best effort
  }
}
