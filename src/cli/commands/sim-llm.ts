/**
 * @module
 * The model-backed side of `witness sim` (docs/llm.md): options for LLM, embedded
 * and replayed agents, how they map onto the experiment grid, and their translation
 * into `openModelAgents` (src/sim), which opens the backends and records.
 */
import { type Command, Option } from 'commander';
import { WitnessError } from '../../core/errors.js';
import {
  STRUCTURED_OUTPUT_MODES,
  type StructuredOutputMode,
  THINKING_SWITCHES,
  type ThinkingSwitch,
} from '../../llm/openai-compatible.js';
import type { SamplingOverrides } from '../../sim/agents/llm/index.js';
import {
  type ModelAgents,
  modelBackends,
  openModelAgents,
  replayExperiment,
} from '../../sim/agents/llm/model-agents.js';
import type { Experiment, ExperimentInput } from '../../sim/experiment/schema.js';
import { PROMPT_CUES, type PromptCue } from '../../sim/prompts/pack.js';
import { REFERENCE_PREFIX } from '../../sim/prompts/reference.js';
import { wholeNumber } from '../args.js';
import { type CliContext, resolvePath } from '../context.js';
import {
  type AgentSpec,
  agentSpec,
  cueList,
  endpointList,
  modelList,
  positiveNumber,
  samplingValue,
  temperature,
} from './sim-llm-args.js';

export const AGENTS_CHOICES = ['policy', 'llm', 'embedded', 'replay'] as const;

export interface LlmCliOptions {
  agents?: (typeof AGENTS_CHOICES)[number];
  honestAgents?: AgentSpec;
  byzantineAgents?: AgentSpec;
  model?: string[];
  endpoint?: string[];
  apiKeyEnv: string;
  structuredOutput: StructuredOutputMode;
  thinkingOff: ThinkingSwitch;
  endpointConcurrency: number;
  requestTimeout: number;
  maxRetries: number;
  decideTemperature?: number;
  voteTemperature?: number;
  decideMaxTokens?: number;
  voteMaxTokens?: number;
  topP?: number | 'off';
  topK?: number | 'off';
  promptCue?: PromptCue[];
  prompts?: string;
  record?: string;
  cassette?: string;
  contextSize: number;
  threads?: number;
  sequences: number;
}

/** Adds the agent options to `witness sim`. */
export function addLlmOptions(command: Command): Command {
  return command
    .addOption(
      new Option(
        '--agents <kind>',
        'who answers: policy (rule-based), llm (OpenAI-compatible server), embedded (GGUF via llama.cpp), replay (a cassette)',
      ).choices(AGENTS_CHOICES),
    )
    .option(
      '--honest-agents <spec>',
      'honest agents only: llm, embedded or policy:NAME (mixed populations)',
      agentSpec('honest'),
    )
    .option(
      '--byzantine-agents <spec>',
      'Byzantine agents only: llm, embedded or policy:NAME, e.g. policy:split',
      agentSpec('byzantine'),
    )
    .option(
      '--model <name>',
      'model name on the server (llm) or GGUF file (embedded); comma list for a grid',
      modelList,
    )
    .option(
      '--endpoint <url>',
      'OpenAI-compatible base URL, e.g. http://127.0.0.1:8000/v1 (repeat to spread load)',
      endpointList,
    )
    .option('--api-key-env <VAR>', 'environment variable holding the API key', 'OPENAI_API_KEY')
    .addOption(
      new Option(
        '--structured-output <mode>',
        'how the JSON schema is sent: json_schema (response_format), guided_json (older vLLM), ollama (format), none',
      )
        .choices(STRUCTURED_OUTPUT_MODES)
        .default('json_schema'),
    )
    .addOption(
      new Option(
        '--thinking-off <how>',
        "switch Qwen3 thinking off: auto (the study's way: a /no_think suffix for Qwen3 models), kwargs (chat_template_kwargs), suffix, both, none",
      )
        .choices(THINKING_SWITCHES)
        .default('auto'),
    )
    .option('--endpoint-concurrency <n>', 'requests in flight per endpoint', wholeNumber(1), 64)
    .option(
      '--request-timeout <s>',
      'seconds before a request is abandoned and retried',
      positiveNumber('--request-timeout'),
      120,
    )
    .option('--max-retries <n>', 'retries of a request after 429, 5xx, timeouts', wholeNumber(0), 5)
    .option(
      '--decide-temperature <t>',
      'sampling temperature of proposals (default 0.5)',
      temperature('--decide-temperature'),
    )
    .option('--vote-temperature <t>', 'sampling temperature of votes (default 0.3)', temperature('--vote-temperature'))
    .option('--decide-max-tokens <n>', 'max tokens of a proposal (default 300)', wholeNumber(1))
    .option('--vote-max-tokens <n>', 'max tokens of a vote (default 200)', wholeNumber(1))
    .option(
      '--top-p <p>',
      'top_p sent with every request (default 1, as in the study); off sends none',
      samplingValue('--top-p', (n) => n > 0 && n <= 1, 'a number above 0 and at most 1'),
    )
    .option(
      '--top-k <k>',
      "top_k sent with every request (default -1: no limit, as in the study); off sends none, for servers that refuse the field (OpenAI's API)",
      samplingValue('--top-k', (n) => Number.isInteger(n) && n >= -1, 'a whole number from -1 up'),
    )
    .option(
      '--prompt-cue <cues>',
      `extra cues the study's prompts do not give, comma list: ${PROMPT_CUES.join(', ')} (default none; docs/fidelity.md)`,
      cueList,
    )
    .option(
      '--prompts <dir>',
      "prompt pack folder (default: the built-in pack), or reference:PATH for the prompts of a checkout of the study's code, built by its own functions through python3 (docs/prompts.md)",
    )
    .option('--record <file>', 'append every model request and reply to this cassette')
    .option('--cassette <file>', 'the cassette --agents replay answers from')
    .option('--context-size <n>', 'embedded: tokens of context', wholeNumber(256), 8192)
    .option('--threads <n>', 'embedded: CPU threads (default: every core)', wholeNumber(1))
    .option('--sequences <n>', 'embedded: sequences evaluated in parallel', wholeNumber(1), 1);
}

