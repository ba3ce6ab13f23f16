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
 */
import { existsSync, readdirSync, statSync, truncateSync } from 'node:fs';
import { join } from 'node:path';
import { readFrom } from './store/files.js';

const LOG = 'calls.jsonl';

export function rollBackAfterPowerLoss(dir: string, files: Record<string, number>): void {
  const receipted = new Set<string>();
  const logStart = files[LOG];
  if (logStart !== undefined) {
    // Keep whole call-log lines up to the first that is not JSON: pages can land out
    // of order, and nothing after a garbled line was acknowledged.
    let keep = 0;
    for (const line of _wholeLines(_tail(join(dir, LOG), logStart)).lines) {
      const ids = _sentIds(line);
      if (ids === undefined) break;
      for (const id of ids) receipted.add(id);
      keep += Buffer.byteLength(line) + 1;
    }
    _cutTo(join(dir, LOG), logStart + keep);
  }
  for (const [rel, start] of Object.entries(files)) {
    if (rel === LOG) continue;
    const file = join(dir, rel);
    const whole = _wholeLines(_tail(file, start));
    let keep = 0;
    for (const line of whole.lines) {
      if (!receipted.has(_id(line))) break;
      keep += Buffer.byteLength(line) + 1;
    }
    _cutTo(file, start + keep);
  }
}

/**
 * The same repair without an intent (the lock file's content did not survive): a
 * torn call-log tail is cut, and so are inbox lines at the end of each inbox whose
 * `send_message` receipt is not in the call log. Such a line was never
 * acknowledged: receipts are written only after their inbox lines are synced.
 */
export function cutUnreceiptedTails(dir: string): void {
  const log = join(dir, LOG);
  const whole = _wholeLines(_tail(log, 0));
  _cutTo(log, whole.bytes);
  const receipted = new Set<string>();
  for (const line of whole.lines) for (const id of _sentIds(line) ?? []) receipted.add(id);
  const inboxDir = join(dir, 'inbox');
  if (!existsSync(inboxDir)) return;
  for (const name of readdirSync(inboxDir).filter((f) => f.endsWith('.jsonl'))) {
    const file = join(inboxDir, name);
    const { lines } = _wholeLines(_tail(file, 0));
    let keep = lines.length;
    while (keep > 0 && !receipted.has(_id(lines[keep - 1]!))) keep--;
    _cutTo(file, Buffer.byteLength(lines.slice(0, keep).map((l) => `${l}\n`).join('')));
  }
}

function _cutTo(file: string, size: number): void {
  if (existsSync(file) && statSync(file).size > size) truncateSync(file, size);
}

/** The file's text from byte `start` on ('' if it is missing or not longer). */
function _tail(file: string, start: number): string {
  return existsSync(file) ? readFrom(file, start) : '';
}

/** The complete lines of `text` and their byte length (a torn last line excluded). */
function _wholeLines(text: string): { lines: string[]; bytes: number } {
  const end = text.lastIndexOf('\n') + 1;
  const lines = text.slice(0, end).split('\n');
  lines.pop();
  return { lines, bytes: Buffer.byteLength(text.slice(0, end)) };
}

/** The message ids a call-log line receipts ([] for other calls); undefined if it is not JSON. */
function _sentIds(line: string): string[] | undefined {
  let record: { tool?: unknown; ok?: unknown; message_ids?: unknown };
  try {
    record = JSON.parse(line) as typeof record;
  } catch {
    return undefined;
  }
  if (record.tool !== 'send_message' || record.ok !== true || !Array.isArray(record.message_ids)) return [];
  return record.message_ids.filter((id): id is string => typeof id === 'string');
}

function _id(line: string): string {
  try {
    const id = (JSON.parse(line) as { id?: unknown }).id;
    return typeof id === 'string' ? id : '';
  } catch {
    return '';
  }
}
