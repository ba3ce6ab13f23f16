/**
 * @module
 * The logic every store shares, independent of where bytes go: checking a send
 * (known recipient, idempotency key), building the message and the call entries,
 * and reading a stored message back (strictly: a damaged record is skipped, never
 * fatal).
 */
import { randomUUID } from 'node:crypto';
import { WitnessError } from '../../core/errors.js';
import { parseStrictJson } from '../../core/strict-json.js';
import { checkWellFormedText } from '../../core/text.js';
import { type CallEntry, type CallRecord, type Message, messageDigest, type ToolName } from '../call-log.js';
import type { AgentEntry } from '../config.js';
import type { AckResult, CallOutcome, FetchOptions, SendInput, SendResult } from './types.js';

export type StoreOp =
  | { kind: 'send'; from: string; input: SendInput }
  | { kind: 'fetch'; agent: string; options: FetchOptions }
  | { kind: 'ack'; agent: string; id: string; reply?: string }
  | { kind: 'record'; agent: string; tool: ToolName; outcome: CallOutcome };

export type StoreResult = SendResult | Message[] | AckResult | undefined;

/**
 * A send committed under an idempotency key, as the store's index remembers it. The
 * index is only a pointer: agents may be able to write the store, so a retry is
 * answered as a duplicate only once `storedDedup` finds the message and a genuine
 * receipt backs it (`receiptBacks`); otherwise the retry is stored as a new send.
 */
export interface IdempotentSend {
  id: string;
  to: string;
  sent_at: string;
  /** JSONL: where the send's line starts in calls.jsonl, for a line this process did not seal (checked when used). */
  at?: number;
  /** The digest the receipt signed, for a line this process sealed itself (nothing to check but the message). */
  digest?: string;
}

export function idempotencyIndexKey(from: string, key: string): string {
  return `${from}\u0000${key}`;
}

/** The recipient, or a NOT_FOUND error that names the known agents. */
export function checkRecipient(agents: AgentEntry[], to: string): void {
  if (agents.some((a) => a.name === to)) return;
  const known = agents.map((a) => a.name).join(', ') || 'none';
  throw new WitnessError(
    'NOT_FOUND',
    `Unknown recipient "${to}": no agent with that name is registered (known agents: ${known}). Call list_agents and use one of those names.`,
  );
}

/** A new message, its stored text and its receipt's entry. */
export interface PreparedSend {
  message: Message;
  /** The stored record (an inbox line without its newline). */
  text: string;
  /** Its size as stored, newline included (what the quota counts). */
  bytes: number;
  entry: CallEntry;
}

/**
 * Builds everything a send stores, BEFORE anything is stored: whatever can throw
 * (ill-formed text, a value canonical JSON cannot express) throws here, so a failed
 * send never leaves a stored message behind.
 */
export function prepareSend(from: string, input: SendInput, sentAt: string, parent?: Message): PreparedSend {
  checkWellFormedText(input.body, 'The message body');
  if (input.idempotencyKey !== undefined) checkWellFormedText(input.idempotencyKey, 'The idempotency_key');
  const id = `msg_${randomUUID()}`;
  const message: Message = {
    id,
    from,
    to: input.to,
    body: input.body,
    sent_at: sentAt,
    // A reply joins its parent's conversation; anything else starts one.
    thread: parent ? (parent.thread ?? parent.id) : id,
    ...(parent ? { reply_to: parent.id } : {}),
    ...(input.idempotencyKey !== undefined ? { idempotency_key: input.idempotencyKey } : {}),
  };
  const text = JSON.stringify(message);
  return { message, text, bytes: Buffer.byteLength(text) + 1, entry: sendEntry(message) };
}

