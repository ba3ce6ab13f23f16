/**
 * @module
 * `witness sim prompts`: prints what LLM agents would be sent in a sample game state
 * (round 3 of 4 agents, one Byzantine), rendered from a prompt pack, so a pack can be
 * read and checked without a model: for each question its system and user message
 * (the proposal and the vote each have their own system prompt, as in the reference).
 * With `--prompts reference:PATH` the same state is rendered by a checkout of the
 * reference's own code (sim/prompts/reference.ts).
 */
import { Command, Option } from 'commander';
import {
  OpenAiCompatibleBackend,
  STRUCTURED_OUTPUT_MODES,
  type StructuredOutputMode,
  THINKING_SWITCHES,
  type ThinkingSwitch,
} from '../../llm/openai-compatible.js';
import type { ChatRequest } from '../../llm/types.js';
import { WitnessError } from '../../core/errors.js';
import { loadPromptPack, type PromptCue, type PromptPack } from '../../sim/prompts/pack.js';
import { type ExternalPrompts, openReferencePrompts, REFERENCE_PREFIX } from '../../sim/prompts/reference.js';
import { renderRequest } from '../../sim/prompts/render.js';
import { sampleViews } from '../../sim/prompts/sample.js';
import type { Awareness, Role } from '../../sim/types.js';
import { valueRange } from '../args.js';
import { type CliContext, resolvePath } from '../context.js';
import { cueList } from './sim-llm-args.js';

interface PromptsOptions {
  prompts?: string;
  awareness?: Awareness;
  role?: Role;
  stage?: 'decide' | 'vote';
  range?: [number, number];
  body?: boolean;
  model: string;
  promptCue?: PromptCue[];
  retry?: boolean;
  structuredOutput: StructuredOutputMode;
  thinkingOff: ThinkingSwitch;
  json?: boolean;
}

export function promptsCommand(ctx: CliContext): Command {
  return new Command('prompts')
    .description(
      'print the prompts and JSON schemas LLM agents get, rendered for a sample game state (round 3, 4 agents, 1 Byzantine)',
    )
    .option(
      '--prompts <dir>',
      "prompt pack folder (default: the built-in pack), or reference:PATH (a checkout of the study's code)",
    )
    .addOption(new Option('--awareness <variant>', 'only this awareness variant').choices(['may_exist', 'none_exist']))
    .addOption(new Option('--role <role>', 'only this role').choices(['honest', 'byzantine']))
    .addOption(new Option('--stage <stage>', 'only this question').choices(['decide', 'vote']))
    .option('--range <lo..hi>', 'value range of the sample game (default 0..50)', valueRange)
    .option(
      '--prompt-cue <cues>',
      "with the extra cues the study's prompts do not give (rounds-left, agent-count)",
      cueList,
    )
    .option('--retry', 'as a retry in a single follow-up (second try), with the retry notice')
    .option('--body', 'print the HTTP request bodies an OpenAI-compatible server would get')
    .option('--model <name>', 'with --body: the model name (it decides the auto thinking switch)', 'Qwen/Qwen3-14B')
    .addOption(
      new Option('--structured-output <mode>', 'with --body: how the schema is sent')
        .choices(STRUCTURED_OUTPUT_MODES)
        .default('json_schema'),
    )
    .addOption(
      new Option('--thinking-off <how>', 'with --body: how Qwen3 thinking is switched off')
        .choices(THINKING_SWITCHES)
        .default('auto'),
    )
    .option('--json', 'print the rendered requests as JSON')
    .addHelpText(
      'after',
      '\nExamples:\n  $ witness sim prompts --role honest --stage vote\n  $ witness sim prompts --prompts ./my-pack --awareness none_exist\n  $ witness sim prompts --body --thinking-off suffix --stage decide --role byzantine\n  $ witness sim prompts --prompts reference:./byzantine-consensus-llm-agents --stage vote',
    )
    .action(async (o: PromptsOptions) => {
      const reference = o.prompts?.startsWith(REFERENCE_PREFIX) ? o.prompts.slice(REFERENCE_PREFIX.length) : undefined;
      if (reference !== undefined && o.promptCue?.length)
        throw new WitnessError(
          'USAGE',
          "--prompt-cue adds cues to our own prompt pack; the reference's prompts have none.",
        );
      const pack = loadPromptPack(o.prompts && reference === undefined ? resolvePath(ctx, o.prompts) : undefined);
      const external =
        reference === undefined ? undefined : await openReferencePrompts(resolvePath(ctx, reference), { pack });
      try {
        _print(
          ctx,
          o,
          await _render(o, pack, external),
          external ?? { name: pack.manifest.name, hash: pack.hash, dir: pack.dir },
        );
      } finally {
        await external?.close();
      }
    });
}

