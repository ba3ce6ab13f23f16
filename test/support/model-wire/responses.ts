/**
 * OpenAI Responses on the wire (`POST …/v1/responses`, what Codex speaks): the
 * request's `instructions` and `input` items become the policies' chat shape
 * (`function_call` → `tool_calls`, `function_call_output` → a `tool` message); a
 * namespace's tools are offered as `NAMESPACE.TOOL`. The reply is streamed as SSE
 * `response.created`, per output item `response.output_item.added`, its deltas and
 * `response.output_item.done`, then `response.completed` with the whole output.
 */
import type { ServerResponse } from 'node:http';
import type { ChatMessage, ChatRequest, ModelReply } from '../tool-model.js';
import { callId, sendEvent, sendJson, splitInTwo, startEvents, textOf } from './common.js';

type Item = {
  type: string;
  role?: string;
  content?: unknown;
  call_id?: string;
  name?: string;
  namespace?: string;
  arguments?: string;
  output?: unknown;
};
type Tool = { type: string; name?: string; description?: string; parameters?: unknown; tools?: Tool[] };
interface ResponsesRequest {
  model?: string;
  stream?: boolean;
  instructions?: string;
  input?: string | Item[];
  tools?: Tool[];
}

export function responsesRequest(body: unknown): ChatRequest {
  const request = body as ResponsesRequest;
  const messages: ChatMessage[] = request.instructions ? [{ role: 'system', content: request.instructions }] : [];
  const input =
    typeof request.input === 'string'
      ? [{ type: 'message', role: 'user', content: request.input }]
      : (request.input ?? []);
  for (const item of input) {
    if (item.type === 'message')
      messages.push({
        role: item.role === 'developer' ? 'system' : (item.role ?? 'user'),
        content: textOf(item.content),
      });
    else if (item.type === 'function_call')
      messages.push({
        role: 'assistant',
        content: '',
        tool_calls: [
          {
            id: item.call_id ?? '',
            function: {
              name: item.namespace ? `${item.namespace}.${item.name}` : (item.name ?? ''),
              arguments: item.arguments ?? '{}',
            },
          },
        ],
      });
    else if (item.type === 'function_call_output')
      messages.push({ role: 'tool', tool_call_id: item.call_id, content: textOf(item.output) });
  }
  return { model: request.model, stream: request.stream, messages, tools: _functions(request.tools ?? []) };
}

function _functions(tools: Tool[], namespace?: string): NonNullable<ChatRequest['tools']> {
  return tools.flatMap((t) => {
    if (t.type === 'namespace' && t.name) return _functions(t.tools ?? [], t.name);
    if (t.type !== 'function' || !t.name) return [];
    return [
      {
        type: 'function',
        function: {
          name: namespace ? `${namespace}.${t.name}` : t.name,
          description: t.description,
          parameters: t.parameters,
        },
      },
    ];
  });
}

export function responsesReply(res: ServerResponse, body: ChatRequest, reply: ModelReply, n: number): void {
  const id = `resp_scripted_${n}`;
  const items: Array<Record<string, unknown> & { type: string; id: string }> =
    'toolCalls' in reply
      ? reply.toolCalls.map((c, i) => {
          const dot = c.name.indexOf('.');
          const name = dot > 0 ? { namespace: c.name.slice(0, dot), name: c.name.slice(dot + 1) } : { name: c.name };
          return {
            type: 'function_call',
            id: `fc_${n}_${i}`,
            call_id: callId('call'),
            ...name,
            arguments: JSON.stringify(c.arguments),
            status: 'completed',
          };
        })
      : [
          {
            type: 'message',
            id: `msg_${n}`,
            role: 'assistant',
            status: 'completed',
            content: [{ type: 'output_text', text: reply.text, annotations: [] }],
          },
        ];
  const response = {
    id,
    object: 'response',
    created_at: Math.floor(Date.now() / 1000),
    model: body.model ?? 'scripted',
  };
  const usage = {
    input_tokens: 10,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: 5,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: 15,
  };
  if (!body.stream) {
    sendJson(res, { ...response, status: 'completed', output: items, usage });
    return;
  }
  startEvents(res);
  sendEvent(res, { type: 'response.created', response: { ...response, status: 'in_progress', output: [] } });
  items.forEach((item, output_index) => {
    if (item.type === 'message') {
      const text = (item.content as Array<{ text: string }>)[0]!.text;
      sendEvent(res, {
        type: 'response.output_item.added',
        output_index,
        item: { ...item, status: 'in_progress', content: [] },
      });
      for (const delta of splitInTwo(text))
        sendEvent(res, { type: 'response.output_text.delta', item_id: item.id, output_index, content_index: 0, delta });
    } else {
      sendEvent(res, {
        type: 'response.output_item.added',
        output_index,
        item: { ...item, status: 'in_progress', arguments: '' },
      });
      for (const delta of splitInTwo(item.arguments as string))
        sendEvent(res, { type: 'response.function_call_arguments.delta', item_id: item.id, output_index, delta });
    }
    sendEvent(res, { type: 'response.output_item.done', output_index, item });
  });
  sendEvent(res, { type: 'response.completed', response: { ...response, status: 'completed', output: items, usage } });
  res.end();
}
