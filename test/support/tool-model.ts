/**
 * A scripted model for driving real agent runtimes in tests: a node:http server on
 * 127.0.0.1 that answers from ONE policy in every API the runtimes speak — OpenAI
 * Chat Completions (`…/chat/completions`: OpenCode, Qwen Code), Anthropic Messages
 * (`…/messages`: Claude Code) and OpenAI Responses (`…/responses`: Codex) and the Gemini API
 * (`…/models/<m>:generateContent`: Gemini CLI), streamed
 * when the request asks for it. Each wire module (model-wire/) turns its request
 * into the chat shape below and the policy's reply — answer a text, or call tools
 * by name (the mailbox's through MCP, or the runtime's own built-ins) — into its
 * own events. Every request is recorded, as the policy saw it and as it came. It
 * stands in for the LLM only; everything around it is real.
 */
import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { anthropicReply, anthropicRequest } from './model-wire/anthropic.js';
import { chatReply, chatRequest } from './model-wire/chat.js';
import { sendJson } from './model-wire/common.js';
import { geminiReply, geminiRequest } from './model-wire/gemini.js';
import { responsesReply, responsesRequest } from './model-wire/responses.js';

export interface ChatMessage {
  role: string;
  // biome-ignore lint/suspicious/noExplicitAny: message content is free-form in the OpenAI API
  content?: any;
  tool_calls?: Array<{ id: string; function: { name: string; arguments: string } }>;
  tool_call_id?: string | undefined;
}

export interface ChatRequest {
  model?: string | undefined;
  stream?: boolean | undefined;
  messages: ChatMessage[];
  tools?: Array<{ type: string; function: { name: string; description?: string | undefined; parameters?: unknown } }>;
}

/** The behaviour language: answer this text, or call these tools (any name the runtime offers) with these arguments. */
export type ModelReply = { text: string } | { toolCalls: Array<{ name: string; arguments: Record<string, unknown> }> };
/** A policy may take its time (a model thinking): the runtime waits, and what reaches it meanwhile goes into its next request. */
export type ModelPolicy = (request: ChatRequest) => ModelReply | Promise<ModelReply>;

export type ModelApi = 'chat' | 'anthropic' | 'responses' | 'gemini';

/** A request as it arrived, before translation. */
export interface RawRequest {
  api: ModelApi;
  /** When it arrived (ms since the epoch): when the model was shown what it holds. */
  at: number;
  path: string;
  headers: IncomingMessage['headers'];
  // biome-ignore lint/suspicious/noExplicitAny: request bodies are free-form JSON
  body: any;
}

export interface ToolModel {
  /** Base URL ending in /v1 (Claude Code wants the origin: `origin`). */
  url: string;
  origin: string;
  /** Every model request, in the chat shape the policy was given. */
  requests: ChatRequest[];
  /** The same requests as they came, in their own API. */
  raw: RawRequest[];
  close(): Promise<void>;
}

const WIRES: Record<
  ModelApi,
  {
    path: RegExp;
    request: (body: unknown, path: string) => ChatRequest;
    reply: (res: ServerResponse, body: ChatRequest, reply: ModelReply, n: number) => void;
  }
> = {
  chat: { path: /\/chat\/completions$/, request: chatRequest, reply: chatReply },
  anthropic: { path: /\/messages$/, request: anthropicRequest, reply: anthropicReply },
  responses: { path: /\/responses$/, request: responsesRequest, reply: responsesReply },
  gemini: { path: /\/models\/[^/]+:(?:stream)?[gG]enerateContent$/, request: geminiRequest, reply: geminiReply },
};

export async function startToolModel(policy: ModelPolicy): Promise<ToolModel> {
  const requests: ChatRequest[] = [];
  const raw: RawRequest[] = [];
  let calls = 0;
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const path = (req.url ?? '').split('?')[0]!;
    if (req.method === 'GET' && /\/models$/.test(path))
      return sendJson(res, { object: 'list', data: [{ id: 'scripted', object: 'model', owned_by: 'test' }] });
    // Claude Code counts tokens before some requests; any count will do.
    if (req.method === 'POST' && /\/messages\/count_tokens$/.test(path)) return sendJson(res, { input_tokens: 10 });
    if (req.method === 'POST' && /:countTokens$/.test(path)) return sendJson(res, { totalTokens: 10 });
    const api = (Object.keys(WIRES) as ModelApi[]).find((a) => WIRES[a].path.test(path));
    if (req.method !== 'POST' || !api)
      return sendJson(res, { error: { message: `no route ${req.method} ${req.url}` } }, 404);
    let body: unknown;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
      return sendJson(res, { error: { message: 'body is not JSON' } }, 400);
    }
    raw.push({ api, at: Date.now(), path: req.url ?? '', headers: req.headers, body });
    const chat = WIRES[api].request(body, path);
    requests.push(chat);
    let reply: ModelReply;
    try {
      reply = await policy(chat);
    } catch (error) {
      return sendJson(
        res,
        { error: { type: 'api_error', message: `policy failed: ${(error as Error).message}` } },
        500,
      );
    }
    WIRES[api].reply(res, chat, reply, ++calls);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    origin: `http://127.0.0.1:${port}`,
    requests,
    raw,
    close: async () => {
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
}