type _Rendered = { awareness: Awareness; role: Role; stage: 'decide' | 'vote'; request: ChatRequest }[];

/** Every asked-for question of the sample state, rendered by the pack or by the reference checkout. */
async function _render(o: PromptsOptions, pack: PromptPack, external: ExternalPrompts | undefined): Promise<_Rendered> {
  const rendered: _Rendered = [];
  for (const awareness of o.awareness
    ? [o.awareness]
    : (external?.awareness ?? (['may_exist', 'none_exist'] as const))) {
    const views = sampleViews(awareness, o.range);
    for (const role of o.role ? [o.role] : (['honest', 'byzantine'] as const))
      for (const stage of o.stage ? [o.stage] : (['decide', 'vote'] as const)) {
        // The Byzantine prompts do not depend on awareness: print them once.
        if (role === 'byzantine' && !o.awareness && awareness === 'none_exist') continue;
        const attempt = o.retry ? ({ phase: 'single', number: 2, of: 3 } as const) : undefined;
        const view = views[stage][role];
        const request = external
          ? await external.render(stage, view, attempt)
          : renderRequest(pack, stage, view, { attempt, cues: o.promptCue });
        rendered.push({ awareness, role, stage, request });
      }
  }
  return rendered;
}

function _print(
  ctx: CliContext,
  o: PromptsOptions,
  rendered: _Rendered,
  source: { name: string; hash: string; dir: string },
): void {
  if (o.body) {
    const backend = new OpenAiCompatibleBackend({
      endpoints: ['http://127.0.0.1/v1'],
      model: o.model,
      structuredOutput: o.structuredOutput,
      thinking: o.thinkingOff,
    });
    ctx.io.stdout(
      `${JSON.stringify(
        rendered.map((r) => ({ awareness: r.awareness, role: r.role, stage: r.stage, body: backend.body(r.request) })),
        null,
        2,
      )}\n`,
    );
    return;
  }
  if (o.json) {
    ctx.io.stdout(`${JSON.stringify({ pack: source, prompts: rendered }, null, 2)}\n`);
    return;
  }
  const title =
    source.name === 'reference'
      ? `Prompts of the reference checkout at ${source.dir}`
      : `Prompt pack "${source.name}" (${source.dir})`;
  ctx.io.stdout(`${title}, sha256 ${source.hash.slice(0, 16)}…\n`);
  for (const { awareness, role, stage, request } of rendered) {
    const sampling = `temperature ${request.temperature} · max tokens ${request.maxTokens} · top_p ${request.topP ?? 'not sent'} · top_k ${request.topK ?? 'not sent'}`;
    ctx.io.stdout(
      `\n===== ${stage} · ${role} · ${role === 'honest' ? awareness : 'any awareness'} · ${sampling} =====\n`,
    );
    for (const m of request.messages) ctx.io.stdout(`----- ${m.role} -----\n${m.content.trimEnd()}\n`);
    ctx.io.stdout(`----- schema (${request.schemaName}) -----\n${JSON.stringify(request.schema)}\n`);
  }
}
