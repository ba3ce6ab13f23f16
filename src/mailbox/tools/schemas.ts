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
});

export const listAgentsOutput = {
  agents: z.array(z.object({ name: z.string(), description: z.string().optional(), you: z.boolean().describe('True for the calling agent') })),
};

export const sendInput = {
  to: z.string().describe('Recipient agent name (see list_agents)'),
  body: z.string().describe('Message text'),
  idempotency_key: z.string().optional().describe('Optional: a retried send with the same key returns the first message instead of sending twice'),
};

export const sendOutput = {
  id: z.string(),
  to: z.string(),
  sent_at: z.string(),
  deduplicated: z.boolean().describe('True when this key was already used and the earlier message is returned'),
};

export const checkInput = {
  limit: z.number().int().min(1).max(MAX_FETCH).optional().describe(`Most messages to return (default 20, at most ${MAX_FETCH})`),
  peek: z.boolean().optional().describe('Return messages without marking them read'),
};

export const messagesOutput = {
  messages: z.array(messageShape),
};

export const waitInput = {
  timeout_ms: z.number().int().min(0).describe('How long to wait for mail, in ms (capped by the server)'),
  limit: z.number().int().min(1).max(MAX_FETCH).optional().describe(`Most messages to return (default 20, at most ${MAX_FETCH})`),
};

export const waitOutput = {
  messages: z.array(messageShape),
  timed_out: z.boolean(),
};

export const whoamiOutput = {
  name: z.string(),
};
