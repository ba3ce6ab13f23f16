/**
 * @module
 * The per-recipient quota (limits.ts): at most so many unread messages and unread
 * bytes per inbox, so no sender can fill another agent's inbox until it cannot be
 * read. Counting the unread part of an inbox on every send would cost as much as the
 * inbox; `UnreadTracker` remembers what it counted and counts only what changed
 * since — lines appended, and lines the reader has moved past.
 */
import { WitnessError } from '../../core/errors.js';

export interface Quota {
  /** Unread messages per recipient (0: no limit). */
  maxUnreadMessages: number;
  /** Unread bytes per recipient, as stored (0: no limit). */
  maxUnreadBytes: number;
}

export interface Count {
  messages: number;
  bytes: number;
}

/** Counts the stored records after position `from` up to and including `to` (bytes or row positions). */
export type Counter = (from: number, to: number) => Count;

export class UnreadTracker {
  private readonly seen = new Map<string, { from: number; to: number; count: Count }>();

  constructor(readonly quota: Quota) {}

  get active(): boolean {
    return this.quota.maxUnreadMessages > 0 || this.quota.maxUnreadBytes > 0;
  }

  /** What `agent` has unread between its read position `cursor` and the end of its inbox. */
  unread(agent: string, cursor: number, end: number, count: Counter): Count {
    let s = this.seen.get(agent);
    if (s && cursor > s.from && cursor <= s.to) {
      // The reader moved on: subtract what it read instead of counting what is left.
      const read = count(s.from, cursor);
      s = { from: cursor, to: s.to, count: { messages: s.count.messages - read.messages, bytes: s.count.bytes - read.bytes } };
    }
    if (!s || s.from !== cursor || end < s.to) s = { from: cursor, to: cursor, count: { messages: 0, bytes: 0 } };
    if (end > s.to) {
      const added = count(s.to, end);
      s = { from: s.from, to: end, count: { messages: s.count.messages + added.messages, bytes: s.count.bytes + added.bytes } };
    }
    this.seen.set(agent, s);
    return s.count;
  }

  /** Drops what was counted (after a rollback, or when the files may have changed under us). */
  forget(): void {
    this.seen.clear();
  }
}

/** Refuses a message of `bytes` to `to` when it would pass either limit; says who, which limit and what to do. */
export function checkQuota(quota: Quota, to: string, unread: Count, bytes: number): void {
  const { maxUnreadMessages: maxMessages, maxUnreadBytes: maxBytes } = quota;
  const data = { recipient: to, unread_messages: unread.messages, unread_bytes: unread.bytes };
  if (maxMessages > 0 && unread.messages + 1 > maxMessages) {
    throw new WitnessError('ABORTED', `${to}'s inbox is full: ${to} has ${unread.messages} unread messages and the limit is ${maxMessages} per recipient. Nothing was stored. Wait until ${to} reads its mail, then send again (the server's operator can raise --max-unread-messages).`, { data });
  }
  if (maxBytes > 0 && unread.bytes + bytes > maxBytes) {
    throw new WitnessError('ABORTED', `${to}'s inbox is full: ${to} has ${unread.bytes} unread bytes, and this message (${bytes} bytes) would pass the limit of ${maxBytes} per recipient. Nothing was stored. Wait until ${to} reads its mail, or send less, then send again (the server's operator can raise --max-unread-bytes).`, { data });
  }
}
