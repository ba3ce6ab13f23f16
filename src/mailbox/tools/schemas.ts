/**
 * @module
 * Input and output schemas of the mailbox tools (zod shapes, turned into JSON Schema
 * by the MCP SDK for `tools/list`). Names are checked in the handlers rather than by
 * a schema pattern so a bad name becomes a logged, explained tool error.
 */
import * as z from 'zod';
import { DEFAULT_LIMITS } from '../limits.js';

/** Most messages one read returns, as docs/mailbox.md says; tools/list shows it as the schema's maximum. */
const MAX_FETCH = DEFAULT_LIMITS.maxFetch;

export const messageShape = z.object({
  id: z.string().describe('Message id, unique in this mailbox'),
  from: z.string().describe('Sender, as bound by the server (never taken from arguments)'),
  body: z.string(),
  sent_at: z.string().describe('ISO 8601 time the server stored the message'),
  thread: z
    .string()
    .optional()
    .describe('The conversation (the id of its first message); reply with reply_to to stay in it'),
  reply_to: z.string().optional().describe('The message this one answers'),
  acknowledged: z.boolean().describe('True when you already acknowledged it with ack_message'),
});

export const listAgentsOutput = {
  agents: z.array(
    z.object({
      name: z.string(),
      description: z.string().optional(),
      you: z.boolean().describe('True for the calling agent'),
    }),
  ),
};

export const sendInput = {
  to: z.string().describe('Recipient agent name (see list_agents)'),
  body: z.string().describe('Message text'),
  idempotency_key: z
    .string()
    .optional()
    .describe('Optional: a retried send with the same key returns the first message instead of sending twice'),
  reply_to: z
    .string()
    .optional()
    .describe('Optional: the id of a message you received that this one answers; the reply joins its thread'),
};

export const sendOutput = {
  id: z.string(),
  to: z.string(),
  sent_at: z.string(),
  thread: z.string().optional().describe('The conversation the message belongs to'),
  deduplicated: z.boolean().describe('True when this key was already used and the earlier message is returned'),
};

export const checkInput = {
  limit: z
    .number()
    .int()
    .min(1)
    .max(MAX_FETCH)
    .optional()
    .describe(`Most messages to return (default 20, at most ${MAX_FETCH})`),
  peek: z.boolean().optional().describe('Return messages without marking them read'),
  thread: z
    .string()
    .optional()
    .describe('Only this conversation: every message you received in it, read or not (marks nothing read)'),
};

const receipt = z.object({
  at: z.string().describe('When the server logged it'),
  seq: z.number().int().describe('Its position in the signed call log'),
  line_sha256: z.string().describe('SHA-256 of the exact call-log line (what the hash chain links)'),
  line: z.string().optional().describe('The signed call-log line, when it names no other message'),
});

export const statusInput = {
  message_id: z.string().describe('A message you sent or received'),
};

export const statusOutput = {
  id: z.string(),
  from: z.string(),
  to: z.string(),
  sent_at: z.string(),
  state: z
    .enum(['stored', 'read', 'acknowledged'])
    .describe(
      'stored: in the inbox; read: delivered to the recipient by a read; acknowledged: the recipient called ack_message',
    ),
  stored: receipt,
  read: receipt.optional(),
  acknowledged: receipt.extend({ reply: z.string().optional() }).optional(),
};

export const ackInput = {
  message_id: z.string().describe('A message you received'),
  reply: z.string().optional().describe('Optional short answer for the sender (kept with the signed acknowledgement)'),
};

export const ackOutput = {
  id: z.string(),
  acknowledged_at: z.string(),
  reply: z.string().optional(),
  deduplicated: z.boolean().describe('True when you had already acknowledged it: that acknowledgement stands'),
};

export const messagesOutput = {
  messages: z.array(messageShape),
};

export const waitInput = {
  timeout_ms: z.number().int().min(0).describe('How long to wait for mail, in ms (capped by the server)'),
  limit: z
    .number()
    .int()
    .min(1)
    .max(MAX_FETCH)
    .optional()
    .describe(`Most messages to return (default 20, at most ${MAX_FETCH})`),
};

export const waitOutput = {
  messages: z.array(messageShape),
  timed_out: z.boolean(),
};

export const whoamiOutput = {
  name: z.string(),
};
