/**
 * @module
 * `witness sim prompts`: prints what LLM agents would be sent in a sample game state
 * (round 3 of 4 agents, one Byzantine), rendered from a prompt pack, so a pack can be
 * read and checked without a model: for each question its system and user message
 * (the proposal and the vote each have their own system prompt, as in the reference).
 */
import { Command, Option } from 'commander';
import { OpenAiCompatibleBackend, STRUCTURED_OUTPUT_MODES, type StructuredOutputMode, THINKING_SWITCHES, type ThinkingSwitch } from '../../llm/openai-compatible.js';
import type { ChatRequest } from '../../llm/types.js';
import { loadPromptPack, type PromptCue } from '../../sim/prompts/pack.js';
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
    .description('print the prompts and JSON schemas LLM agents get, rendered for a sample game state (round 3, 4 agents, 1 Byzantine)')
    .option('--prompts <dir>', 'prompt pack folder (default: the built-in pack)')
    .addOption(new Option('--awareness <variant>', 'only this awareness variant').choices(['may_exist', 'none_exist']))
    .addOption(new Option('--role <role>', 'only this role').choices(['honest', 'byzantine']))
    .addOption(new Option('--stage <stage>', 'only this question').choices(['decide', 'vote']))
    .option('--range <lo..hi>', 'value range of the sample game (default 0..50)', valueRange)
    .option('--prompt-cue <cues>', 'with the extra cues the study\'s prompts do not give (rounds-left, agent-count)', cueList)
    .option('--retry', 'as a retry in a single follow-up (second try), with the retry notice')
    .option('--body', 'print the HTTP request bodies an OpenAI-compatible server would get')
    .option('--model <name>', 'with --body: the model name (it decides the auto thinking switch)', 'Qwen/Qwen3-14B')
    .addOption(new Option('--structured-output <mode>', 'with --body: how the schema is sent').choices(STRUCTURED_OUTPUT_MODES).default('json_schema'))
    .addOption(new Option('--thinking-off <how>', 'with --body: how Qwen3 thinking is switched off').choices(THINKING_SWITCHES).default('auto'))
    .option('--json', 'print the rendered requests as JSON')
    .addHelpText('after', '\nExamples:\n  $ witness sim prompts --role honest --stage vote\n  $ witness sim prompts --prompts ./my-pack --awareness none_exist\n  $ witness sim prompts --body --thinking-off suffix --stage decide --role byzantine')
    .action((o: PromptsOptions) => {
      const pack = loadPromptPack(o.prompts ? resolvePath(ctx, o.prompts) : undefined);
      const rendered: { awareness: Awareness; role: Role; stage: 'decide' | 'vote'; request: ChatRequest }[] = [];
      for (const awareness of o.awareness ? [o.awareness] : (['may_exist', 'none_exist'] as const)) {
        const views = sampleViews(awareness, o.range);
        for (const role of o.role ? [o.role] : (['honest', 'byzantine'] as const))
          for (const stage of o.stage ? [o.stage] : (['decide', 'vote'] as const)) {
            // The Byzantine prompts do not depend on awareness: print them once.
            if (role === 'byzantine' && !o.awareness && awareness === 'none_exist') continue;
            const attempt = o.retry ? ({ phase: 'single', number: 2, of: 3 } as const) : undefined;
            rendered.push({ awareness, role, stage, request: renderRequest(pack, stage, views[stage][role], { attempt, cues: o.promptCue }) });
          }
      }
      if (o.body) {
        const backend = new OpenAiCompatibleBackend({ endpoints: ['http://127.0.0.1/v1'], model: o.model, structuredOutput: o.structuredOutput, thinking: o.thinkingOff });
        ctx.io.stdout(`${JSON.stringify(rendered.map((r) => ({ awareness: r.awareness, role: r.role, stage: r.stage, body: backend.body(r.request) })), null, 2)}\n`);
        return;
      }
      if (o.json) {
        ctx.io.stdout(`${JSON.stringify({ pack: { name: pack.manifest.name, hash: pack.hash, dir: pack.dir }, prompts: rendered }, null, 2)}\n`);
        return;
      }
      ctx.io.stdout(`Prompt pack "${pack.manifest.name}" (${pack.dir}), sha256 ${pack.hash.slice(0, 16)}…\n`);
      for (const { awareness, role, stage, request } of rendered) {
        const sampling = `temperature ${request.temperature} · max tokens ${request.maxTokens} · top_p ${request.topP ?? 'not sent'} · top_k ${request.topK ?? 'not sent'}`;
        ctx.io.stdout(`\n===== ${stage} · ${role} · ${role === 'honest' ? awareness : 'any awareness'} · ${sampling} =====\n`);
        for (const m of request.messages) ctx.io.stdout(`----- ${m.role} -----\n${m.content.trimEnd()}\n`);
        ctx.io.stdout(`----- schema (${request.schemaName}) -----\n${JSON.stringify(request.schema)}\n`);
      }
    });
}
