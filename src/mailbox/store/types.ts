/**
 * @module
 * The storage interface every mailbox store implements (JSONL files by default,
 * SQLite as an option). A store owns the messages, the read cursors AND the call
 * log, so a message and its receipt are committed together or not at all. Every
 * operation is durable before its promise resolves.
 */
import type { CallRecord, Message, ToolName } from '../call-log.js';
import type { AgentEntry, StoreKind } from '../config.js';
import type { SendRate } from '../limits.js';
import type { DeliveryStatus } from './delivery.js';

export interface SendInput {
  to: string;
  body: string;
  idempotencyKey?: string;
  /** The id of a message the sender received, which this one answers (same thread). */
  replyTo?: string;
}

export interface SendResult {
  id: string;
  to: string;
  sent_at: string;
  /** The conversation the message belongs to. */
  thread?: string;
  /** True when an earlier send with the same idempotency key was returned instead. */
  deduplicated: boolean;
}

export interface AckResult {
  id: string;
  acknowledged_at: string;
  reply?: string;
  /** True when the message was acknowledged before: that acknowledgement stands. */
  deduplicated: boolean;
}

export interface FetchOptions {
  limit: number;
  /** Leave the messages unread (the cursor does not move). */
  peek: boolean;
  tool: ToolName;
  /**
   * When nothing is delivered, log nothing and move nothing: wait_for_message polls
   * with this and logs its one receipt itself.
   */
  quietIfEmpty?: boolean;
  /**
   * Only this conversation: every message of the agent's inbox in it, read or not,
   * oldest first — always a peek (a cursor cannot skip the other threads' mail).
   */
  thread?: string;
}

export interface CallOutcome {
  ok: boolean;
  error?: { code: string; message: string };
  message_ids?: string[];
}

export interface MailboxStore {
  readonly kind: StoreKind;
  readonly dir: string;
  /** Registered agents (re-read when agents.json changes; a networked store asks its database). */
  agents(): Promise<AgentEntry[]>;
  /** Appends a message and its send receipt. Unknown recipient → NOT_FOUND (and a failed-call receipt). */
  send(from: string, input: SendInput): Promise<SendResult>;
  /** Unread messages for `agent`, oldest first, with a receipt listing their ids. */
  fetch(agent: string, options: FetchOptions): Promise<Message[]>;
  /** Records a call that moved no messages (whoami, list_agents, a rejected call). */
  record(agent: string, tool: ToolName, outcome: CallOutcome): Promise<void>;
  /** Are there unread messages for `agent`? Counts only complete, readable records (a torn or damaged line is no mail). */
  hasUnread(agent: string): Promise<boolean>;
  /** Records `agent`'s acknowledgement of a message it received (NOT_FOUND otherwise), with a receipt. */
  ack(agent: string, id: string, reply?: string): Promise<AckResult>;
  /**
   * A message's delivery state from the call log's genuine receipts (delivery.ts).
   * With `asker`: undefined unless it sent or received the message, decided before
   * any receipt is checked (no access check without it: the operator's status).
   */
  status(id: string, asker?: string): Promise<DeliveryStatus | undefined>;
  /** Which of `ids`, received by `agent`, it has acknowledged (each backed by a genuine receipt). */
  acknowledged(agent: string, ids: string[]): Promise<Set<string>>;
  /** Something that changes whenever mail is stored for `agent` (e.g. its inbox's size): push notices compare it. */
  inboxMark(agent: string): Promise<string>;
  /**
   * `agent`'s messages stored after `mark` (from `inboxMark` or an earlier call; `''`:
   * after its read cursor, i.e. its unread mail), at most `limit`, and the mark after them; reads only: no receipt, no cursor move
   * (a channel push logs its own receipt). Damaged records are passed over.
   */
  inboxSince(agent: string, mark: string, limit: number): Promise<{ messages: Message[]; mark: string }>;
  /**
   * A store shared by processes that can tell each other of new mail (PostgreSQL's
   * LISTEN/NOTIFY) calls `wake` when mail is committed for an agent by any process
   * (undefined: anyone may have mail). Returns a function that stops the calls.
   */
  onMail?(wake: (agent: string | undefined) => void): () => void;
  /**
   * Calls `listener` after each durable commit with the number of call-log lines it
   * appended (the witness submitter counts receipts this way, off the send's path).
   * Returns a function that stops the calls.
   */
  onReceipts(listener: (count: number) => void): () => void;
  /** A send rate shared by every process of the store (default: one bucket per agent per process). */
  sendRate?(perMinute: number): SendRate | undefined;
  /** How often a waiter polls `hasUnread` for mail sent by other processes (default 50 ms). */
  readonly pollMs?: number;
  close(): Promise<void>;
}

/** Everything verify needs, as stored, with positions for reporting. */
export interface StoreSnapshot {
  kind: StoreKind;
  /** Each call-log line: its text (undefined when unreadable) and where it is. */
  calls: Array<{ file: string; line: number; text: string }>;
  callsTornTail: boolean;
  inboxes: Array<{ agent: string; file: string; lines: Array<{ line: number; text: string }>; tornTail: boolean }>;
}

export type { AgentEntry, CallRecord, Message };
