/**
 * @module
 * Qwen Code (`qwen`): `~/.qwen/settings.json` ("mcpServers", user scope inside the
 * probe's own HOME, so no `qwen mcp approve` is needed), `qwen mcp list` connects
 * and pings, `qwen -p` runs the agent. Qwen Code registers its own `send_message`
 * and `list_agents` and shows MCP tools as `mcp__<server>__<tool>`: with bare
 * names the model can call the built-in instead (the incident in mailbox.md).
 */
import { runProcess } from '../process.js';
import type { AgentTask, ProbeContext, RuntimeAdapter } from '../types.js';
import { detectCli, findBin, installFor, readMcpList } from './common.js';

function _env(ctx: ProbeContext): NodeJS.ProcessEnv {
  return { ...ctx.ws.env, QWEN_CODE_SUPPRESS_YOLO_WARNING: '1' };
}

export const qwen: RuntimeAdapter = {
  name: 'qwen',
  title: 'Qwen Code',
  shadows: ['send_message', 'list_agents'],
  detect: (ctx) => detectCli('qwen', 'Qwen Code', ctx, 'npm i -g @qwen-code/qwen-code'),
  install: (ctx) => installFor('qwen', ctx, 'user'),
  async connection(ctx) {
    const out = await runProcess(findBin('qwen', ctx)!, ['mcp', 'list'], { cwd: ctx.ws.project, env: _env(ctx), timeoutMs: ctx.timeoutMs });
    if (out.timedOut) return { status: 'failed', detail: `qwen mcp list did not finish within ${Math.round(ctx.timeoutMs / 1000)} s` };
    return readMcpList(`${out.stdout}\n${out.stderr}`, ctx.serverName, /✓.*- Connected/);
  },
  async run(ctx, task: AgentTask) {
    const model = ctx.modelEndpoint
      ? ['--auth-type', 'openai', '--openai-base-url', ctx.modelEndpoint, '--openai-api-key', process.env.OPENAI_API_KEY ?? 'witness-probe', '-m', ctx.model ?? 'default']
      : ctx.model
        ? ['-m', ctx.model]
        : [];
    return runProcess(findBin('qwen', ctx)!, [...model, '--approval-mode', 'yolo', '-p', task.prompt], { cwd: ctx.ws.project, env: _env(ctx), timeoutMs: ctx.timeoutMs });
  },
};
