import { createServer } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { WitnessError } from '../../src/core/errors.js';
import { OpenAiCompatibleBackend, type OpenAiCompatibleOptions } from '../../src/llm/openai-compatible.js';
import type { ChatCallKey, ChatRequest } from '../../src/llm/types.js';
import { type Script, type ScriptedServer, startScriptedServer } from './scripted-server.js';

const SCHEMA = {
  type: 'object',
  properties: { decision: { type: 'string', enum: ['stop', 'continue'] } },
  required: ['decision'],
  additionalProperties: false,
};
const REQUEST: ChatRequest = {
  messages: [
    { role: 'system', content: 'You are agent_0.' },
    { role: 'user', content: 'Vote now.' },
  ],
  schema: SCHEMA,
  schemaName: 'vote_honest',
  temperature: 0.3,
  maxTokens: 200,
};
const KEY: ChatCallKey = { run: 'r-1', agent: 'agent_0', round: 1, kind: 'vote', attempt: 1 };

const servers: ScriptedServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function serve(script?: Script): Promise<ScriptedServer> {
  const server = await startScriptedServer(script);
  servers.push(server);
  return server;
}

function backend(urls: string[], options: Partial<OpenAiCompatibleOptions> = {}) {
  return new OpenAiCompatibleBackend({
    endpoints: urls,
    model: 'scripted-model',
    apiKey: 'test-key',
    backoffMs: 5,
    maxBackoffMs: 20,
    ...options,
  });
}

