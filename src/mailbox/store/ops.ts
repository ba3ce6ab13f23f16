/**
 * @module
 * The logic both stores share, independent of where bytes go: checking a send
 * (known recipient, idempotency key), building the message and the call entries.
 */
import { randomUUID } from 'node:crypto';
import { WitnessError } from '../../core/errors.js';
import { type CallEntry, type Message, messageDigest, type ToolName } from '../call-log.js';
import type { AgentEntry } from '../config.js';
import type { CallOutcome, FetchOptions, SendInput, SendResult } from './types.js';

export type StoreOp =
  | { kind: 'send'; from: string; input: SendInput }
  | { kind: 'fetch'; agent: string; options: FetchOptions }
  | { kind: 'record'; agent: string; tool: ToolName; outcome: CallOutcome };

export type StoreResult = SendResult | Message[] | undefined;

/** A send already committed under an idempotency key. */
export interface IdempotentSend {
  id: string;
  to: string;
  sent_at: string;
}

export function idempotencyIndexKey(from: string, key: string): string {
  return `${from}\u0000${key}`;
}

/** The recipient, or a NOT_FOUND error that names the known agents. */
export function checkRecipient(agents: AgentEntry[], to: string): void {
  if (agents.some((a) => a.name === to)) return;
  const known = agents.map((a) => a.name).join(', ') || 'none';
  throw new WitnessError('NOT_FOUND', `Unknown recipient "${to}": no agent with that name is registered (known agents: ${known}). Call list_agents and use one of those names.`);
}

export function newMessage(from: string, input: SendInput, sentAt: string): Message {
  return {
    id: `msg_${randomUUID()}`,
    from,
    to: input.to,
    body: input.body,
    sent_at: sentAt,
    ...(input.idempotencyKey !== undefined ? { idempotency_key: input.idempotencyKey } : {}),
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

export function dedupEntry(from: string, earlier: IdempotentSend, key: string): CallEntry {
  return { agent: from, tool: 'send_message', ok: true, message_ids: [earlier.id], to: [earlier.to], idempotency_key: key, deduplicated: true };
}

export function failureEntry(agent: string, tool: ToolName, error: unknown): CallEntry {
  const code = error instanceof WitnessError ? error.code : 'INTERNAL';
  return { agent, tool, ok: false, message_ids: [], error: { code, message: (error as Error).message } };
}

export function recordEntry(agent: string, tool: ToolName, outcome: CallOutcome): CallEntry {
  return { agent, tool, ok: outcome.ok, message_ids: outcome.message_ids ?? [], ...(outcome.error ? { error: outcome.error } : {}) };
}

/** Learns idempotency keys from a committed send line (ours or another process's). */
export function learnIdempotency(index: Map<string, IdempotentSend>, record: Partial<CallEntry> & { ts?: string }): void {
  if (record.tool !== 'send_message' || !record.ok || record.deduplicated || record.idempotency_key === undefined) return;
  const id = record.message_ids?.[0];
  const to = record.to?.[0];
  if (typeof record.agent !== 'string' || !id || !to || typeof record.ts !== 'string') return;
  index.set(idempotencyIndexKey(record.agent, record.idempotency_key), { id, to, sent_at: record.ts });
}
