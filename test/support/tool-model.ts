/**
 * A scripted OpenAI-compatible model for driving real agent runtimes in tests: a
 * node:http server on 127.0.0.1 that answers `POST …/chat/completions` from a
 * policy — plain text, or tool calls — as a streamed SSE response
 * (`chat.completion.chunk` with `delta.content` / `delta.tool_calls`, then
 * `data: [DONE]`) when the request asks for `stream: true`, else as one JSON
 * completion. It stands in for the LLM only; everything around it is real.
 */
import { once } from 'node:events';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ChatMessage {
  role: string;
  // biome-ignore lint/suspicious/noExplicitAny: message content is free-form in the OpenAI API
  content?: any;
  tool_calls?: Array<{ id: string; function: { name: string; arguments: string } }>;
  tool_call_id?: string;
}

export interface ChatRequest {
  model?: string;
  stream?: boolean;
  messages: ChatMessage[];
  tools?: Array<{ type: string; function: { name: string; description?: string; parameters?: unknown } }>;
}

export type ModelReply = { text: string } | { toolCalls: Array<{ name: string; arguments: Record<string, unknown> }> };
export type ModelPolicy = (request: ChatRequest) => ModelReply;

export interface ToolModel {
  /** Base URL ending in /v1. */
  url: string;
  requests: ChatRequest[];
  close(): Promise<void>;
}

export async function startToolModel(policy: ModelPolicy): Promise<ToolModel> {
  const requests: ChatRequest[] = [];
  let calls = 0;
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    if (req.method === 'GET' && /\/models$/.test(req.url ?? '')) return _json(res, { object: 'list', data: [{ id: 'scripted', object: 'model', owned_by: 'test' }] });
    if (req.method !== 'POST' || !/\/chat\/completions$/.test(req.url ?? '')) return _json(res, { error: { message: `no route ${req.method} ${req.url}` } }, 404);
    let body: ChatRequest;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as ChatRequest;
    } catch {
      return _json(res, { error: { message: 'body is not JSON' } }, 400);
    }
    requests.push(body);
    let reply: ModelReply;
    try {
      reply = policy(body);
    } catch (error) {
      return _json(res, { error: { message: `policy failed: ${(error as Error).message}` } }, 500);
    }
    const id = `chatcmpl-${++calls}`;
    if (body.stream) _stream(res, id, body.model ?? 'scripted', reply);
    else _json(res, _completion(id, body.model ?? 'scripted', reply));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    close: async () => {
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
}

function _toolCalls(reply: ModelReply) {
  if (!('toolCalls' in reply)) return undefined;
  return reply.toolCalls.map((c, index) => ({ index, id: `call_${index}_${Math.random().toString(36).slice(2, 10)}`, type: 'function' as const, function: { name: c.name, arguments: JSON.stringify(c.arguments) } }));
}

function _completion(id: string, model: string, reply: ModelReply) {
  const toolCalls = _toolCalls(reply);
  return {
    id,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model,
    choices: [{ index: 0, message: { role: 'assistant', content: 'text' in reply ? reply.text : null, ...(toolCalls ? { tool_calls: toolCalls.map(({ index: _i, ...c }) => c) } : {}) }, finish_reason: toolCalls ? 'tool_calls' : 'stop' }],
    usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
  };
}

function _stream(res: ServerResponse, id: string, model: string, reply: ModelReply): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
  const created = Math.floor(Date.now() / 1000);
  const send = (delta: Record<string, unknown>, finish: string | null, extra: Record<string, unknown> = {}) =>
    res.write(`data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model, choices: [{ index: 0, delta, finish_reason: finish }], ...extra })}\n\n`);
  send({ role: 'assistant', content: '' }, null);
  const toolCalls = _toolCalls(reply);
  if (toolCalls) {
    // Name and id first, then the arguments in two pieces, as real servers stream them.
    for (const c of toolCalls) {
      send({ tool_calls: [{ index: c.index, id: c.id, type: 'function', function: { name: c.function.name, arguments: '' } }] }, null);
      const half = Math.ceil(c.function.arguments.length / 2);
      send({ tool_calls: [{ index: c.index, function: { arguments: c.function.arguments.slice(0, half) } }] }, null);
      send({ tool_calls: [{ index: c.index, function: { arguments: c.function.arguments.slice(half) } }] }, null);
    }
  } else if ('text' in reply) {
    send({ content: reply.text }, null);
  }
  send({}, toolCalls ? 'tool_calls' : 'stop', { usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 } });
  res.end('data: [DONE]\n\n');
}

function _json(res: ServerResponse, value: unknown, status = 200): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(value));
}
