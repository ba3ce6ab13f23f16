/**
 * @module
 * A cross-process lock on a mailbox directory, without fcntl (Node has no binding):
 * the lock is a file created with O_EXCL (`.lock`) holding its owner's pid, boot id
 * and process start time. A waiter that finds the owner dead (no such process, a
 * zombie, or a pid reused by another process) breaks the lock — under a second,
 * mkdir-based guard (`.lock.break`) so two waiters never both break it.
 *
 * Before writing, the holder records an *intent* in the lock file, signed with the
 * mailbox key (lock-intent.ts): each file's size before the write and the last seq it
 * adds. Breaking a dead owner's lock cuts what its write left unfinished
 * (tail-repair.ts): a torn line, an inbox line without its receipt. Never more: a
 * holder answers its callers only after it has released the lock, so nothing past the
 * intent was acknowledged — but the lock file lies in a folder agents may be able to
 * write, and an owner from an earlier boot died with the machine (its lock may be a
 * finished commit's). So recovery never cuts a complete entry whose receipt verifies,
 * whatever the intent says; a forged or stale intent is reported, not obeyed.
 */
import { randomBytes } from 'node:crypto';
import { closeSync, mkdirSync, openSync, rmdirSync, statSync, unlinkSync } from 'node:fs';
import { hostname } from 'node:os';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { WitnessError } from '../../../core/errors.js';
import { bootId, pidAlive, processStartTime } from '../../../core/process-liveness.js';
import type { Signer, Verifier } from '../../../attest/signature.js';
import { intentLine, readIntent, type SignedIntent } from './lock-intent.js';
import { repairTails } from './tail-repair.js';
import { readSmall, writeAll, writeFailure } from '../files.js';

const LOCK = '.lock';
const BREAK = '.lock.break';
/** An owner record we cannot parse is trusted this long (it may be mid-write). */
const UNREADABLE_GRACE_MS = 10_000;

export interface LockHandle {
  /** Records, signed, where this process's write begins, in case it dies before `release`. */
  setIntent(intent: SignedIntent): void;
  release(): void;
}

/** What breaking a dead writer's lock found and did. */
export interface Recovery {
  /** The lock's intent: signed by the mailbox key, none (the owner wrote none, or it was lost), forged, or stale (an earlier commit's). */
  intent: 'signed' | 'none' | 'forged' | 'stale';
  /** Bytes cut, by file (only unfinished tails: tail-repair.ts). */
  cut: Record<string, number>;
  /** Set for a forged or stale intent: what was wrong; recovery did not obey it. */
  problem?: string;
}

interface Owner {
  pid: number;
  host: string;
  boot: string;
  start: string;
  nonce: string;
  since: number;
  /** The lines after the owner's (intent lines; the last complete one counts). */
  rest: string[];
}

const SELF: Omit<Owner, 'nonce' | 'since' | 'rest'> = {
  pid: process.pid,
  host: hostname(),
  boot: bootId(),
  start: processStartTime(process.pid) ?? '',
};
/** The owner record is this prefix plus a nonce and a time: built once, since a lock is taken per commit. */
const OWNER_PREFIX = JSON.stringify(SELF).slice(0, -1);
/** Nonces need only tell successive owners apart: a random per-process part and a counter. */
const PROCESS_NONCE = randomBytes(6).toString('hex');
let acquisitions = 0;

/** Takes the lock, breaking a dead owner's (which needs the mailbox key: its intent is signed). */
export async function acquireLock(dir: string, signer: Signer, timeoutMs = 30_000): Promise<LockHandle> {
  const path = join(dir, LOCK);
  const deadline = Date.now() + timeoutMs;
  let delay = 1;
  for (;;) {
    const handle = tryLock(dir, signer);
    if (handle) return handle;
    if (breakIfStale(dir, signer)) continue;
    if (Date.now() > deadline) {
      throw new WitnessError(
        'TIMEOUT',
        `Timed out after ${timeoutMs} ms waiting for the mailbox lock ${path}, held by a live process (${_describe(path)}).`,
      );
    }
    await sleep(delay + Math.random() * delay);
    delay = Math.min(delay * 2, 8);
  }
}

/** One attempt; undefined when another process holds the lock. */
export function tryLock(dir: string, signer: Signer): LockHandle | undefined {
  const path = join(dir, LOCK);
  let fd: number;
  try {
    fd = openSync(path, 'wx', 0o644);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return undefined;
    throw writeFailure(error, dir, path);
  }
  const nonce = `${PROCESS_NONCE}-${++acquisitions}`;
  try {
    writeAll(fd, Buffer.from(`${OWNER_PREFIX},"nonce":"${nonce}","since":${Date.now()}}\n`));
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
      writeAll(fd, Buffer.from(`${intentLine(signer, nonce, intent)}\n`));
    },
    release() {
      if (released) return;
      released = true;
      unlinkSync(path);
      closeSync(fd);
    },
  };
}