describe('OpenAI-compatible backend against a scripted server', () => {
  it('sends the messages, the schema as response_format, temperature, max_tokens, top_p, top_k, and with kwargs enable_thinking false', async () => {
    const server = await serve(() => ({ content: '{"decision":"stop"}' }));
    const reply = await backend([server.url], { thinking: 'kwargs' }).complete(
      { ...REQUEST, topP: 1, topK: -1 },
      { key: KEY },
    );
    const [seen] = server.requests;
    expect(seen!.path).toBe('/v1/chat/completions');
    expect(seen!.headers.authorization).toBe('Bearer test-key');
    expect(seen!.body).toEqual({
      model: 'scripted-model',
      messages: REQUEST.messages,
      temperature: 0.3,
      max_tokens: 200,
      top_p: 1,
      top_k: -1,
      chat_template_kwargs: { enable_thinking: false },
      response_format: { type: 'json_schema', json_schema: { name: 'vote_honest', strict: true, schema: SCHEMA } },
    });
    expect(reply).toMatchObject({ content: '{"decision":"stop"}', retries: 0, endpoint: server.url });
    expect(reply.usage.promptTokens).toBeGreaterThan(0);
  });

  it('can send the schema as guided_json (older vLLM) and switch thinking off with a /no_think suffix', async () => {
    const server = await serve(() => ({ content: '{"decision":"stop"}' }));
    await backend([server.url], { structuredOutput: 'guided_json', thinking: 'suffix' }).complete(REQUEST, {
      key: KEY,
    });
    const body = server.requests[0]!.body;
    expect(body.guided_json).toEqual(SCHEMA);
    expect(body.response_format).toBeUndefined();
    expect(body.chat_template_kwargs).toBeUndefined();
    expect(body.messages[1].content).toBe('Vote now. /no_think');
  });

  it("switches thinking off the study's way by default: the suffix for Qwen3 models but not Instruct-2507, nothing for others", async () => {
    const server = await serve(() => ({ content: '{"decision":"stop"}' }));
    const sent = async (model: string) => {
      await backend([server.url], { model }).complete(REQUEST, { key: KEY });
      const body = server.requests.at(-1)!.body;
      expect(body.chat_template_kwargs).toBeUndefined();
      expect(body).not.toHaveProperty('top_p');
      return body.messages[1].content;
    };
    expect(await sent('Qwen/Qwen3-14B')).toBe('Vote now. /no_think');
    expect(await sent('qwen3:8b')).toBe('Vote now. /no_think');
    expect(await sent('Qwen/Qwen3-4B-Instruct-2507')).toBe('Vote now.');
    expect(await sent('mistralai/Mistral-Small-Instruct-2409')).toBe('Vote now.');
    expect(REQUEST.messages[1]!.content).toBe('Vote now.');
  });

  it("can send the schema as Ollama's format field", async () => {
    const server = await serve(() => ({ content: '{"decision":"stop"}' }));
    await backend([server.url], { structuredOutput: 'ollama', thinking: 'none' }).complete(REQUEST, { key: KEY });
    expect(server.requests[0]!.body.format).toEqual(SCHEMA);
    expect(server.requests[0]!.body.messages[1].content).toBe('Vote now.');
  });

  it('waits out a 429 for at least its Retry-After, then succeeds and counts one retry', async () => {
    const server = await serve((r) =>
      r.index === 0 ? { status: 429, headers: { 'retry-after': '1' } } : { content: '{"decision":"continue"}' },
    );
    const started = performance.now();
    const reply = await backend([server.url]).complete(REQUEST, { key: KEY });
    expect(performance.now() - started).toBeGreaterThanOrEqual(950);
    expect(reply).toMatchObject({ content: '{"decision":"continue"}', retries: 1 });
  });

  it('retries a 500 with backoff and reports the retries', async () => {
    const server = await serve((r) => (r.index < 2 ? { status: 500 } : { content: '{"decision":"stop"}' }));
    const reply = await backend([server.url]).complete(REQUEST, { key: KEY });
    expect(reply.retries).toBe(2);
    expect(server.requests).toHaveLength(3);
  });

  it('abandons a request that outlasts the timeout and retries it', async () => {
    const server = await serve((r) =>
      r.index === 0 ? { delayMs: 10_000, content: '{"decision":"stop"}' } : { content: '{"decision":"continue"}' },
    );
    const started = performance.now();
    const reply = await backend([server.url], { timeoutMs: 1500 }).complete(REQUEST, { key: KEY });
    expect(reply).toMatchObject({ content: '{"decision":"continue"}', retries: 1 });
    expect(performance.now() - started).toBeLessThan(5_000);
  });

  it('ends with an error naming the endpoint when it keeps answering 503, after the bounded retries', async () => {
    const server = await serve(() => ({ status: 503 }));
    const error = await backend([server.url], { maxRetries: 3 })
      .complete(REQUEST, { key: KEY })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(WitnessError);
    expect((error as WitnessError).message).toContain(server.url);
    expect((error as WitnessError).message).toContain('HTTP 503');
    expect(server.requests).toHaveLength(4);
  });

  it('fails with a clear error instead of hanging when nothing listens on the endpoint', async () => {
    const port = await _closedPort();
    const error = await backend([`http://127.0.0.1:${port}/v1`], { maxRetries: 2 })
      .complete(REQUEST, { key: KEY })
      .catch((e: unknown) => e);
    expect((error as WitnessError).code).toBe('IO');
    expect((error as Error).message).toMatch(/connection failed/);
  });

  it('does not retry a 401 and points at the API key variable', async () => {
    const server = await serve(() => ({ status: 401 }));
    const error = await backend([server.url])
      .complete(REQUEST, { key: KEY })
      .catch((e: unknown) => e);
    expect((error as Error).message).toMatch(/OPENAI_API_KEY/);
    expect(server.requests).toHaveLength(1);
  });

  it('suggests the /v1 suffix when a base URL without it answers 404', async () => {
    const server = await serve(() => ({ status: 404 }));
    const error = await backend([server.url.replace(/\/v1$/, '')])
      .complete(REQUEST, { key: KEY })
      .catch((e: unknown) => e);
    expect((error as Error).message).toMatch(/HTTP 404.*usually ends in \/v1/);
    expect(server.requests).toHaveLength(1);
  });

  it('keeps each endpoint within its concurrency limit and spreads slow requests over all endpoints', async () => {
    const slow: Script = () => ({ delayMs: 100, content: '{"decision":"stop"}' });
    const a = await serve(slow);
    const b = await serve(slow);
    const client = backend([a.url, b.url], { perEndpointConcurrency: 3 });
    const replies = await Promise.all(Array.from({ length: 24 }, () => client.complete(REQUEST, { key: KEY })));
    expect(a.maxInFlight).toBe(3);
    expect(b.maxInFlight).toBe(3);
    expect(a.requests.length + b.requests.length).toBe(24);
    expect(new Set(replies.map((r) => r.endpoint))).toEqual(new Set([a.url, b.url]));
  });

  it('cancels a request in flight when the signal aborts', async () => {
    const server = await serve(() => ({ delayMs: 30_000, content: '{"decision":"stop"}' }));
    const controller = new AbortController();
    const pending = backend([server.url])
      .complete(REQUEST, { key: KEY, signal: controller.signal })
      .catch((e: unknown) => e);
    await server.received(1);
    controller.abort();
    const error = await pending;
    expect((error as WitnessError).code).toBe('CANCELLED');
  });
});

async function _closedPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as { port: number };
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}
