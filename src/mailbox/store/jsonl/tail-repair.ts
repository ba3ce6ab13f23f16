/**
 * @module
 * Undoing what a JSONL writer that died holding the lock left unfinished — whether its
 * process died (its writes are in the page cache) or the machine did (pages may be
 * missing or have landed out of order).
 *
 * The rule is a floor, not the intent: recovery never cuts a complete call-log line
 * whose receipt verifies under the mailbox key and whose inbox lines are present, nor an
 * inbox line such a line receipts. Only what lies past that — a torn or garbled line, a
 * line no key signed, an inbox line whose receipt never landed — is cut. The store
 * writes inbox lines (synced) before their receipts and moves cursors only after the
 * receipts are synced, so an honest crash mid-commit is still undone: whatever of it
 * has no complete receipt goes, and a commit all of whose receipts landed is kept
 * (its callers got no answer; a retry with the same idempotency key finds it). A lock
 * file lies in a folder agents may be able to write: what its intent says only tells
 * where to start looking (lock-intent.ts), and no intent, forged or not, can make
 * recovery cut an acknowledged entry. Cursors are never rewritten here: one only ever
 * moved after its read's receipt was durable.
 *
 * Files are read a page at a time (store/lines.ts) and opened without following links,
 * only under the names the store writes (store/files.ts).
 */
import { closeSync, existsSync, fdatasyncSync, fstatSync, ftruncateSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Verifier } from '../../../attest/signature.js';
import { WitnessError } from '../../../core/errors.js';
import { genuineCall } from '../../call-check.js';
import type { CallRecord } from '../../call-log.js';
import { isMailboxFile, openInside, READ, UPDATE } from '../files.js';
import { scanLines } from '../lines.js';
import { parseMessage } from '../ops.js';

const LOG = 'calls.jsonl';
/** Lines at the end of a file looked at first (more when none of them is kept). */
const FIRST_WINDOW = 1024;

export interface TailRepair {
  /** The seq of the last call-log line kept as genuine; undefined when none was looked at. */
  lastSeq: number | undefined;
  /** Bytes cut, by file. */
  cut: Record<string, number>;
}

/**
 * Cuts the unfinished tails of the mailbox's files. `starts` (a genuine intent's sizes)
 * says where each file's unfinished part may begin and which inboxes it touched; without
 * it every file is looked at from its first byte. Nothing at or before the floor is cut.
 */
export function repairTails(dir: string, verifier: Verifier, starts?: Record<string, number>): TailRepair {
  const cut: Record<string, number> = {};
  const logFrom = starts?.[LOG] ?? 0;
  let lastSeq: number | undefined;
  let logEnd = 0;
  _withFile(dir, LOG, UPDATE, (fd) => {
    const floor = _logFloor(dir, fd, logFrom, verifier);
    lastSeq = floor.seq;
    logEnd = floor.end;
    _cutTo(fd, floor.end, LOG, cut);
  });
  for (const [rel, from] of _inboxes(dir, starts)) {
    _withFile(dir, rel, UPDATE, (fd) =>
      _cutUnreceipted(dir, fd, from, verifier, starts ? logFrom : 0, logEnd, rel, cut),
    );
  }
  return { lastSeq, cut };
}

/** The inboxes to look at, each with where to start. */
function _inboxes(dir: string, starts?: Record<string, number>): Array<[string, number]> {
  if (starts) return Object.entries(starts).filter(([rel]) => rel !== LOG && rel.startsWith('inbox/'));
  const inboxDir = join(dir, 'inbox');
  if (!existsSync(inboxDir)) return [];
  return readdirSync(inboxDir)
    .map((name) => `inbox/${name}`)
    .filter(isMailboxFile)
    .map((rel) => [rel, 0]);
}

/**
 * Where the call log's kept part ends: just past the last complete line (from `from`
 * on) that is genuine and whose messages are in their inboxes. Looks at the last lines
 * first, a window at a time; lines before the window looked at are kept.
 */
function _logFloor(dir: string, fd: number, from: number, verifier: Verifier): { end: number; seq?: number } {
  const ring: Array<{ start: number; end: number }> = [];
  let before = from; // lines before the ring are kept
  scanLines(fd, from, (line) => {
    ring.push({ start: line.start, end: line.end });
    if (ring.length > FIRST_WINDOW) before = ring.shift()!.end;
  });
  for (let i = ring.length - 1; i >= 0; i--) {
    const record = genuineCall(_lineAt(fd, ring[i]!.start), verifier);
    if (record && _inboxesHold(dir, record)) return { end: ring[i]!.end, seq: record.seq };
  }
  return { end: before };
}

