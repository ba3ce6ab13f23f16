/**
 * OpenAI Chat Completions on the wire (`POST …/chat/completions`): the request is
 * already the policies' shape; the reply is one JSON completion, or with
 * `stream: true` SSE `chat.completion.chunk`s (`delta.content` / `delta.tool_calls`)
 * ending with `data: [DONE]`.
 */
import type { ServerResponse } from 'node:http';
import type { ChatRequest, ModelReply } from '../tool-model.js';
import { callId, sendJson, splitInTwo } from './common.js';

export function chatRequest(body: unknown): ChatRequest {
  const request = body as ChatRequest;
  return { ...request, messages: Array.isArray(request.messages) ? request.messages : [] };
}

export function chatReply(res: ServerResponse, body: ChatRequest, reply: ModelReply, n: number): void {
  const id = `chatcmpl-${n}`;
  const model = body.model ?? 'scripted';
  const toolCalls =
    'toolCalls' in reply
      ? reply.toolCalls.map((c, index) => ({
          index,
          id: callId('call'),
          type: 'function' as const,
          function: { name: c.name, arguments: JSON.stringify(c.arguments) },
        }))
      : undefined;
  const finish = toolCalls ? 'tool_calls' : 'stop';
  const usage = { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 };
  if (!body.stream) {
    const message = {
      role: 'assistant',
      content: 'text' in reply ? reply.text : null,
      ...(toolCalls ? { tool_calls: toolCalls.map(({ index: _i, ...c }) => c) } : {}),
    };
    sendJson(res, {
      id,
      object: 'chat.completion',
      created: Math.floor(Date.now() / 1000),
      model,
      choices: [{ index: 0, message, finish_reason: finish }],
      usage,
    });
    return;
  }
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
  const created = Math.floor(Date.now() / 1000);
  const send = (delta: Record<string, unknown>, finishReason: string | null, extra: Record<string, unknown> = {}) =>
    res.write(
      `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model, choices: [{ index: 0, delta, finish_reason: finishReason }], ...extra })}\n\n`,
    );
  send({ role: 'assistant', content: '' }, null);
  // Name and id first, then the arguments in two pieces, as real servers stream them.
  for (const c of toolCalls ?? []) {
    send(
      {
        tool_calls: [
          { index: c.index, id: c.id, type: 'function', function: { name: c.function.name, arguments: '' } },
        ],
      },
      null,
    );
    for (const piece of splitInTwo(c.function.arguments))
      send({ tool_calls: [{ index: c.index, function: { arguments: piece } }] }, null);
  }
  if ('text' in reply) send({ content: reply.text }, null);
  send({}, finish, { usage });
  res.end('data: [DONE]\n\n');
}
