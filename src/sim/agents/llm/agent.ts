/**
 * @module
 * An LLM behind the engine's `Agent` interface: each question is rendered from the
 * prompt pack, sent to a chat backend, and the reply is parsed and checked against
 * the pack's schema. A reply that is not JSON or breaks the schema throws
 * `InvalidAnswerError`, so the engine retries it and then applies the fallback
 * (consensus.md §2). Every call is logged for the run's record.
 */
import { checkJson } from '../../../llm/json-check.js';
import type { ChatBackend, ChatCallKey, ChatReply, ChatRequest } from '../../../llm/types.js';
import { InvalidAnswerError } from '../../answers.js';
import type { AgentSeat } from '../../game.js';
import type { PromptPack } from '../../prompts/pack.js';
import { type PromptStage, renderRequest } from '../../prompts/render.js';
import type { Agent, Decision, DecideView, VoteAnswer, VoteChoice, VoteView } from '../../types.js';

/** Per-stage sampling that replaces the pack's (consensus.md §5 defaults live in the pack). */
export interface SamplingOverrides {
  decide?: { temperature?: number; maxTokens?: number };
  vote?: { temperature?: number; maxTokens?: number };
}

/** One call as the results file records it. */
export interface LlmCallRecord {
  agent: string;
  round: number;
  kind: PromptStage;
  attempt: number;
  endpoint: string;
  prompt_tokens: number;
  completion_tokens: number;
  latency_ms: number;
  retries: number;
  /** False when the reply was not JSON or broke the schema (the engine retried it). */
  valid: boolean;
}

export interface LlmAgentOptions {
  seat: AgentSeat;
  run: string;
  pack: PromptPack;
  backend: ChatBackend;
  sampling?: SamplingOverrides;
  signal?: AbortSignal;
  /** Receives every finished call. */
  onCall?: (call: LlmCallRecord) => void;
}

export function createLlmAgent(options: LlmAgentOptions): Agent {
  const attempts = new Map<string, number>();
  const ask = async (stage: PromptStage, view: DecideView | VoteView): Promise<Record<string, unknown>> => {
    const request = _withSampling(renderRequest(options.pack, stage, view), options.sampling?.[stage]);
    const slot = `${view.round}/${stage}`;
    const attempt = (attempts.get(slot) ?? 0) + 1;
    attempts.set(slot, attempt);
    const key: ChatCallKey = { run: options.run, agent: view.id, round: view.round, kind: stage, attempt };
    const reply = await options.backend.complete(request, { key, signal: options.signal });
    let parsed: Record<string, unknown> | undefined;
    let problem: string | undefined;
    try {
      parsed = parseModelJson(reply.content);
      problem = checkJson(parsed, request.schema);
    } catch (error) {
      problem = (error as Error).message;
    }
    options.onCall?.(_callRecord(key, reply, problem === undefined));
    if (problem !== undefined || !parsed) throw new InvalidAnswerError(`${view.id} round ${view.round} ${stage}: ${problem}`);
    return parsed;
  };
  return {
    async decide(view: DecideView): Promise<Decision> {
      const a = await ask('decide', view);
      const decision: Decision = { value: a.value as Decision['value'], publicReasoning: _text(a.public_reasoning), internalStrategy: _text(a.internal_strategy) };
      if (typeof a.confidence === 'number') decision.confidence = a.confidence;
      return decision;
    },
    async vote(view: VoteView): Promise<VoteAnswer> {
      const a = await ask('vote', view);
      return { decision: a.decision as VoteChoice };
    },
  };
}

/**
 * The JSON object in a model's reply. Tolerates what servers add around it: an empty
 * or full `<think>…</think>` block (Qwen3) and a Markdown code fence.
 */
export function parseModelJson(content: string): Record<string, unknown> {
  let text = content.trim().replace(/^<think>[\s\S]*?<\/think>/, '').trim();
  const fence = /^```(?:json)?\s*([\s\S]*?)\s*```$/.exec(text);
  if (fence) text = fence[1]!;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new InvalidAnswerError(`reply is not JSON: ${JSON.stringify(text.slice(0, 80))}`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new InvalidAnswerError('reply is JSON but not an object');
  return value as Record<string, unknown>;
}

function _withSampling(request: ChatRequest, o: { temperature?: number; maxTokens?: number } | undefined): ChatRequest {
  if (!o) return request;
  return { ...request, temperature: o.temperature ?? request.temperature, maxTokens: o.maxTokens ?? request.maxTokens };
}

function _text(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

function _callRecord(key: ChatCallKey, reply: ChatReply, valid: boolean): LlmCallRecord {
  return {
    agent: key.agent,
    round: key.round,
    kind: key.kind,
    attempt: key.attempt,
    endpoint: reply.endpoint,
    prompt_tokens: reply.usage.promptTokens,
    completion_tokens: reply.usage.completionTokens,
    latency_ms: reply.latencyMs,
    retries: reply.retries,
    valid,
  };
}