/** A send's messages are in their inboxes (other calls store nothing). */
function _inboxesHold(dir: string, record: CallRecord): boolean {
  if (record.tool !== 'send_message' || !record.ok || record.deduplicated) return true;
  return record.message_ids.every((id, k) => {
    const rel = `inbox/${record.to?.[k] ?? ''}.jsonl`;
    if (!isMailboxFile(rel)) return false;
    let found = false;
    _withFile(dir, rel, READ, (fd) => {
      scanLines(fd, 0, (line) => {
        found = line.text?.includes(id) === true && parseMessage(line.text)?.id === id;
        return !found;
      });
    });
    return found;
  });
}

/** Cuts the inbox lines past `from` after the last one a kept genuine receipt names, looking at ever more of them. */
function _cutUnreceipted(
  dir: string,
  fd: number,
  from: number,
  verifier: Verifier,
  logFrom: number,
  logEnd: number,
  rel: string,
  cut: Record<string, number>,
): void {
  for (let window = FIRST_WINDOW; ; window *= 8) {
    let tail: Array<{ id: string; end: number }> = [];
    let lines = 0;
    scanLines(fd, from, (line) => {
      lines++;
      tail.push({ id: parseMessage(line.text)?.id ?? '', end: line.end });
      if (tail.length >= 2 * window) tail.splice(0, window);
    });
    tail = tail.slice(-window);
    const receipted = _receiptedAmong(
      dir,
      new Set(tail.map((t) => t.id).filter((id) => id !== '')),
      verifier,
      logFrom,
      logEnd,
    );
    let keep = tail.length;
    while (keep > 0 && !receipted.has(tail[keep - 1]!.id)) keep--;
    if (keep > 0 || lines <= window) {
      _cutTo(fd, keep > 0 ? tail[keep - 1]!.end : from, rel, cut);
      return;
    }
  }
}

/** Which of `ids` a genuine send receipt in the log's kept part names (only those are kept in memory). */
function _receiptedAmong(dir: string, ids: Set<string>, verifier: Verifier, from: number, end: number): Set<string> {
  const found = new Set<string>();
  if (ids.size === 0) return found;
  _withFile(dir, LOG, READ, (fd) => {
    scanLines(fd, from, (line) => {
      if (line.end > end) return false;
      const named = _sentIds(line.text).filter((id) => ids.has(id));
      if (named.length > 0 && genuineCall(line.text, verifier)) for (const id of named) found.add(id);
      return true;
    });
  });
  return found;
}

function _lineAt(fd: number, at: number): string | undefined {
  let text: string | undefined;
  scanLines(fd, at, (line) => {
    text = line.text;
    return false;
  });
  return text;
}

/** Runs `fn` on a mailbox file; skips one that is missing or not a regular file (a link or a folder planted under a mailbox name is not ours). */
function _withFile(dir: string, rel: string, flags: number, fn: (fd: number) => void): void {
  let fd: number | undefined;
  try {
    fd = openInside(dir, rel, flags);
  } catch (error) {
    if (error instanceof WitnessError) return;
    throw error;
  }
  if (fd === undefined) return;
  try {
    fn(fd);
  } finally {
    closeSync(fd);
  }
}

function _cutTo(fd: number, size: number, rel: string, cut: Record<string, number>): void {
  const now = fstatSync(fd).size;
  if (now <= size) return;
  ftruncateSync(fd, size);
  fdatasyncSync(fd);
  cut[rel] = now - size;
}

/** The message ids a call-log line receipts as sent ([] for other lines). */
function _sentIds(line: string | undefined): string[] {
  if (line === undefined || !line.includes('"send_message"')) return [];
  let record: { tool?: unknown; ok?: unknown; message_ids?: unknown };
  try {
    record = JSON.parse(line) as typeof record;
  } catch {
    return [];
  }
  if (typeof record !== 'object' || record === null) return [];
  if (record.tool !== 'send_message' || record.ok !== true || !Array.isArray(record.message_ids)) return [];
  return record.message_ids.filter((id): id is string => typeof id === 'string');
}
