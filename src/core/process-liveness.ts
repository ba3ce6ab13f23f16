/**
 * @module
 * Is the process that wrote a lock file still there? A pid alone is not enough (pids
 * are reused), so an owner records its host, the boot id and its start time
 * (/proc/PID/stat field 22); a reused pid has another start time. Used by the mailbox
 * lock and by the one-writer lock of a results file.
 */
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';

/** Who holds a lock, as its owner wrote it. */
export interface ProcessIdentity {
  pid: number;
  host: string;
  /** /proc/sys/kernel/random/boot_id ('' where there is none). */
  boot: string;
  /** Start time in clock ticks since boot ('' where /proc is not there). */
  start: string;
}

/** This process. */
export const THIS_PROCESS: Readonly<ProcessIdentity> = Object.freeze({
  pid: process.pid,
  host: hostname(),
  boot: bootId(),
  start: processStartTime(process.pid) ?? '',
});

/**
 * True when `owner` is known to be gone: on this host and boot, its pid is dead, a
 * zombie, or another process; or it ran before this boot. An owner on another host
 * is never known to be gone (its processes cannot be seen from here).
 */
export function ownerIsGone(owner: ProcessIdentity): boolean {
  if (owner.host !== THIS_PROCESS.host) return false;
  if (owner.boot && THIS_PROCESS.boot && owner.boot !== THIS_PROCESS.boot) return true;
  if (process.platform !== 'linux') return !pidAlive(owner.pid);
  const start = processStartTime(owner.pid);
  return start === undefined || (owner.start !== '' && start !== owner.start);
}

/** Field 22 of /proc/PID/stat (start time in clock ticks); undefined for a dead or zombie process. */
export function processStartTime(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (fields[0] === 'Z' || fields[0] === 'X') return undefined;
    return fields[19];
  } catch {
    return process.platform === 'linux' ? undefined : '';
  }
}

export function bootId(): string {
  try {
    return readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
  } catch {
    return '';
  }
}

export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
