/**
 * @module
 * Model-backed sweeps as a library feature (docs/llm.md): `openModelAgents` opens one
 * backend per agent kind and model the experiment needs (OpenAI-compatible servers, a
 * GGUF file, or a cassette to replay), records every call when asked, checks a replay
 * against the recorded prompt pack and settings, and returns the agent factory that
 * `runExperiment` takes. `witness sim` only turns its flags into these options.
 */
import { setMaxListeners } from 'node:events';
import { isAbsolute, resolve } from 'node:path';
import { WitnessError } from '../../../core/errors.js';
import { hashFileInto } from '../../../core/hash.js';
import { type CassetteRecorder, openCassetteRecorder, ReplayBackend } from '../../../llm/cassette.js';
import {
  OpenAiCompatibleBackend,
  type StructuredOutputMode,
  type ThinkingSwitch,
} from '../../../llm/openai-compatible.js';
import type { ChatBackend } from '../../../llm/types.js';
import { expandCells } from '../../experiment/plan.js';
import type { AgentFactory, CassetteLink } from '../../experiment/play.js';
import { type Experiment, parseExperiment } from '../../experiment/schema.js';
import { loadPromptPack, type PromptCue, type PromptPack } from '../../prompts/pack.js';
import { type ExternalPrompts, openReferencePrompts, REFERENCE_PREFIX } from '../../prompts/reference.js';
import type { SamplingOverrides } from './agent.js';
import { createRunAgents } from './population.js';

export interface ModelAgentsOptions {
  /** OpenAI-compatible base URLs for `llm` agents, e.g. `http://127.0.0.1:8000/v1`; requests go to the least loaded. */
  endpoints?: string[];
  apiKey?: string;
  structuredOutput?: StructuredOutputMode;
  /** How Qwen3 thinking is switched off (default `auto`, the study's way). */
  thinking?: ThinkingSwitch;
  /** Requests in flight per endpoint (default 64). */
  perEndpointConcurrency?: number;
  /** Per-request timeout, ms (default 120 000). */
  timeoutMs?: number;
  /** Transport retries per call (default 5). */
  maxRetries?: number;
  /** `embedded` agents (a GGUF file through llama.cpp). */
  embedded?: { contextSize?: number; threads?: number; sequences?: number };
  /** Folder relative GGUF paths are read from (default: the current directory). */
  baseDir?: string;
  /** Sampling beyond the pack's (temperatures, max tokens, top_p, top_k). Replays take the recorded ones. */
  sampling?: SamplingOverrides;
  /** Extra cues the study's prompts do not give (off by default). Replays take the recorded ones. */
  cues?: readonly PromptCue[];
  /**
   * Prompt pack folder (default: the built-in pack), or `reference:PATH` for the prompts a
   * checkout of the study's code builds (docs/prompts.md). A replay refuses prompts other
   * than the recorded ones.
   */
  prompts?: string;
  /** Append every request and reply to this cassette (created, or continued on resume). */
  record?: string;
  /** Answer every call from this cassette instead of a model; the experiment must be the recorded one (`replayExperiment`). */
  replay?: string;
  /** Cancels every request in flight (Ctrl-C). */
  signal?: AbortSignal;
}

/** The agent factory of a model-backed sweep; close it when the sweep ends. */
export interface ModelAgents extends AgentFactory {
  readonly pack: PromptPack;
  close(): Promise<void>;
}

/** The model-backed kinds and models the experiment's cells need, once each. */
export function modelBackends(experiment: Experiment): { kind: 'llm' | 'embedded'; model: string }[] {
  const seen = new Map<string, { kind: 'llm' | 'embedded'; model: string }>();
  for (const cell of expandCells(experiment)) {
    for (const kind of [cell.agents, cell.byzantine > 0 ? (cell.byzantineAgents ?? cell.agents) : 'policy']) {
      if (kind !== 'policy' && cell.model !== undefined)
        seen.set(`${kind}\0${cell.model}`, { kind, model: cell.model });
    }
  }
  return [...seen.values()];
}

/** The experiment a cassette was recorded for, from its header. */
export function replayExperiment(cassette: string): Experiment {
  return parseExperiment(new ReplayBackend(cassette).meta.experiment, `the experiment recorded in ${cassette}`);
}

/**
 * Opens every backend the sweep needs before the first run.
 * @example
 * const agents = await openModelAgents(experiment, { endpoints: ['http://127.0.0.1:8000/v1'], record: 'sweep.cassette.jsonl' });
 * try { await runExperiment({ experiment, out: 'sweep.jsonl', agents, concurrency: 32 }); } finally { await agents.close(); }
 */
