/**
 * Anthropic Messages on the wire (`POST …/v1/messages`, Claude Code adds
 * `?beta=true`): the request's system, blocks and tools are turned into the
 * policies' chat shape (`tool_use` → `tool_calls`, `tool_result` → a `tool`
 * message); the reply is streamed as SSE `message_start`, `content_block_start` /
 * `_delta` / `_stop` per block, `message_delta` (stop reason), `message_stop` — or
 * one JSON message without `stream`.
 */
import type { ServerResponse } from 'node:http';
import type { ChatMessage, ChatRequest, ModelReply } from '../tool-model.js';
import { callId, sendEvent, sendJson, splitInTwo, startEvents, textOf } from './common.js';

type Block = {
  type: string;
  text?: string;
  id?: string;
  name?: string;
  input?: unknown;
  tool_use_id?: string;
  content?: unknown;
  tool_name?: string;
};
interface MessagesRequest {
  model?: string;
  stream?: boolean;
  system?: unknown;
  messages?: Array<{ role: string; content: string | Block[] }>;
  tools?: Array<{ name?: string; description?: string; input_schema?: unknown }>;
}

export function anthropicRequest(body: unknown): ChatRequest {
  const request = body as MessagesRequest;
  const messages: ChatMessage[] = [];
  const system = textOf(request.system);
  if (system) messages.push({ role: 'system', content: system });
  for (const m of request.messages ?? []) messages.push(..._messages(m.role, m.content));
  const tools = (request.tools ?? [])
    .filter((t) => typeof t.name === 'string')
    .map((t) => ({
      type: 'function',
      function: { name: t.name!, description: t.description, parameters: t.input_schema },
    }));
  return { model: request.model, stream: request.stream, messages, tools };
}

function _messages(role: string, content: string | Block[]): ChatMessage[] {
  if (typeof content === 'string') return [{ role, content }];
  const text = content
    .filter((b) => b.type === 'text')
    .map((b) => b.text ?? '')
    .join('\n');
  const uses = content.filter((b) => b.type === 'tool_use');
  const results = content.filter((b) => b.type === 'tool_result');
  const out: ChatMessage[] = results.map((b) => ({
    role: 'tool',
    tool_call_id: b.tool_use_id,
    content: _resultText(b.content),
  }));
  if (uses.length > 0)
    out.push({
      role,
      content: text,
      tool_calls: uses.map((b) => ({
        id: b.id ?? '',
        function: { name: b.name ?? '', arguments: JSON.stringify(b.input ?? {}) },
      })),
    });
  else if (text || results.length === 0) out.push({ role, content: text });
  return out;
}

/** A tool result is text, or blocks; ToolSearch answers with `tool_reference` blocks naming the tools it loaded. */
function _resultText(content: unknown): string {
  if (!Array.isArray(content)) return textOf(content);
  return (content as Block[])
    .map((b) => (b.type === 'tool_reference' ? `tool_reference ${b.tool_name}` : (b.text ?? '')))
    .join('\n');
}

export function anthropicReply(res: ServerResponse, body: ChatRequest, reply: ModelReply, n: number): void {
  const blocks: Block[] =
    'toolCalls' in reply
      ? reply.toolCalls.map((c) => ({ type: 'tool_use', id: callId('toolu'), name: c.name, input: c.arguments }))
      : [{ type: 'text', text: reply.text }];
  const stop = 'toolCalls' in reply ? 'tool_use' : 'end_turn';
  const message = {
    id: `msg_scripted_${n}`,
    type: 'message',
    role: 'assistant',
    model: body.model ?? 'scripted',
    stop_sequence: null,
  };
  if (!body.stream) {
    sendJson(res, { ...message, content: blocks, stop_reason: stop, usage: { input_tokens: 10, output_tokens: 5 } });
    return;
  }
  startEvents(res);
  sendEvent(res, {
    type: 'message_start',
    message: { ...message, content: [], stop_reason: null, usage: { input_tokens: 10, output_tokens: 1 } },
  });
  blocks.forEach((block, index) => {
    if (block.type === 'text') {
      sendEvent(res, { type: 'content_block_start', index, content_block: { type: 'text', text: '' } });
      sendEvent(res, { type: 'content_block_delta', index, delta: { type: 'text_delta', text: block.text ?? '' } });
    } else {
      sendEvent(res, {
        type: 'content_block_start',
        index,
        content_block: { type: 'tool_use', id: block.id, name: block.name, input: {} },
      });
      for (const piece of splitInTwo(JSON.stringify(block.input)))
        sendEvent(res, {
          type: 'content_block_delta',
          index,
          delta: { type: 'input_json_delta', partial_json: piece },
        });
    }
    sendEvent(res, { type: 'content_block_stop', index });
  });
  sendEvent(res, {
    type: 'message_delta',
    delta: { stop_reason: stop, stop_sequence: null },
    usage: { output_tokens: 5 },
  });
  sendEvent(res, { type: 'message_stop' });
  res.end();
}
