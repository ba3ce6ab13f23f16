/**
 * @module
 * Chat Completions against OpenAI-compatible servers (vLLM, Ollama, llama.cpp's
 * server, hosted APIs) through the `openai` client, with structured output by JSON
 * schema, the study's sampling sent explicitly (top_p, top_k), Qwen3 thinking switched
 * off the study's way by default (thinking.ts), requests spread over endpoints, and bounded
 * retries: 429 / 5xx / timeouts / refused connections back off exponentially with
 * full jitter and honour Retry-After; an endpoint that stays down ends the call with
 * an error naming it, never a hang. Malformed answers are not retried here: that is
 * the engine's job (consensus.md §2), with its own count.
 */
import { APIError, APIConnectionTimeoutError, APIUserAbortError, OpenAI } from 'openai';
import { WitnessError } from '../core/errors.js';
import { trackCall } from './activity.js';
import { EndpointPool, type PooledEndpoint } from './endpoint-pool.js';
import { createNodeFetch } from './node-fetch.js';
import { type ThinkingSwitch, thinkingFor, withNoThinkSuffix } from './thinking.js';
import type { ChatBackend, ChatCallOptions, ChatReply, ChatRequest } from './types.js';

/** How the schema is sent: OpenAI `response_format`, vLLM's older `guided_json`, Ollama's `format`, or not at all. */
export type StructuredOutputMode = 'json_schema' | 'guided_json' | 'ollama' | 'none';
export const STRUCTURED_OUTPUT_MODES: readonly StructuredOutputMode[] = [
  'json_schema',
  'guided_json',
  'ollama',
  'none',
];
export { THINKING_SWITCHES, type ThinkingSwitch } from './thinking.js';

export interface OpenAiCompatibleOptions {
  /** Base URLs, e.g. `http://127.0.0.1:8000/v1`. */
  endpoints: string[];
  model: string;
  apiKey?: string;
  /** Requests in flight per endpoint (default 64). */
  perEndpointConcurrency?: number;
  structuredOutput?: StructuredOutputMode;
  /** Default `auto`: the ` /no_think` suffix for Qwen3 models, as the study did. */
  thinking?: ThinkingSwitch;
  /** Per-request timeout, ms (default 120 000). */
  timeoutMs?: number;
  /** Transport retries per call after the first try (default 5). */
  maxRetries?: number;
  /** First backoff, ms (default 500); doubles per retry up to `maxBackoffMs` (default 20 000). */
  backoffMs?: number;
  maxBackoffMs?: number;
  /** Extra JSON fields merged into every request body (e.g. `min_p`); they win over the request's. */
  extraBody?: Record<string, unknown>;
}

const MAX_RETRY_AFTER_MS = 60_000;

export class OpenAiCompatibleBackend implements ChatBackend {
  private readonly pool: EndpointPool<OpenAI>;
  private readonly fetch: ReturnType<typeof createNodeFetch>;
  private readonly o: Required<Omit<OpenAiCompatibleOptions, 'apiKey' | 'extraBody' | 'thinking'>> &
    Pick<OpenAiCompatibleOptions, 'extraBody'>;
  private readonly thinking: Exclude<ThinkingSwitch, 'auto'>;

  constructor(options: OpenAiCompatibleOptions) {
    if (options.endpoints.length === 0)
      throw new WitnessError('USAGE', 'No endpoint: give --endpoint URL (e.g. http://127.0.0.1:8000/v1).');
    this.o = {
      endpoints: options.endpoints,
      model: options.model,
      perEndpointConcurrency: options.perEndpointConcurrency ?? 64,
      structuredOutput: options.structuredOutput ?? 'json_schema',
      timeoutMs: options.timeoutMs ?? 120_000,
      maxRetries: options.maxRetries ?? 5,
      backoffMs: options.backoffMs ?? 500,
      maxBackoffMs: options.maxBackoffMs ?? 20_000,
      extraBody: options.extraBody,
    };
    this.thinking = thinkingFor(options.model, options.thinking ?? 'auto');
    // The client's own retries are off: ours count retries per call and move to another endpoint.
    // A lean fetch over node:http: the global fetch costs several times more CPU per call.
    const apiKey = options.apiKey ?? 'none';
    this.fetch = createNodeFetch(this.o.perEndpointConcurrency);
    this.pool = new EndpointPool(
      options.endpoints.map((url) => ({
        url,
        client: new OpenAI({ baseURL: url, apiKey, maxRetries: 0, timeout: this.o.timeoutMs, fetch: this.fetch }),
      })),
      this.o.perEndpointConcurrency,
    );
  }

  /** The request body exactly as sent (exported for tests and `witness sim prompts`). */
  body(request: ChatRequest): Record<string, unknown> {
    const suffix = this.thinking === 'suffix' || this.thinking === 'both';
    const messages = suffix ? withNoThinkSuffix(request.messages) : request.messages.map((m) => ({ ...m }));
    const body: Record<string, unknown> = {
      model: this.o.model,
      messages,
      temperature: request.temperature,
      max_tokens: request.maxTokens,
    };
    if (request.topP !== undefined) body.top_p = request.topP;
    if (request.topK !== undefined) body.top_k = request.topK;
    if (this.thinking === 'kwargs' || this.thinking === 'both') body.chat_template_kwargs = { enable_thinking: false };
    switch (this.o.structuredOutput) {
      case 'json_schema':
        body.response_format = {
          type: 'json_schema',
          json_schema: { name: request.schemaName, strict: true, schema: request.schema },
        };
        break;
      case 'guided_json':
        body.guided_json = request.schema;
        break;
      case 'ollama':
        body.format = request.schema;
        break;
      case 'none':
        break;
    }
    return { ...body, ...this.o.extraBody };
  }

