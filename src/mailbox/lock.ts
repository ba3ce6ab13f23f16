/**
 * @module
 * A cross-process lock on a mailbox directory, without fcntl (Node has no binding):
 * the lock is a file created with O_EXCL (`.lock`) holding its owner's pid, boot id
 * and process start time. A waiter that finds the owner dead (no such process, a
 * zombie, or a pid reused by another process) breaks the lock — under a second,
 * mkdir-based guard (`.lock.break`) so two waiters never both break it.
 *
 * Before writing, the holder records an *intent* in the lock file: each file's size
 * and each cursor's content before the write. Breaking a dead owner's lock rolls its
 * files back to that intent, so a writer killed mid-commit leaves no half transaction
 * (an inbox line without its call-log receipt, or a torn line). That is safe because
 * a holder answers its callers only after it has released the lock: nothing rolled
 * back was ever acknowledged. An owner from an earlier boot died with the machine;
 * its lock may be a finished commit's, so power-loss.ts decides from what is on disk.
 *
 * An intent that names anything but mailbox files counts as none (rollback.ts): the
 * lock file lies in a folder agents may be able to write.
 */
import { randomBytes } from 'node:crypto';
import { closeSync, mkdirSync, openSync, rmdirSync, statSync, unlinkSync } from 'node:fs';
import { hostname } from 'node:os';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { WitnessError } from '../core/errors.js';
import { bootId, pidAlive, processStartTime } from '../core/process-liveness.js';
import { cutUnreceiptedTails, rollBackAfterPowerLoss } from './power-loss.js';
import { type LockIntent, rollBack, trustedIntent } from './rollback.js';
import { readSmall, writeAll, writeFailure } from './store/files.js';

const LOCK = '.lock';
const BREAK = '.lock.break';
/** An owner record we cannot parse is trusted this long (it may be mid-write). */
const UNREADABLE_GRACE_MS = 10_000;


export interface LockHandle {
  /** Records what to roll back to if this process dies before `release`. */
  setIntent(intent: LockIntent): void;
  release(): void;
}

interface Owner {
  pid: number;
  host: string;
  boot: string;
  start: string;
  nonce: string;
  since: number;
  intent?: LockIntent;
}

const SELF: Omit<Owner, 'nonce' | 'since'> = { pid: process.pid, host: hostname(), boot: bootId(), start: processStartTime(process.pid) ?? '' };
/** The owner record is this prefix plus a nonce and a time: built once, since a lock is taken per commit. */
const OWNER_PREFIX = JSON.stringify(SELF).slice(0, -1);
/** Nonces need only tell successive owners apart: a random per-process part and a counter. */
const PROCESS_NONCE = randomBytes(6).toString('hex');
let acquisitions = 0;

export async function acquireLock(dir: string, timeoutMs = 30_000): Promise<LockHandle> {
  const path = join(dir, LOCK);
  const deadline = Date.now() + timeoutMs;
  let delay = 1;
  for (;;) {
    const handle = tryLock(dir);
    if (handle) return handle;
    if (breakIfStale(dir)) continue;
    if (Date.now() > deadline) {
      throw new WitnessError('ABORTED', `Timed out after ${timeoutMs} ms waiting for the mailbox lock ${path}, held by a live process (${_describe(path)}).`);
    }
    await sleep(delay + Math.random() * delay);
    delay = Math.min(delay * 2, 8);
  }
}

/** One attempt; undefined when another process holds the lock. */
export function tryLock(dir: string): LockHandle | undefined {
  const path = join(dir, LOCK);
  let fd: number;
  try {
    fd = openSync(path, 'wx', 0o644);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return undefined;
    throw writeFailure(error, dir, path);
  }
  try {
    writeAll(fd, Buffer.from(`${OWNER_PREFIX},"nonce":"${PROCESS_NONCE}-${++acquisitions}","since":${Date.now()}}\n`));
  } catch (error) {
    // A lock without its owner record would hold everyone off for the grace period.
    unlinkSync(path);
    closeSync(fd);
    throw writeFailure(error, dir, path);
  }
  let released = false;
  return {
    // Appended as a second line, never by truncating: ext4 flushes a file on close
    // after a truncate-to-zero (auto_da_alloc), which cost ~2 ms per commit. A torn
    // intent line (disk full) is read as none: nothing was written after it.
    setIntent(intent) {
      writeAll(fd, Buffer.from(`${JSON.stringify({ intent })}\n`));
    },
    release() {
      if (released) return;
      released = true;
      unlinkSync(path);
      closeSync(fd);
    },
  };
}

