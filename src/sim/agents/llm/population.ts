/**
 * @module
 * Who answers for each seat of a run: the cell says which kind of agent plays each
 * role (`llm`, `embedded` or rule-based `policy`; consensus.md §7, mixed populations
 * allowed), and this factory builds them, all sharing one backend per kind and model.
 * It also collects the run's LLM calls, which become the `llm` block of its record.
 */
import { setMaxListeners } from 'node:events';
import { WitnessError } from '../../../core/errors.js';
import type { ChatBackend } from '../../../llm/types.js';
import type { Cell, PlannedRun } from '../../experiment/plan.js';
import type { RunAgents } from '../../experiment/play.js';
import { AGENT_KINDS, type AgentKind } from '../../experiment/schema.js';
import type { PromptCue, PromptPack } from '../../prompts/pack.js';
import type { ExternalPrompts } from '../../prompts/reference.js';
import type { Role } from '../../types.js';
import { createPolicyAgent } from '../policy/index.js';
import { createLlmAgent, type LlmCallRecord, type SamplingOverrides } from './agent.js';

export { AGENT_KINDS, type AgentKind };

/** The `llm` block of a run's record: totals, then every call, sorted by round, stage, agent and try. */
export interface LlmRunStats {
  model: string | null;
  /** The pack, and the extra cues when any was on (docs/fidelity.md). */
  prompts: { name: string; hash: string; cues?: PromptCue[] };
  calls: number;
  prompt_tokens: number;
  completion_tokens: number;
  latency_ms: number;
  retries: number;
  invalid_replies: number;
  call_log: LlmCallRecord[];
}

export interface LlmPopulationOptions {
  pack: PromptPack;
  /** Renders the questions instead of the pack (`--prompts reference:PATH`). */
  external?: ExternalPrompts;
  /** The backend that serves `model` for a model-backed kind (called once per seat). */
  backendFor: (kind: 'llm' | 'embedded', model: string) => ChatBackend;
  sampling?: SamplingOverrides;
  /** Extra cues the reference does not give (`--prompt-cue`), off by default. */
  cues?: readonly PromptCue[];
  signal?: AbortSignal;
}

/** Agents of one run plus, after the game, the fields to add to its record. */
export interface LlmRunAgents extends RunAgents {
  finish(): { llm?: LlmRunStats };
}

/** The kind of agent that plays `role` in `cell`. */
export function agentKindFor(cell: Pick<Cell, 'agents' | 'byzantineAgents'>, role: Role): AgentKind {
  return role === 'byzantine' ? (cell.byzantineAgents ?? cell.agents) : cell.agents;
}

export function createRunAgents(run: PlannedRun, options: LlmPopulationOptions): LlmRunAgents {
  const { cell } = run;
  const calls: LlmCallRecord[] = [];
  let modelBacked = false;
  let tokens = 0;
  // Every request in flight listens to the sweep's signal; hundreds at once are expected.
  if (options.signal) setMaxListeners(0, options.signal);
  return {
    tokensUsed: () => tokens,
    createAgent(seat) {
      const kind = agentKindFor(cell, seat.role);
      if (kind === 'policy') {
        return createPolicyAgent(seat, {
          honestPolicy: cell.honestPolicy,
          byzantineStrategy: cell.byzantineStrategy ?? 'random',
        });
      }
      if (cell.model === undefined)
        throw new WitnessError('INVALID_INPUT', `Cell "${run.cellKey}" has ${kind} agents but no model.`);
      const backend = options.backendFor(kind, cell.model);
      modelBacked = true;
      const onCall = (call: LlmCallRecord) => {
        calls.push(call);
        tokens += call.prompt_tokens + call.completion_tokens;
      };
      return createLlmAgent({
        seat,
        run: run.id,
        pack: options.pack,
        external: options.external,
        backend,
        sampling: options.sampling,
        cues: options.cues,
        signal: options.signal,
        onCall,
      });
    },
    finish() {
      if (!modelBacked) return {};
      // Calls finish in network order; sort so the record does not depend on timing.
      calls.sort(_byCall);
      const sum = (f: (c: LlmCallRecord) => number) => calls.reduce((s, c) => s + f(c), 0);
      return {
        llm: {
          model: cell.model ?? null,
          prompts: _promptsUsed(options),
          calls: calls.length,
          prompt_tokens: sum((c) => c.prompt_tokens),
          completion_tokens: sum((c) => c.completion_tokens),
          latency_ms: sum((c) => c.latency_ms),
          retries: sum((c) => c.retries),
          invalid_replies: calls.filter((c) => !c.valid).length,
          call_log: calls,
        },
      };
    },
  };
}

/** The pack, or the outside renderer, that wrote the prompts, and the extra cues when any was on. */
function _promptsUsed(options: LlmPopulationOptions): LlmRunStats['prompts'] {
  const used = options.external ?? { name: options.pack.manifest.name, hash: options.pack.hash };
  return options.cues?.length
    ? { name: used.name, hash: used.hash, cues: [...options.cues] }
    : { name: used.name, hash: used.hash };
}

function _byCall(a: LlmCallRecord, b: LlmCallRecord): number {
  if (a.round !== b.round) return a.round - b.round;
  if (a.kind !== b.kind) return a.kind === 'decide' ? -1 : 1;
  const ai = Number(a.agent.slice(a.agent.lastIndexOf('_') + 1));
  const bi = Number(b.agent.slice(b.agent.lastIndexOf('_') + 1));
  return ai !== bi ? ai - bi : a.attempt - b.attempt;
}
