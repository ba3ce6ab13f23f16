/**
 * @module
 * OpenCode (`opencode`): project `opencode.json` ("mcp"), `opencode mcp list` shows
 * live status, `opencode run` runs the agent. A model endpoint becomes a provider
 * using the bundled `@ai-sdk/openai-compatible`. OpenCode names MCP tools
 * `<server>_<tool>` and has no built-in mailbox tools. `opencode debug agent build`
 * prints the default agent's built-in tools (not its MCP tools) without a model.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { WitnessError } from '../../core/errors.js';
import { runProcess } from '../process.js';
import type { AgentTask, ProbeContext, RuntimeAdapter, ToolListing } from '../types.js';
import { detectCli, findBin, installFor, readMcpList } from './common.js';

const PROVIDER = 'witness-probe';

function _env(ctx: ProbeContext): NodeJS.ProcessEnv {
  return {
    ...ctx.ws.env,
    OPENCODE_DISABLE_AUTOUPDATE: '1',
    OPENCODE_DISABLE_SHARE: '1',
    OPENCODE_DISABLE_LSP_DOWNLOAD: '1',
    OPENCODE_DISABLE_MODELS_FETCH: '1',
    OPENCODE_DISABLE_DEFAULT_PLUGINS: '1',
    OPENCODE_DISABLE_CLAUDE_CODE: '1',
    OPENCODE_DISABLE_EXTERNAL_SKILLS: '1',
  };
}

export const opencode: RuntimeAdapter = {
  name: 'opencode',
  title: 'OpenCode',
  detect: (ctx) => detectCli('opencode', 'OpenCode', ctx, 'npm i -g opencode-ai'),
  install(ctx) {
    const config = installFor('opencode', ctx);
    if (ctx.modelEndpoint) {
      // Merged after install so install's diff stays about the server entry alone.
      const json = JSON.parse(readFileSync(config.file, 'utf8')) as Record<string, unknown>;
      const model = ctx.model ?? 'default';
      json.provider = {
        ...(json.provider as object | undefined),
        [PROVIDER]: {
          npm: '@ai-sdk/openai-compatible',
          name: 'Witness probe endpoint',
          options: { baseURL: ctx.modelEndpoint, apiKey: process.env.OPENAI_API_KEY ?? 'witness-probe' },
          models: { [model]: { name: model } },
        },
      };
      json.model = `${PROVIDER}/${model}`;
      json.small_model = `${PROVIDER}/${model}`;
      writeFileSync(config.file, `${JSON.stringify(json, null, 2)}\n`);
    }
    return config;
  },
  async connection(ctx) {
    const out = await runProcess(findBin('opencode', ctx)!, ['mcp', 'list'], {
      cwd: ctx.ws.project,
      env: _env(ctx),
      timeoutMs: ctx.timeoutMs,
      signal: ctx.signal,
    });
    if (out.timedOut)
      return {
        status: 'failed',
        detail: `opencode mcp list did not finish within ${Math.round(ctx.timeoutMs / 1000)} s`,
      };
    return readMcpList(
      `${out.stdout}\n${out.stderr}`,
      ctx.serverName,
      new RegExp(`✓\\s+${_re(ctx.serverName)}\\s+connected`),
    );
  },
  async run(ctx, task: AgentTask) {
    const model = ctx.modelEndpoint
      ? ['--model', `${PROVIDER}/${ctx.model ?? 'default'}`]
      : ctx.model
        ? ['--model', ctx.model]
        : [];
    return runProcess(findBin('opencode', ctx)!, ['run', '--pure', ...model, task.prompt], {
      cwd: ctx.ws.project,
      env: _env(ctx),
      timeoutMs: ctx.timeoutMs,
      signal: ctx.signal,
    });
  },
  listTools: _listTools,
};

/** `opencode run` uses the `build` agent: its tools, each enabled or disabled by its permissions, are what the model is given besides MCP's. */
async function _listTools(ctx: ProbeContext): Promise<ToolListing> {
  const out = await runProcess(findBin('opencode', ctx)!, ['debug', 'agent', 'build', '--pure'], {
    cwd: ctx.ws.project,
    env: _env(ctx),
    timeoutMs: Math.min(ctx.timeoutMs, 90_000),
    signal: ctx.signal,
  });
  const json = out.stdout.slice(out.stdout.indexOf('{'));
  let agent: { tools?: Record<string, unknown> };
  try {
    agent = JSON.parse(json) as typeof agent;
  } catch {
    throw new WitnessError(
      'IO',
      `opencode debug agent build printed no agent JSON${out.timedOut ? ' before the time limit' : ` (exit ${out.exitCode})`}: ${(out.stderr.trim() || out.stdout.trim()).slice(0, 200) || '(no output)'}`,
    );
  }
  if (!agent.tools || typeof agent.tools !== 'object')
    throw new WitnessError('IO', 'opencode debug agent build printed an agent without a "tools" object');
  return {
    builtins: Object.keys(agent.tools).filter((t) => agent.tools![t] === true),
    how: "opencode debug agent build (the default agent's enabled built-in tools; OpenCode lists its MCP tools, <server>_<tool>, elsewhere)",
  };
}

function _re(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