/** Breaks the lock if its owner is dead, rolling back the owner's unfinished write. */
export function breakIfStale(dir: string): boolean {
  const path = join(dir, LOCK);
  const seen = _readOwner(path);
  if (seen === 'missing' || !_isStale(path, seen)) return false;
  const guard = join(dir, BREAK);
  try {
    mkdirSync(guard);
  } catch {
    // Someone else is breaking it; a guard left by a breaker that died is removed after a grace period.
    if (_ageMs(guard) > UNREADABLE_GRACE_MS) _quiet(() => rmdirSync(guard));
    return false;
  }
  try {
    const now = _readOwner(path);
    if (now === 'missing') return true;
    if (now === 'unreadable' ? seen !== 'unreadable' : seen === 'unreadable' || now.nonce !== seen.nonce) return false;
    if (now !== 'unreadable' && now.intent) {
      if (_diedWithMachine(now)) rollBackAfterPowerLoss(dir, now.intent.files);
      else rollBack(dir, now.intent);
    } else {
      // No intent to go by: its owner died before writing one (then it wrote
      // nothing), or a power loss took the lock file's content. Repair from the
      // files themselves.
      cutUnreceiptedTails(dir);
    }
    unlinkSync(path);
    return true;
  } finally {
    _quiet(() => rmdirSync(guard));
  }
}

/** True when a lock file exists whose owner is gone (an interrupted writer). */
export function hasStaleLock(dir: string): boolean {
  const path = join(dir, LOCK);
  const owner = _readOwner(path);
  return owner !== 'missing' && _isStale(path, owner);
}

function _isStale(path: string, owner: Owner | 'unreadable'): boolean {
  if (owner === 'unreadable') return _ageMs(path) > UNREADABLE_GRACE_MS;
  if (owner.host !== SELF.host) return Date.now() - owner.since > 60_000; // cannot see its processes
  if (owner.boot && SELF.boot && owner.boot !== SELF.boot) return true;
  if (process.platform !== 'linux') return !pidAlive(owner.pid);
  const start = processStartTime(owner.pid);
  return start === undefined || (owner.start !== '' && start !== owner.start);
}

/** The owner ran before this boot (or on another host): the page cache it wrote may be gone. */
function _diedWithMachine(owner: Owner): boolean {
  return owner.host !== SELF.host || (owner.boot !== '' && SELF.boot !== '' && owner.boot !== SELF.boot);
}

function _readOwner(path: string): Owner | 'missing' | 'unreadable' {
  let text: string | undefined;
  try {
    text = readSmall(dirname(path), LOCK, 16 << 20); // never through a link planted as .lock
  } catch {
    return 'unreadable';
  }
  if (text === undefined) return 'missing';
  const [first, ...rest] = text.split('\n');
  try {
    const owner = JSON.parse(first ?? '') as Owner;
    if (typeof owner.pid !== 'number' || typeof owner.nonce !== 'string') return 'unreadable';
    // The last complete intent line wins; a torn one (the owner died writing it) means
    // no write had started. One that names anything but mailbox files is no intent.
    for (const line of rest.reverse()) {
      try {
        const { intent } = JSON.parse(line) as { intent?: unknown };
        if (intent !== undefined) return trustedIntent(intent) ? { ...owner, intent } : owner;
      } catch {
        // torn
      }
    }
    return owner;
  } catch {
    return 'unreadable';
  }
}

function _ageMs(path: string): number {
  try {
    return Date.now() - statSync(path).mtimeMs;
  } catch {
    return 0;
  }
}

function _describe(path: string): string {
  const owner = _readOwner(path);
  return typeof owner === 'string' ? owner : `pid ${owner.pid} on ${owner.host}`;
}

function _quiet(fn: () => void): void {
  try {
    fn();
  } catch {
    // best effort: the next waiter retries
  }
}
