/**
 * @module
 * An LLM behind the engine's `Agent` interface: each question is rendered from the
 * prompt pack, sent to a chat backend, and the reply is read and checked the way the
 * reference does (reply.ts). A reply that does not pass throws `InvalidAnswerError`,
 * so the engine retries it on the reference's schedule and then applies the fallback
 * (consensus.md §2). Every call is logged for the run's record.
 */
import type { ChatBackend, ChatCallKey, ChatReply, ChatRequest } from '../../../llm/types.js';
import { InvalidAnswerError } from '../../answers.js';
import type { AgentSeat } from '../../game.js';
import type { PromptCue, PromptPack } from '../../prompts/pack.js';
import type { ExternalPrompts } from '../../prompts/reference.js';
import { type PromptStage, renderRequest } from '../../prompts/render.js';
import type { Agent, Attempt, Decision, DecideView, VoteAnswer, VoteView } from '../../types.js';
import { parseModelJson, readDecision, readVote } from './reply.js';

export { parseModelJson } from './reply.js';

/**
 * Sampling that replaces the pack's (consensus.md §5 defaults live in the pack):
 * per stage, and top_p / top_k for every request (null: send none).
 */
export interface SamplingOverrides {
  decide?: { temperature?: number; maxTokens?: number };
  vote?: { temperature?: number; maxTokens?: number };
  topP?: number | null;
  topK?: number | null;
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
  /** Renders the questions instead of the pack (`--prompts reference:PATH`); the pack still gives sampling and phrases. */
  external?: ExternalPrompts;
  backend: ChatBackend;
  sampling?: SamplingOverrides;
  /** Extra cues the reference's prompts do not give (off by default; docs/fidelity.md). */
  cues?: readonly PromptCue[];
  signal?: AbortSignal;
  /** Receives every finished call. */
  onCall?: (call: LlmCallRecord) => void;
}

export function createLlmAgent(options: LlmAgentOptions): Agent {
  const attempts = new Map<string, number>();
  const { pack, seat } = options;
  const ask = async <T>(
    stage: PromptStage,
    view: DecideView | VoteView,
    attempt: Attempt,
    read: (a: Record<string, unknown>) => T,
  ): Promise<T> => {
    const rendered = options.external
      ? await options.external.render(stage, view, attempt)
      : renderRequest(pack, stage, view, { attempt, cues: options.cues });
    const request = _withSampling(rendered, stage, options.sampling);
    const slot = `${view.round}/${stage}`;
    const n = (attempts.get(slot) ?? 0) + 1;
    attempts.set(slot, n);
    const key: ChatCallKey = { run: options.run, agent: view.id, round: view.round, kind: stage, attempt: n };
    const reply = await options.backend.complete(request, { key, signal: options.signal });
    let answer: T | undefined;
    let problem: InvalidAnswerError | undefined;
    try {
      answer = read(parseModelJson(reply.content));
    } catch (error) {
      if (!(error instanceof InvalidAnswerError)) throw error;
      problem = error;
    }
    options.onCall?.(_callRecord(key, reply, problem === undefined));
    if (problem)
      throw new InvalidAnswerError(`${view.id} round ${view.round} ${stage}: ${problem.message}`, {
        final: problem.final,
        note: problem.note,
      });
    return answer as T;
  };
  return {
    decide: (view: DecideView, attempt: Attempt): Promise<Decision> =>
      ask('decide', view, attempt, (a) => readDecision(a, seat.role, seat.rules.range, attempt, pack.manifest.phrases)),
    vote: async (view: VoteView, attempt: Attempt): Promise<VoteAnswer> => ({
      decision: await ask('vote', view, attempt, (a) => readVote(a, seat.role, attempt)),
    }),
  };
}

function _withSampling(request: ChatRequest, stage: PromptStage, o: SamplingOverrides | undefined): ChatRequest {
  if (!o) return request;
  const s = o[stage];
  const out: ChatRequest = {
    ...request,
    temperature: s?.temperature ?? request.temperature,
    maxTokens: s?.maxTokens ?? request.maxTokens,
  };
  if (o.topP !== undefined) {
    if (o.topP === null) delete out.topP;
    else out.topP = o.topP;
  }
  if (o.topK !== undefined) {
    if (o.topK === null) delete out.topK;
    else out.topK = o.topK;
  }
  return out;
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