/** A stored record read back as a message, or undefined when it is damaged (not JSON, duplicate keys, wrong shape). */
export function parseMessage(text: string | undefined): Message | undefined {
  if (text === undefined) return undefined;
  let value: unknown;
  try {
    value = parseStrictJson(text);
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const m = value as Record<string, unknown>;
  const strings = ['id', 'from', 'to', 'body', 'sent_at'].every((k) => typeof m[k] === 'string');
  const optional = ['idempotency_key', 'thread', 'reply_to'].every(
    (k) => m[k] === undefined || typeof m[k] === 'string',
  );
  return strings && optional ? (m as unknown as Message) : undefined;
}

/** The receipt of a read: the ids delivered, and how many damaged records it passed over. */
export function fetchEntry(
  agent: string,
  tool: ToolName,
  messages: Message[],
  skipped: number,
  peek: boolean,
): CallEntry {
  return {
    agent,
    tool,
    ok: true,
    message_ids: messages.map((m) => m.id),
    ...(skipped > 0 ? { skipped } : {}),
    ...(peek ? { peek: true } : {}),
  };
}

export function sendEntry(message: Message): CallEntry {
  return {
    agent: message.from,
    tool: 'send_message',
    ok: true,
    message_ids: [message.id],
    to: [message.to],
    digests: [messageDigest(message)],
    ...(message.idempotency_key !== undefined ? { idempotency_key: message.idempotency_key } : {}),
  };
}

/** A retried keyed send's answer: the earlier message, as stored. */
export function dedupResult(stored: Message): SendResult {
  return {
    id: stored.id,
    to: stored.to,
    sent_at: stored.sent_at,
    ...(stored.thread !== undefined ? { thread: stored.thread } : {}),
    deduplicated: true,
  };
}

export function dedupEntry(from: string, earlier: IdempotentSend, key: string): CallEntry {
  return {
    agent: from,
    tool: 'send_message',
    ok: true,
    message_ids: [earlier.id],
    to: [earlier.to],
    idempotency_key: key,
    deduplicated: true,
  };
}

export function failureEntry(agent: string, tool: ToolName, error: unknown): CallEntry {
  const code = error instanceof WitnessError ? error.code : 'INTERNAL';
  return { agent, tool, ok: false, message_ids: [], error: { code, message: (error as Error).message } };
}

/** The failure receipt of a send, read or acknowledgement that was refused; a record that fails has none. */
export function failedCall(op: StoreOp, error: unknown): CallEntry | undefined {
  if (op.kind === 'send') return failureEntry(op.from, 'send_message', error);
  if (op.kind === 'fetch') return failureEntry(op.agent, op.options.tool, error);
  if (op.kind === 'ack') return failureEntry(op.agent, 'ack_message', error);
  return undefined;
}

/**
 * The message `id` as `agent` received it (a record of its inbox), for a reply or an
 * acknowledgement; NOT_FOUND — the same for a message that does not exist and one
 * that is someone else's, so nothing leaks — when there is none.
 */
export function receivedOrRefuse(
  message: Message | undefined,
  agent: string,
  id: string,
  what: 'reply_to' | 'message_id',
): Message {
  if (message && message.to === agent && message.id === id) return message;
  throw new WitnessError(
    'NOT_FOUND',
    `${what} ${JSON.stringify(id.slice(0, 100))} is not a message you received. Use the id of a message from your own check_inbox or wait_for_message.`,
  );
}

/** Where a stored record of `agent`'s inbox is `id` (a cheap text test first, then a strict parse). */
export function recordIs(text: string | undefined, id: string): Message | undefined {
  return text?.includes(id) ? parseMessage(text) : undefined;
}

/** The receipt of an acknowledgement (first, or repeated). */
export function ackEntry(agent: string, id: string, reply: string | undefined, again: boolean): CallEntry {
  return {
    agent,
    tool: 'ack_message',
    ok: true,
    message_ids: [id],
    ...(reply !== undefined && !again ? { reply } : {}),
    ...(again ? { deduplicated: true } : {}),
  };
}

/** A message belongs to a conversation: its thread, or (messages from before threads) its own id. */
export function threadOf(m: Message): string {
  return m.thread ?? m.id;
}

export function recordEntry(agent: string, tool: ToolName, outcome: CallOutcome): CallEntry {
  return {
    agent,
    tool,
    ok: outcome.ok,
    message_ids: outcome.message_ids ?? [],
    ...(outcome.error ? { error: outcome.error } : {}),
  };
}

/**
 * Learns idempotency keys from a send line: one this process sealed (`where.sealed`:
 * its digest is known good), or one read from the file at byte `where.at` (another
 * process's, or anyone's: checked when a retry uses it).
 */
export function learnIdempotency(
  index: Map<string, IdempotentSend>,
  record: Partial<CallEntry> & { ts?: string },
  where: { sealed: true } | { at: number },
): void {
  if (record.tool !== 'send_message' || !record.ok || record.deduplicated || typeof record.idempotency_key !== 'string')
    return;
  const id = record.message_ids?.[0];
  const to = record.to?.[0];
  if (
    typeof record.agent !== 'string' ||
    typeof id !== 'string' ||
    typeof to !== 'string' ||
    typeof record.ts !== 'string'
  )
    return;
  const digest = record.digests?.[0];
  const known = 'sealed' in where ? (typeof digest === 'string' ? { digest } : undefined) : { at: where.at };
  if (known)
    index.set(idempotencyIndexKey(record.agent, record.idempotency_key), { id, to, sent_at: record.ts, ...known });
}

/** An acknowledgement a JSONL store knows of: the ack line's offset (checked when used), or sealed by this process. */
export type KnownAck = { at: number } | { sealed: true; agent: string; ts: string; reply?: string };

/** Learns a first acknowledgement from a call-log line (like `learnIdempotency`). */
export function learnAck(
  index: Map<string, KnownAck>,
  record: Partial<CallEntry> & { ts?: string },
  where: { sealed: true } | { at: number },
): void {
  if (record.tool !== 'ack_message' || !record.ok || record.deduplicated || record.message_ids?.length !== 1) return;
  const id = record.message_ids[0];
  if (typeof id !== 'string' || index.has(id)) return;
  if ('at' in where) return void index.set(id, where);
  if (typeof record.agent === 'string' && typeof record.ts === 'string')
    index.set(id, {
      sealed: true,
      agent: record.agent,
      ts: record.ts,
      ...(record.reply !== undefined ? { reply: record.reply } : {}),
    });
}

/**
 * The stored record of an earlier keyed send, read back, when it is the message the
 * index names (same id, recipient, time, sender and key); undefined when the
 * message is gone or the index entry was forged.
 */
export function storedDedup(
  from: string,
  key: string,
  earlier: IdempotentSend,
  text: string | undefined,
): Message | undefined {
  const m = parseMessage(text);
  return m &&
    m.id === earlier.id &&
    m.to === earlier.to &&
    m.sent_at === earlier.sent_at &&
    m.from === from &&
    m.idempotency_key === key
    ? m
    : undefined;
}

/** A genuine call record (the caller checked its signature) is the send receipt of exactly `m`, as verify would match them. */
export function receiptBacks(record: CallRecord, m: Message): boolean {
  return (
    record.tool === 'send_message' &&
    record.ok &&
    record.deduplicated !== true &&
    record.agent === m.from &&
    record.idempotency_key === m.idempotency_key &&
    record.message_ids.length === 1 &&
    record.message_ids[0] === m.id &&
    record.to?.[0] === m.to &&
    record.digests?.[0] === messageDigest(m)
  );
}
