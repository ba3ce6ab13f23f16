/**
 * @module
 * The vocabulary every chat backend shares: one structured-output request, the key
 * that names a call within a sweep (for cassettes and per-call statistics), and the
 * reply with its token usage, latency, retries and endpoint.
 */

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

/** A JSON Schema (the subset the prompt packs use; see json-check.ts). */
export type JsonSchema = Record<string, unknown>;

/** One request for a JSON answer that must match `schema`. */
export interface ChatRequest {
  messages: ChatMessage[];
  schema: JsonSchema;
  /** Short name of the schema (OpenAI's `json_schema.name`). */
  schemaName: string;
  temperature: number;
  maxTokens: number;
  /** Nucleus sampling, sent when set (the study: 1, so no server default applies). */
  topP?: number;
  /** Top-k limit, sent when set; -1 means none (the study's setting). Some servers refuse the field. */
  topK?: number;
}

/** Which call this is: stable across a rerun of the same run, so cassettes can key on it. */
export interface ChatCallKey {
  run: string;
  agent: string;
  round: number;
  kind: 'decide' | 'vote';
  /** 1-based try within the engine's retries for a well-formed answer. */
  attempt: number;
}

export interface ChatUsage {
  promptTokens: number;
  completionTokens: number;
}

export interface ChatReply {
  /** The model's raw text (expected to be JSON). */
  content: string;
  usage: ChatUsage;
  /** Wall time of the successful request, ms (from the cassette when replayed). */
  latencyMs: number;
  /** Transport-level retries before the reply (429, 5xx, timeouts). */
  retries: number;
  /** Which endpoint answered (a URL, `embedded`, or the recorded one when replayed). */
  endpoint: string;
}

export interface ChatCallOptions {
  key: ChatCallKey;
  signal?: AbortSignal;
}

/** Anything that answers chat requests: an OpenAI-compatible server, llama.cpp, a cassette. */
export interface ChatBackend {
  complete(request: ChatRequest, options: ChatCallOptions): Promise<ChatReply>;
  /** Releases sockets, models, files. */
  close(): Promise<void>;
}

/** The stable text form of a call key, e.g. `r-0123…/agent_3/r2/vote/1`. */
export function callKeyText(key: ChatCallKey): string {
  return `${key.run}/${key.agent}/r${key.round}/${key.kind}/${key.attempt}`;
}
