/**
 * @module
 * Claude Code (`claude`): project `.mcp.json` ("mcpServers", type stdio),
 * `claude mcp list` connects to each server, `claude -p` runs the agent. A model
 * endpoint is passed as ANTHROPIC_BASE_URL (Claude Code speaks the Anthropic API,
 * not OpenAI's). MCP tools are named `mcp__<server>__<tool>`.
 */
import { runProcess } from '../process.js';
import type { AgentTask, ProbeContext, RuntimeAdapter } from '../types.js';
import { detectCli, findBin, installFor, readMcpList } from './common.js';

function _env(ctx: ProbeContext): NodeJS.ProcessEnv {
  return { ...ctx.ws.env, ...(ctx.modelEndpoint ? { ANTHROPIC_BASE_URL: ctx.modelEndpoint } : {}) };
}

export const claude: RuntimeAdapter = {
  name: 'claude',
  title: 'Claude Code',
  detect: (ctx) => detectCli('claude', 'Claude Code', ctx, 'npm i -g @anthropic-ai/claude-code'),
  install: (ctx) => installFor('claude', ctx),
  async connection(ctx) {
    const out = await runProcess(findBin('claude', ctx)!, ['mcp', 'list'], { cwd: ctx.ws.project, env: _env(ctx), timeoutMs: ctx.timeoutMs, signal: ctx.signal });
    if (out.timedOut) return { status: 'failed', detail: `claude mcp list did not finish within ${Math.round(ctx.timeoutMs / 1000)} s` };
    return readMcpList(`${out.stdout}\n${out.stderr}`, ctx.serverName, /✓ Connected/);
  },
  async run(ctx, task: AgentTask) {
    const model = ctx.model ? ['--model', ctx.model] : [];
    return runProcess(findBin('claude', ctx)!, ['-p', task.prompt, ...model, '--dangerously-skip-permissions'], { cwd: ctx.ws.project, env: _env(ctx), timeoutMs: ctx.timeoutMs, signal: ctx.signal });
  },
};
