/**
 * @module
 * What a store driver does for the engine (engine.ts): put and get records and
 * call-log lines, under its own cross-process lock. A driver knows where bytes go
 * (JSONL files, SQLite rows, PostgreSQL rows) and nothing of what a send, a read or
 * an acknowledgement means: that algorithm is the engine's, written once. Every
 * lookup done inside a group sees what the group has added before it, the way each
 * medium does it best (JSONL: this batch's lines; SQLite: rows written at once;
 * PostgreSQL: rows kept for one multi-row INSERT and flushed before a lookup).
 */
import type { SendRate } from '../limits.js';
import type { CallRecord, ChainHead, Message, sealCall } from '../call-log.js';
import type { AgentEntry, StoreKind } from '../config.js';
import type { IdempotentSend, PreparedSend } from './ops.js';
import type { Count } from './quota.js';

/** A value, or a promise of one: the file drivers answer at once, PostgreSQL waits for its database. */
export type Awaitable<T> = T | Promise<T>;

/** A stored inbox record and its position (JSONL: the byte just past its line; SQL: its row's `pos`). */
export interface StoredRow {
  pos: number;
  /** The record's text; undefined when it cannot be read (too long, not text). */
  text: string | undefined;
}

/** How far an agent has read: its inbox up to and including position `pos`, and how many messages that delivered. */
export interface ReadCursor {
  pos: number;
  delivered: number;
}

export type Sealed = ReturnType<typeof sealCall>;

/** Reads that need no lock: what waiters, pushes and status queries use. */
export interface StoreReads {
  cursor(agent: string): Awaitable<ReadCursor>;
  /** Up to `want` records of `agent`'s inbox after position `after`, oldest first (damaged ones included). */
  readAfter(agent: string, after: number, want: number): Awaitable<StoredRow[]>;
  /** The call-log lines that may name message `id`, in log order (a superset: the engine checks each). */
  linesNaming(id: string): Awaitable<Iterable<string>>;
}

/** One group commit's view of the store: everything read sees what the group added before it. */
export interface StoreTx extends StoreReads {
  /** The call log's head the group's first line chains to. */
  readonly head: ChainHead;
  readonly agents: AgentEntry[];
  /** The index's pointer for a keyed send (only a pointer: the engine checks the message and its receipt). */
  keyedSend(from: string, key: string): Awaitable<IdempotentSend | undefined>;
  /** The record of `agent`'s inbox whose text names `id` and is message `id`, with its position. */
  findRecord(agent: string, id: string): Awaitable<StoredRow | undefined>;
  /** Call-log lines that may be the receipt of `earlier` (JSONL: the line the index points at). */
  receiptLines(earlier: IdempotentSend): Awaitable<Iterable<string>>;
  /** `agent`'s earlier genuine first acknowledgement of `id`, if any. */
  earlierAck(agent: string, id: string): Awaitable<{ ts: string; reply?: string } | undefined>;
  /** Up to `want` records of `agent`'s inbox after `after` whose text contains `needle`. */
  readMatching(agent: string, needle: string, after: number, want: number): Awaitable<StoredRow[]>;
  /** What `to` has unread, this group's sends included (for the quota). */
  unread(to: string): Awaitable<Count>;
  /** Keeps a new message for the commit (with its idempotency pointer, if keyed). */
  addMessage(prepared: PreparedSend): Awaitable<void>;
  /** Keeps a sealed call-log line for the commit; it is the new head. */
  addCall(sealed: Sealed): Awaitable<void>;
  moveCursor(agent: string, cursor: ReadCursor): Awaitable<void>;
}

export interface StoreDriver extends StoreReads {
  readonly kind: StoreKind;
  readonly dir: string;
  /**
   * Runs one group under the store's lock and commits what it added durably, or
   * nothing. `run` answers each operation; an error it throws fails the whole group.
   */
  group(run: (tx: StoreTx) => Promise<void>): Promise<void>;
  /**
   * Does an error thrown while applying one operation fail the whole group? (A
   * database error does; a refusal never does: it gets a failure receipt.)
   */
  failsGroup(error: unknown): boolean;
  agents(): Promise<AgentEntry[]>;
  /** Which of `ids`, received by `agent`, it has acknowledged (each backed by a genuine receipt). */
  acknowledged(agent: string, ids: string[]): Promise<Set<string>>;
  inboxMark(agent: string): Promise<string>;
  onMail?(wake: (agent: string | undefined) => void): () => void;
  sendRate?(perMinute: number): SendRate;
  readonly pollMs?: number;
  /** Reads outside a group turn a database failure into the store's one error (PostgreSQL); identity elsewhere. */
  reading?<T>(work: Promise<T>): Promise<T>;
  close(): Promise<void>;
}

export type { CallRecord, Message };