export async function openModelAgents(experiment: Experiment, options: ModelAgentsOptions): Promise<ModelAgents> {
  const needed = modelBackends(experiment);
  if (options.record && options.replay)
    throw new WitnessError(
      'USAGE',
      'Record or replay, not both: a replay makes no model calls (--record and --agents replay).',
    );
  if (needed.length === 0 && !options.replay) {
    throw new WitnessError(
      'USAGE',
      `Experiment "${experiment.name}" has no model-backed agents (agents: llm or embedded); rule-based runs need no backend and are reproducible from their seed alone (so --record does not apply).`,
    );
  }
  // Every request in flight listens to the sweep's signal (Ctrl-C cancels them all).
  if (options.signal) setMaxListeners(0, options.signal);
  const replay = options.replay ? new ReplayBackend(options.replay) : undefined;
  const sampling = replay ? ((replay.meta.sampling ?? {}) as SamplingOverrides) : (options.sampling ?? {});
  const cues = replay ? ((replay.meta.prompt_cues ?? []) as PromptCue[]) : [...(options.cues ?? [])];
  const { pack, external } = await _prompts(options, experiment, cues, replay);
  const prompts = external
    ? { name: external.name, hash: external.hash }
    : { name: pack.manifest.name, hash: pack.hash };
  const backends = new Map<string, ChatBackend>();
  let recorder: CassetteRecorder | undefined;
  const close = async () => {
    for (const b of backends.values()) await b.close();
    recorder?.close();
    await external?.close();
  };
  try {
    recorder = options.record
      ? openCassetteRecorder(options.record, { experiment, sampling, prompt_cues: cues, prompts })
      : undefined;
    for (const { kind, model } of needed) {
      const backend = replay ?? (kind === 'llm' ? _openAi(options, model) : await _embedded(options, model));
      backends.set(`${kind}\0${model}`, recorder ? recorder.wrap(backend) : backend);
    }
  } catch (error) {
    await close();
    throw error;
  }
  const backendFor = (kind: 'llm' | 'embedded', model: string) => backends.get(`${kind}\0${model}`)!;
  const cassette = recorder ? _recorded(recorder) : options.replay ? _replayed(options.replay) : undefined;
  return Object.freeze({
    pack,
    provenance: { prompts: cues.length ? { ...prompts, cues } : prompts, ...(cassette ? { cassette } : {}) },
    forRun: (run: Parameters<AgentFactory['forRun']>[0]) =>
      createRunAgents(run, {
        pack,
        ...(external ? { external } : {}),
        backendFor,
        sampling,
        cues,
        signal: options.signal,
      }),
    close,
  });
}

/** The pack, and the reference checkout's renderer when `prompts` is `reference:PATH`; a replay's must be the recorded ones. */
async function _prompts(
  o: ModelAgentsOptions,
  experiment: Experiment,
  cues: readonly PromptCue[],
  replay: ReplayBackend | undefined,
): Promise<{ pack: PromptPack; external?: ExternalPrompts }> {
  const reference = o.prompts?.startsWith(REFERENCE_PREFIX) ? o.prompts.slice(REFERENCE_PREFIX.length) : undefined;
  const pack = loadPromptPack(reference === undefined ? o.prompts : undefined);
  if (reference !== undefined) _checkReferenceUse(reference, experiment, cues);
  const external =
    reference === undefined
      ? undefined
      : await openReferencePrompts(resolve(o.baseDir ?? process.cwd(), reference), { pack });
  const missing = external && expandCells(experiment).find((c) => !external.awareness.includes(c.awareness));
  if (missing) {
    await external.close();
    throw new WitnessError(
      'USAGE',
      `The reference checkout at ${external.dir} has no ${missing.awareness} prompts (only ${external.awareness.join(', ')}): run with --awareness ${external.awareness.join(',')}.`,
    );
  }
  const used = external ?? { name: pack.manifest.name, hash: pack.hash };
  const recorded = replay?.meta.prompts as { hash?: string; name?: string } | undefined;
  if (recorded?.hash && recorded.hash !== used.hash) {
    await external?.close();
    throw new WitnessError(
      'USAGE',
      `The cassette was recorded with another prompt pack ("${recorded.name}", hash ${recorded.hash.slice(0, 12)}…); give the same --prompts (pack folder, or reference:PATH of the same checkout).`,
    );
  }
  return external ? { pack, external } : { pack };
}

function _checkReferenceUse(reference: string, experiment: Experiment, cues: readonly PromptCue[]): void {
  if (!reference)
    throw new WitnessError(
      'USAGE',
      "--prompts reference: needs the path of a checkout of the study's code, e.g. --prompts reference:./byzantine-consensus-llm-agents.",
    );
  if (cues.length)
    throw new WitnessError(
      'USAGE',
      "--prompt-cue adds cues to our own prompt pack; the reference's prompts have none (drop --prompt-cue or --prompts reference:).",
    );
  if (expandCells(experiment).some((c) => c.decide?.endsWith(':confidence'))) {
    throw new WitnessError(
      'USAGE',
      "The confidence rule needs a confidence field the reference's prompts do not ask for; use a prompt pack (not --prompts reference:) with --decide rule:confidence.",
    );
  }
}

function _recorded(recorder: CassetteRecorder): CassetteLink {
  return { role: 'recorded', digest: () => recorder.digest(), sync: () => recorder.sync() };
}

/** A replayed cassette is read, never written: its digest is taken once. */
function _replayed(path: string): CassetteLink {
  const digest = hashFileInto(path).digest();
  return { role: 'replayed', digest: () => digest, sync: () => {} };
}

function _openAi(o: ModelAgentsOptions, model: string): ChatBackend {
  if (!o.endpoints?.length)
    throw new WitnessError(
      'USAGE',
      'LLM agents need --endpoint URL (an OpenAI-compatible server, e.g. http://127.0.0.1:8000/v1).',
    );
  return new OpenAiCompatibleBackend({
    endpoints: o.endpoints,
    model,
    apiKey: o.apiKey,
    perEndpointConcurrency: o.perEndpointConcurrency,
    structuredOutput: o.structuredOutput,
    thinking: o.thinking,
    timeoutMs: o.timeoutMs,
    maxRetries: o.maxRetries,
  });
}

async function _embedded(o: ModelAgentsOptions, model: string): Promise<ChatBackend> {
  const { EmbeddedBackend } = await import('../../../llm/embedded.js');
  const modelPath = isAbsolute(model) ? model : resolve(o.baseDir ?? process.cwd(), model);
  return EmbeddedBackend.open({ modelPath, ...o.embedded, thinking: o.thinking });
}
