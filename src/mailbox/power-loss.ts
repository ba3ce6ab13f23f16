/**
 * @module
 * Undoing an unfinished commit whose owner died with the machine (power loss, OS
 * crash), not just with its process.
 *
 * After a process dies, everything it wrote is still in the page cache and nothing
 * of the unfinished commit was acknowledged, so lock.ts rolls every file back to the
 * sizes in the intent. After a power loss that is wrong: the lock file may be the
 * last *completed* commit's (its removal had not reached the disk) and that commit
 * may have been acknowledged. What is on the disk tells the two apart, because the
 * store syncs inbox lines before it writes their receipts (store/jsonl.ts): an inbox
 * line past the intent is kept if its `send_message` receipt landed, and cut, with
 * everything after it, if not. The call log loses only a torn last line. Cursors
 * are left alone: one moves only after the receipts of its read have landed.
 *
 * Files are read a page at a time (store/lines.ts) and opened without following
 * links, only under the names the store writes (store/files.ts).
 */
import { closeSync, existsSync, fdatasyncSync, fstatSync, ftruncateSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { WitnessError } from '../core/errors.js';
import { isMailboxFile, openInside, UPDATE } from './store/files.js';
import { scanLines } from './store/lines.js';
import { parseMessage } from './store/ops.js';

const LOG = 'calls.jsonl';
/** Inbox lines at the end of each inbox checked for receipts at first (more if all of them lack one). */
const FIRST_WINDOW = 1024;

export function rollBackAfterPowerLoss(dir: string, files: Record<string, number>): void {
  const receipted = new Set<string>();
  const logStart = files[LOG];
  if (logStart !== undefined) {
    // Keep whole call-log lines up to the first that is not JSON: pages can land out
    // of order, and nothing after a garbled line was acknowledged.
    _withFile(dir, LOG, (fd) => {
      let keep = logStart;
      scanLines(fd, logStart, (line) => {
        const ids = _sentIds(line.text);
        if (ids === undefined) return false;
        for (const id of ids) receipted.add(id);
        keep = line.end;
        return true;
      });
      _cutTo(fd, keep);
    });
  }
  for (const [rel, start] of Object.entries(files)) {
    if (rel === LOG) continue;
    _withFile(dir, rel, (fd) => {
      let keep = start;
      scanLines(fd, start, (line) => {
        if (!receipted.has(_id(line.text))) return false;
        keep = line.end;
        return true;
      });
      _cutTo(fd, keep);
    });
  }
}

/**
 * The same repair without an intent (the lock file's content did not survive): a
 * torn call-log tail is cut, and so are inbox lines at the end of each inbox whose
 * `send_message` receipt is not in the call log. Such a line was never
 * acknowledged: receipts are written only after their inbox lines are synced.
 */
export function cutUnreceiptedTails(dir: string): void {
  _withFile(dir, LOG, (fd) => _cutTo(fd, scanLines(fd, 0, () => undefined)));
  const inboxDir = join(dir, 'inbox');
  if (!existsSync(inboxDir)) return;
  for (const name of readdirSync(inboxDir)) {
    const rel = `inbox/${name}`;
    if (isMailboxFile(rel)) _withFile(dir, rel, (fd) => _cutUnreceipted(dir, fd));
  }
}

/** Cuts the inbox lines at the end of `fd` that have no receipt, looking at ever more of them. */
function _cutUnreceipted(dir: string, fd: number): void {
  for (let window = FIRST_WINDOW; ; window *= 8) {
    let tail: Array<{ id: string; start: number }> = [];
    let lines = 0;
    const end = scanLines(fd, 0, (line) => {
      lines++;
      tail.push({ id: _id(line.text), start: line.start });
      if (tail.length >= 2 * window) tail.splice(0, window);
    });
    tail = tail.slice(-window);
    const receipted = _receiptedAmong(dir, new Set(tail.map((t) => t.id)));
    let keep = tail.length;
    while (keep > 0 && !receipted.has(tail[keep - 1]!.id)) keep--;
    if (keep > 0 || lines <= window) {
      _cutTo(fd, keep < tail.length ? tail[keep]!.start : end);
      return;
    }
  }
}

/** Which of `ids` the call log receipts as sent (only those are kept in memory). */
function _receiptedAmong(dir: string, ids: Set<string>): Set<string> {
  const found = new Set<string>();
  _withFile(dir, LOG, (fd) => {
    scanLines(fd, 0, (line) => {
      for (const id of _sentIds(line.text) ?? []) if (ids.has(id)) found.add(id);
    });
  });
  return found;
}

/** Runs `fn` on a mailbox file opened for update; skips one that is missing or not a regular file. */
function _withFile(dir: string, rel: string, fn: (fd: number) => void): void {
  let fd: number | undefined;
  try {
    fd = openInside(dir, rel, UPDATE);
  } catch (error) {
    if (error instanceof WitnessError) return; // a link or a folder planted under a mailbox name: not ours
    throw error;
  }
  if (fd === undefined) return;
  try {
    fn(fd);
  } finally {
    closeSync(fd);
  }
}

function _cutTo(fd: number, size: number): void {
  if (fstatSync(fd).size <= size) return;
  ftruncateSync(fd, size);
  fdatasyncSync(fd);
}

/** The message ids a call-log line receipts ([] for other calls); undefined if it is not JSON. */
function _sentIds(line: string | undefined): string[] | undefined {
  if (line === undefined) return undefined;
  let record: { tool?: unknown; ok?: unknown; message_ids?: unknown };
  try {
    record = JSON.parse(line) as typeof record;
  } catch {
    return undefined;
  }
  if (typeof record !== 'object' || record === null) return undefined;
  if (record.tool !== 'send_message' || record.ok !== true || !Array.isArray(record.message_ids)) return [];
  return record.message_ids.filter((id): id is string => typeof id === 'string');
}

function _id(line: string | undefined): string {
  return parseMessage(line)?.id ?? '';
}