/** Breaks the lock if its owner is dead, cutting what the owner's write left unfinished; undefined when there was nothing to break. */
export function breakIfStale(dir: string, verifier: Verifier): Recovery | undefined {
  const path = join(dir, LOCK);
  const seen = _readOwner(path);
  if (seen === 'missing' || !_isStale(path, seen)) return undefined;
  const guard = join(dir, BREAK);
  try {
    mkdirSync(guard);
  } catch {
    // Someone else is breaking it; a guard left by a breaker that died is removed after a grace period.
    if (_ageMs(guard) > UNREADABLE_GRACE_MS) _quiet(() => rmdirSync(guard));
    return undefined;
  }
  try {
    const now = _readOwner(path);
    if (now === 'missing') return { intent: 'none', cut: {} };
    if (now === 'unreadable' ? seen !== 'unreadable' : seen === 'unreadable' || now.nonce !== seen.nonce)
      return undefined;
    // No intent (its owner died before writing one, or a power loss took the lock
    // file's content), or one we cannot believe: repair from the files themselves.
    const recovery = _recover(
      dir,
      verifier,
      now === 'unreadable' ? { status: 'none' } : readIntent(now.rest, now.nonce, verifier),
    );
    unlinkSync(path);
    return recovery;
  } finally {
    _quiet(() => rmdirSync(guard));
  }
}

function _recover(dir: string, verifier: Verifier, read: ReturnType<typeof readIntent>): Recovery {
  if (read.status !== 'signed') {
    const { cut } = repairTails(dir, verifier);
    if (read.status === 'none') return { intent: 'none', cut };
    return {
      intent: 'forged',
      cut,
      problem: `the lock file ${join(dir, LOCK)} held an intent that was not obeyed: ${read.why}. Only unfinished tails were cut (lines without a genuine receipt); nothing acknowledged was removed. Someone who can write the mailbox folder may have planted it.`,
    };
  }
  const { cut, lastSeq } = repairTails(dir, verifier, read.intent.files);
  if (lastSeq === undefined || lastSeq <= read.intent.to) return { intent: 'signed', cut };
  return {
    intent: 'stale',
    cut,
    problem: `the lock file ${join(dir, LOCK)} held a genuine intent of an earlier write (it ends at call ${read.intent.to}, the log holds genuine calls up to ${lastSeq}): it was copied there, and was not obeyed. Only unfinished tails were cut; nothing acknowledged was removed.`,
  };
}

/** True when a lock file exists whose owner is gone (an interrupted writer). */
export function hasStaleLock(dir: string): boolean {
  const path = join(dir, LOCK);
  const owner = _readOwner(path);
  return owner !== 'missing' && _isStale(path, owner);
}

/**
 * The intent of the lock file as recovery would read it, whoever holds it (undefined:
 * no lock): `stale` when its owner is gone. A writer at work signs its intent too, so
 * an intent the mailbox key did not sign is forged whether or not the owner looks alive.
 */
export function lockIntent(
  dir: string,
  verifier: Verifier,
): { stale: boolean; owner: string; intent: ReturnType<typeof readIntent> } | undefined {
  const path = join(dir, LOCK);
  const owner = _readOwner(path);
  if (owner === 'missing') return undefined;
  const stale = _isStale(path, owner);
  if (owner === 'unreadable') return { stale, owner: 'an unreadable owner', intent: { status: 'none' } };
  return { stale, owner: `pid ${owner.pid} on ${owner.host}`, intent: readIntent(owner.rest, owner.nonce, verifier) };
}

/** Lock times further ahead of this clock than another host's clock may run are no writer's: a planted lock's. */
const FUTURE_SKEW_MS = 10 * 60_000;

function _isStale(path: string, owner: Owner | 'unreadable'): boolean {
  const fileAge = _ageMs(path);
  if (fileAge < -FUTURE_SKEW_MS) return true;
  if (owner === 'unreadable') return fileAge > UNREADABLE_GRACE_MS;
  if (owner.since - Date.now() > FUTURE_SKEW_MS) return true;
  // Another host's processes cannot be seen: its lock is stale once neither its record nor the file changed for a minute.
  if (owner.host !== SELF.host) return Math.min(Date.now() - owner.since, fileAge) > 60_000;
  if (owner.boot && SELF.boot && owner.boot !== SELF.boot) return true;
  if (process.platform !== 'linux') return !pidAlive(owner.pid);
  // A writer on this host records its start time whenever this process can read one: a record without it is no writer's.
  if (owner.start === '' && SELF.start !== '') return true;
  const start = processStartTime(owner.pid);
  return start === undefined || (owner.start !== '' && start !== owner.start);
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
    if (
      typeof owner.pid !== 'number' ||
      typeof owner.nonce !== 'string' ||
      typeof owner.host !== 'string' ||
      typeof owner.start !== 'string' ||
      !Number.isFinite(owner.since)
    )
      return 'unreadable';
    return { ...owner, rest };
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
