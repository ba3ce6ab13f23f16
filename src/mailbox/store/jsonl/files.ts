/**
 * @module
 * The JSONL store's files: append descriptors kept open between commits (and
 * checked once per commit to still be the file at that name, so a file replaced by a
 * link is refused, not written through), read cursors, and cutting a torn last line.
 */
import { closeSync, fstatSync, ftruncateSync, lstatSync, readSync } from 'node:fs';
import { join } from 'node:path';
import { parseStrictJson } from '../../../core/strict-json.js';
import { APPEND, openInside, READ, readSmall, replaceFile } from '../files.js';
import { scanLines } from '../lines.js';
import { parseMessage } from '../ops.js';

export interface Cursor {
  /** Bytes of the inbox already read. */
  offset: number;
  delivered: number;
  updated_at: string;
}

export const NO_CURSOR: Cursor = { offset: 0, delivered: 0, updated_at: '' };
export const LOG = 'calls.jsonl';
export const inboxRel = (agent: string) => `inbox/${agent}.jsonl`;
export const cursorRel = (agent: string) => `cursors/${agent}.json`;

export class JsonlFiles {
  private readonly fds = new Map<string, number>();
  private readonly checked = new Set<string>();

  constructor(readonly dir: string) {}

  /** Starts a commit: each kept descriptor is checked again, once, before it is used. */
  newCommit(): void {
    this.checked.clear();
  }

  /** The append descriptor of a mailbox file (created if missing), never through a link. */
  fd(rel: string): number {
    let fd = this.fds.get(rel);
    if (fd !== undefined && !this.checked.has(rel) && !this.stillAt(rel, fd)) {
      this.fds.delete(rel);
      closeSync(fd);
      fd = undefined;
    }
    if (fd === undefined) {
      fd = openInside(this.dir, rel, APPEND)!;
      this.fds.set(rel, fd);
    }
    this.checked.add(rel);
    return fd;
  }

  /** How far `agent` has read; a damaged cursor reads as "nothing read" (messages are delivered again, not lost). */
  readCursor(agent: string): Cursor {
    const text = readSmall(this.dir, cursorRel(agent));
    if (!text) return NO_CURSOR;
    try {
      const c = parseStrictJson(text) as Partial<Cursor>;
      if (!Number.isSafeInteger(c.offset) || (c.offset as number) < 0) return NO_CURSOR;
      const delivered = Number.isSafeInteger(c.delivered) && (c.delivered as number) >= 0 ? (c.delivered as number) : 0;
      return {
        offset: c.offset as number,
        delivered,
        updated_at: typeof c.updated_at === 'string' ? c.updated_at : '',
      };
    } catch {
      return NO_CURSOR;
    }
  }

  /** The cursor file's exact text (null: none), for an intent. */
  cursorText(agent: string): string | null {
    return readSmall(this.dir, cursorRel(agent)) ?? null;
  }

  writeCursor(agent: string, cursor: Cursor): void {
    replaceFile(this.dir, cursorRel(agent), JSON.stringify(cursor), { syncFolder: false }); // the commit syncs cursors/ once
  }

  /** Cuts a torn last line (a crash without an intent, e.g. power loss); returns the size. */
  cleanTail(rel: string): number {
    const fd = this.fd(rel);
    const size = fstatSync(fd).size;
    const keep = afterLastNewline(fd, size);
    if (keep < size) ftruncateSync(fd, keep);
    return keep;
  }

  close(): void {
    for (const fd of this.fds.values()) closeSync(fd);
    this.fds.clear();
  }

  private stillAt(rel: string, fd: number): boolean {
    try {
      const now = lstatSync(join(this.dir, rel));
      const open = fstatSync(fd);
      return now.isFile() && now.ino === open.ino && now.dev === open.dev;
    } catch {
      return false;
    }
  }
}

/**
 * Is there a readable message after `offset`? Only complete lines count (a torn
 * tail is a write in progress or a crash's leftover) and damaged lines do not, so
 * a waiter polling this never fetches for nothing. Reads without the lock.
 */
export function hasMessageAfter(dir: string, rel: string, offset: number): boolean {
  const fd = openInside(dir, rel, READ);
  if (fd === undefined) return false;
  try {
    let found = false;
    scanLines(fd, offset, (line) => {
      found = parseMessage(line.text) !== undefined;
      return !found;
    });
    return found;
  } finally {
    closeSync(fd);
  }
}

/** The offset just past the file's last newline (0 if none), reading backwards a page at a time. */
export function afterLastNewline(fd: number, size: number): number {
  if (size === 0) return 0;
  const last = Buffer.alloc(1);
  readSync(fd, last, 0, 1, size - 1);
  if (last[0] === 0x0a) return size; // the usual case: one byte read
  const page = Buffer.allocUnsafe(Math.min(64 * 1024, Math.max(size, 1)));
  for (let end = size; end > 0; ) {
    const start = Math.max(0, end - page.length);
    const n = readSync(fd, page, 0, end - start, start);
    const at = page.subarray(0, n).lastIndexOf(0x0a);
    if (at >= 0) return start + at + 1;
    end = start;
  }
  return 0;
}
