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

export interface SendInput {
  to: string;
  body: string;
  idempotencyKey?: string;
}

export interface SendResult {
  id: string;
  to: string;
  sent_at: string;
  /** True when an earlier send with the same idempotency key was returned instead. */
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
  /**
   * A store shared by processes that can tell each other of new mail (PostgreSQL's
   * LISTEN/NOTIFY) calls `wake` when mail is committed for an agent by any process
   * (undefined: anyone may have mail). Returns a function that stops the calls.
   */
  onMail?(wake: (agent: string | undefined) => void): () => void;
  /** A send rate shared by every process of the store (default: one bucket per agent per process). */
  sendRate?(perMinute: number): SendRate;
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