  async complete(request: ChatRequest, { signal }: ChatCallOptions): Promise<ChatReply> {
    const body = this.body(request);
    let lastError: unknown;
    let failed: PooledEndpoint<OpenAI> | undefined;
    const call = trackCall(this.o.endpoints[0] as string); // what the progress line says it waits for
    try {
      for (let retry = 0; retry <= this.o.maxRetries; retry++) {
        const endpoint = await this._acquire(signal, failed);
        call.endpoint = endpoint.url;
        const started = performance.now();
        try {
          const completion = await endpoint.client.chat.completions.create(body as never, { signal });
          const latencyMs = Math.round(performance.now() - started);
          const choice = (completion as OpenAI.ChatCompletion).choices?.[0];
          const usage = (completion as OpenAI.ChatCompletion).usage;
          this.pool.succeeded(endpoint);
          return {
            content: choice?.message?.content ?? '',
            usage: { promptTokens: usage?.prompt_tokens ?? 0, completionTokens: usage?.completion_tokens ?? 0 },
            latencyMs,
            retries: retry,
            endpoint: endpoint.url,
          };
        } catch (error) {
          if (signal?.aborted || error instanceof APIUserAbortError) throw _aborted(signal);
          const wait = _retryDelay(error, retry, this.o.backoffMs, this.o.maxBackoffMs);
          if (wait === undefined) throw _fatal(error, endpoint.url);
          lastError = error;
          failed = endpoint;
          call.retries = retry + 1;
          call.lastError = _describe(error);
          this.pool.failed(endpoint, Date.now() + wait, this.o.backoffMs, this.o.maxBackoffMs);
          if (retry < this.o.maxRetries) await _sleep(wait, signal);
        } finally {
          this.pool.release(endpoint);
        }
      }
      throw new WitnessError(
        'IO',
        `The LLM endpoint${this.o.endpoints.length > 1 ? 's' : ''} ${this.o.endpoints.join(', ')} failed ${this.o.maxRetries + 1} times in a row (last: ${_describe(lastError)}). Check that the server is up and serves model "${this.o.model}", then rerun to resume.`,
        { cause: lastError },
      );
    } finally {
      call.end();
    }
  }

  async close(): Promise<void> {
    this.fetch.close();
  }

  private async _acquire(
    signal: AbortSignal | undefined,
    avoid: PooledEndpoint<OpenAI> | undefined,
  ): Promise<PooledEndpoint<OpenAI>> {
    try {
      return await this.pool.acquire(signal, avoid);
    } catch {
      throw _aborted(signal);
    }
  }
}

/** Milliseconds to wait before retrying, or undefined when the error is not worth a retry. */
function _retryDelay(error: unknown, retry: number, baseMs: number, maxMs: number): number | undefined {
  const jittered = Math.random() * Math.min(maxMs, baseMs * 2 ** retry);
  if (!(error instanceof APIError)) return undefined;
  const status = error.status;
  // No status: connection refused/reset or a timeout (APIConnectionError and subclasses).
  if (status !== undefined && status !== 408 && status !== 409 && status !== 429 && status < 500) return undefined;
  const retryAfter = _retryAfterMs(error.headers);
  // A server asking for more than a minute is treated as down for now: wait a minute, then try again.
  return retryAfter !== undefined ? Math.max(Math.min(retryAfter, MAX_RETRY_AFTER_MS), jittered) : jittered;
}

function _retryAfterMs(headers: Headers | undefined): number | undefined {
  const ms = Number(headers?.get('retry-after-ms'));
  if (headers?.get('retry-after-ms') && Number.isFinite(ms)) return ms;
  const value = headers?.get('retry-after');
  if (!value) return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return seconds * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}

function _fatal(error: unknown, url: string): WitnessError {
  const status = error instanceof APIError ? error.status : undefined;
  let hint = '';
  if (status === 401 || status === 403)
    hint = ' Set the API key in OPENAI_API_KEY (or the variable named by --api-key-env).';
  if (status === 404)
    hint = url.endsWith('/v1')
      ? ' Check the model name.'
      : ' The base URL usually ends in /v1 (e.g. http://127.0.0.1:8000/v1).';
  return new WitnessError('IO', `The LLM endpoint ${url} refused the request: ${_describe(error)}.${hint}`, {
    cause: error,
  });
}

function _describe(error: unknown): string {
  if (error instanceof APIConnectionTimeoutError) return 'timed out';
  if (error instanceof APIError)
    return error.status ? `HTTP ${error.status} ${error.message}` : `connection failed (${error.message})`;
  return error instanceof Error ? error.message : String(error);
}

function _aborted(signal: AbortSignal | undefined): WitnessError {
  return new WitnessError('CANCELLED', 'The LLM request was cancelled (interrupted).', { cause: signal?.reason });
}

function _sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(_aborted(signal));
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
