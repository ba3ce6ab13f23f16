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

interface _Seen {
  from: number;
  to: number;
  count: Count;
}

/** One update of an agent's tally: what it starts from and the ranges still to count. */
interface _Step {
  base: _Seen | undefined;
  cursor: number;
  end: number;
  read?: readonly [number, number];
  added?: readonly [number, number];
}

export class UnreadTracker {
  private readonly seen = new Map<string, _Seen>();

  constructor(readonly quota: Quota) {}

  get active(): boolean {
    return this.quota.maxUnreadMessages > 0 || this.quota.maxUnreadBytes > 0;
  }

  /** What `agent` has unread between its read position `cursor` and the end of its inbox. */
  unread(agent: string, cursor: number, end: number, count: Counter): Count {
    const step = this._step(agent, cursor, end);
    return this._finish(agent, step, step.read && count(...step.read), step.added && count(...step.added));
  }

  /** The same, counted by a store that must wait for its database. */
  async unreadAsync(
    agent: string,
    cursor: number,
    end: number,
    count: (from: number, to: number) => Promise<Count>,
  ): Promise<Count> {
    const step = this._step(agent, cursor, end);
    return this._finish(
      agent,
      step,
      step.read && (await count(...step.read)),
      step.added && (await count(...step.added)),
    );
  }

  /** What is known, and which ranges must be counted to bring it to (cursor, end). */
  private _step(agent: string, cursor: number, end: number): _Step {
    const s = this.seen.get(agent);
    // What was counted holds while the inbox has not shrunk under it (end ≥ s.to): if
    // the reader moved on, subtract what it read instead of counting what is left.
    const moved = s !== undefined && cursor > s.from && cursor <= s.to && end >= s.to;
    const base = s !== undefined && (moved || (s.from === cursor && end >= s.to)) ? s : undefined;
    const counted = base ? base.to : cursor;
    return {
      base,
      cursor,
      end,
      ...(moved ? { read: [s.from, cursor] as const } : {}),
      ...(end > counted ? { added: [counted, end] as const } : {}),
    };
  }

  private _finish(agent: string, step: _Step, read: Count | undefined, added: Count | undefined): Count {
    let count = step.base?.count ?? { messages: 0, bytes: 0 };
    if (read) count = { messages: count.messages - read.messages, bytes: count.bytes - read.bytes };
    if (added) count = { messages: count.messages + added.messages, bytes: count.bytes + added.bytes };
    this.seen.set(agent, { from: step.cursor, to: Math.max(step.cursor, step.end), count });
    return count;
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
    throw new WitnessError(
      'QUOTA_EXCEEDED',
      `${to}'s inbox is full: ${to} has ${unread.messages} unread messages and the limit is ${maxMessages} per recipient. Nothing was stored. Wait until ${to} reads its mail, then send again (the server's operator can raise --max-unread-messages).`,
      { data },
    );
  }
  if (maxBytes > 0 && unread.bytes + bytes > maxBytes) {
    throw new WitnessError(
      'QUOTA_EXCEEDED',
      `${to}'s inbox is full: ${to} has ${unread.bytes} unread bytes, and this message (${bytes} bytes) would pass the limit of ${maxBytes} per recipient. Nothing was stored. Wait until ${to} reads its mail, or send less, then send again (the server's operator can raise --max-unread-bytes).`,
      { data },
    );
  }
}