/** Applies the agent options to a grid (before validation). */
export function applyAgentOptions(grid: ExperimentInput['grid'], o: LlmCliOptions): void {
  if (o.agents && o.agents !== 'replay') grid.agents = o.agents;
  if (o.honestAgents) {
    grid.agents = o.honestAgents.kind;
    if (o.honestAgents.name) grid.honestPolicy = o.honestAgents.name;
  }
  if (o.byzantineAgents) {
    grid.byzantineAgents = o.byzantineAgents.kind;
    if (o.byzantineAgents.name) grid.byzantineStrategy = o.byzantineAgents.name;
  }
  if (o.model) grid.model = o.model;
}

/** Checks combinations no single option parser can see. */
export function checkAgentOptions(
  o: LlmCliOptions,
  file: string | undefined,
  preset: string | undefined,
  out: string | undefined,
): void {
  if (o.agents === 'replay') {
    if (!o.cassette)
      throw new WitnessError('USAGE', '--agents replay needs --cassette FILE (a cassette written with --record).');
    if (file || preset)
      throw new WitnessError(
        'USAGE',
        '--agents replay takes the experiment from the cassette: give no experiment file or --preset.',
      );
    if (o.record)
      throw new WitnessError(
        'USAGE',
        '--record and --agents replay do not go together: a replay makes no model calls.',
      );
    if (!out)
      throw new WitnessError(
        'USAGE',
        "--agents replay needs --out FILE: a new results file (the recorded sweep's own file already holds every run).",
      );
  } else if (o.cassette) {
    throw new WitnessError('USAGE', '--cassette is for --agents replay; to record a sweep, use --record FILE.');
  }
}

/** The experiment a replay reproduces, from the cassette's header. */
export function replayExperimentOf(ctx: CliContext, o: LlmCliOptions): Experiment {
  return replayExperiment(resolvePath(ctx, o.cassette!));
}

/** The agent factory of a model-backed sweep (none for a rule-based one), from the flags. */
export async function prepareAgents(
  ctx: CliContext,
  experiment: Experiment,
  o: LlmCliOptions,
  signal: AbortSignal,
): Promise<ModelAgents | undefined> {
  if (modelBackends(experiment).length === 0 && o.agents !== 'replay') {
    if (o.record)
      throw new WitnessError(
        'USAGE',
        '--record needs model-backed agents (--agents llm or embedded); rule-based runs are reproducible from their seed alone.',
      );
    return undefined;
  }
  const replaying = o.agents === 'replay';
  return openModelAgents(experiment, {
    endpoints: o.endpoint,
    apiKey: process.env[o.apiKeyEnv],
    structuredOutput: o.structuredOutput,
    thinking: o.thinkingOff,
    perEndpointConcurrency: o.endpointConcurrency,
    timeoutMs: Math.round(o.requestTimeout * 1000),
    maxRetries: o.maxRetries,
    embedded: { contextSize: o.contextSize, threads: o.threads, sequences: o.sequences },
    baseDir: ctx.io.cwd,
    sampling: _sampling(o),
    cues: o.promptCue,
    // `reference:PATH` is resolved against baseDir by openModelAgents.
    prompts: o.prompts && !o.prompts.startsWith(REFERENCE_PREFIX) ? resolvePath(ctx, o.prompts) : o.prompts,
    record: o.record ? resolvePath(ctx, o.record) : undefined,
    replay: replaying ? resolvePath(ctx, o.cassette!) : undefined,
    signal,
  });
}

function _sampling(o: LlmCliOptions): SamplingOverrides {
  const s: SamplingOverrides = {};
  if (o.decideTemperature !== undefined || o.decideMaxTokens !== undefined)
    s.decide = _defined({ temperature: o.decideTemperature, maxTokens: o.decideMaxTokens });
  if (o.voteTemperature !== undefined || o.voteMaxTokens !== undefined)
    s.vote = _defined({ temperature: o.voteTemperature, maxTokens: o.voteMaxTokens });
  if (o.topP !== undefined) s.topP = o.topP === 'off' ? null : o.topP;
  if (o.topK !== undefined) s.topK = o.topK === 'off' ? null : o.topK;
  return s;
}

function _defined<T extends Record<string, unknown>>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}
