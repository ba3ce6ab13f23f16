/**
 * @module
 * OpenHands CLI (`openhands`, Python): `~/.openhands/mcp.json` ("mcpServers"). It
 * has no command that connects to the servers, so the connection is only known
 * from the call log after the run. A model endpoint goes in LLM_BASE_URL /
 * LLM_MODEL (OpenAI-compatible through LiteLLM).
 */
import { runProcess } from '../process.js';
import type { AgentTask, ProbeContext, RuntimeAdapter } from '../types.js';
import { detectCli, findBin, installFor } from './common.js';

export const openhands: RuntimeAdapter = {
  name: 'openhands',
  title: 'OpenHands CLI',
  detect: (ctx) => detectCli('openhands', 'OpenHands CLI', ctx, 'uv tool install openhands'),
  install: (ctx) => installFor('openhands', ctx),
  connection: async () => ({
    status: 'unchecked',
    detail: 'OpenHands only reads its file; whether it started the server is judged from the call log after the run',
  }),
  async run(ctx: ProbeContext, task: AgentTask) {
    const env = {
      ...ctx.ws.env,
      ...(ctx.modelEndpoint
        ? { LLM_BASE_URL: ctx.modelEndpoint, LLM_API_KEY: process.env.OPENAI_API_KEY ?? 'witness-probe' }
        : {}),
      ...(ctx.model ? { LLM_MODEL: ctx.model } : {}),
    };
    return runProcess(findBin('openhands', ctx)!, ['--headless', '--always-approve', '-t', task.prompt], {
      cwd: ctx.ws.project,
      env,
      timeoutMs: ctx.timeoutMs,
      signal: ctx.signal,
    });
  },
};
