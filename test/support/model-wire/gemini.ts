/**
 * Gemini API on the wire (`POST …/v1beta/models/<model>:generateContent`, and
 * `:streamGenerateContent?alt=sse`): `systemInstruction`, `contents` (`user` /
 * `model` roles with `text`, `functionCall` and `functionResponse` parts) and
 * `tools[].functionDeclarations` are turned into the policies' chat shape; the
 * reply is one candidate, or SSE `data: {candidates:[…]}` chunks (text split in
 * two, so the runtime must join them; each function call whole, as Gemini sends it).
 * Gemini calls have no ids: a response is matched to its call by name.
 */
import type { ServerResponse } from 'node:http';
import type { ChatMessage, ChatRequest, ModelReply } from '../tool-model.js';
import { callId, sendJson, splitInTwo, startEvents } from './common.js';

type Part = {
  text?: string;
  thought?: boolean;
  functionCall?: { name?: string; args?: unknown; id?: string };
  functionResponse?: { name?: string; response?: unknown; id?: string };
};
interface GenerateRequest {
  model?: string;
  stream?: boolean;
  systemInstruction?: { parts?: Part[] } | string;
  contents?: Array<{ role?: string; parts?: Part[] }>;
  tools?: Array<{
    functionDeclarations?: Array<{
      name?: string;
      description?: string;
      parameters?: unknown;
      parametersJsonSchema?: unknown;
    }>;
  }>;
}

/** The model name and whether it streams come from the path, not the body. */
export function geminiRequest(body: unknown, path = ''): ChatRequest {
  const request = body as GenerateRequest;
  const messages: ChatMessage[] = [];
  const system =
    typeof request.systemInstruction === 'string'
      ? request.systemInstruction
      : (request.systemInstruction?.parts ?? []).map((p) => p.text ?? '').join('\n');
  if (system) messages.push({ role: 'system', content: system });
  for (const c of request.contents ?? [])
    messages.push(..._messages(c.role === 'model' ? 'assistant' : 'user', c.parts ?? []));
  const tools = (request.tools ?? [])
    .flatMap((t) => t.functionDeclarations ?? [])
    .filter((d) => typeof d.name === 'string')
    .map((d) => ({
      type: 'function',
      function: { name: d.name!, description: d.description, parameters: d.parametersJsonSchema ?? d.parameters },
    }));
  const model = /\/models\/([^/:]+):/.exec(path)?.[1];
  return { model, stream: /:streamGenerateContent/.test(path), messages, tools };
}

function _messages(role: string, parts: Part[]): ChatMessage[] {
  const text = parts
    .filter((p) => typeof p.text === 'string' && !p.thought)
    .map((p) => p.text)
    .join('');
  const calls = parts.filter((p) => p.functionCall);
  const results = parts.filter((p) => p.functionResponse);
  const out: ChatMessage[] = results.map((p) => ({
    role: 'tool',
    tool_call_id: p.functionResponse!.id ?? p.functionResponse!.name,
    content: JSON.stringify(p.functionResponse!.response ?? {}),
  }));
  if (calls.length > 0)
    out.push({
      role,
      content: text,
      tool_calls: calls.map((p) => ({
        id: p.functionCall!.id ?? p.functionCall!.name ?? '',
        function: { name: p.functionCall!.name ?? '', arguments: JSON.stringify(p.functionCall!.args ?? {}) },
      })),
    });
  else if (text || results.length === 0) out.push({ role, content: text });
  return out;
}

export function geminiReply(res: ServerResponse, body: ChatRequest, reply: ModelReply, _n: number): void {
  const usageMetadata = { promptTokenCount: 10, candidatesTokenCount: 5, totalTokenCount: 15 };
  const chunk = (parts: Part[], finish?: string) => ({
    candidates: [{ content: { role: 'model', parts }, index: 0, ...(finish ? { finishReason: finish } : {}) }],
    usageMetadata,
    modelVersion: body.model ?? 'scripted',
  });
  const parts: Part[] =
    'toolCalls' in reply
      ? reply.toolCalls.map((c) => ({ functionCall: { name: c.name, args: c.arguments, id: callId('call') } }))
      : [{ text: reply.text }];
  if (!body.stream) {
    sendJson(res, chunk(parts, 'STOP'));
    return;
  }
  startEvents(res);
  const pieces = 'toolCalls' in reply ? parts.map((p) => [p]) : splitInTwo(reply.text).map((text) => [{ text }]);
  pieces.forEach((p, i) => {
    res.write(`data: ${JSON.stringify(chunk(p, i === pieces.length - 1 ? 'STOP' : undefined))}\n\n`);
  });
  res.end();
}
