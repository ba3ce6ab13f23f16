/**
 * @module
 * Any agent CLI, given as a shell template: `{prompt}` becomes the (quoted)
 * prompt, `{mcp_command}` the quoted command line of the agent's mailbox server.
 * The server command is also in WITNESS_PROBE_MCP_COMMAND (a JSON array) so a
 * wrapper script can register it. The probe cannot ask such a runtime whether it
 * connected: that is judged from the call log after the run.
 */
import { WitnessError } from '../../core/errors.js';
import { runProcess, shellQuote } from '../process.js';
import type { AgentTask, ProbeContext, RuntimeAdapter } from '../types.js';
import { AGENT } from '../workspace.js';

function _serverCommand(ctx: ProbeContext): string[] {
  return [ctx.ws.serverCommand[0] ?? 'witness', ...ctx.ws.serverArgs(AGENT, ctx.toolPrefix)];
}

export function checkTemplate(template: string | undefined): string {
  if (!template?.includes('{prompt}'))
    throw new WitnessError(
      'USAGE',
      `--template must be a command line containing {prompt}, e.g. --template 'mycli run {prompt}'; got ${JSON.stringify(template ?? '')}.`,
    );
  return template;
}

export const command: RuntimeAdapter = {
  name: 'command',
  title: 'command template',
  detect: async (ctx) => ({ found: true, bin: checkTemplate(ctx.template) }),
  install: () => undefined,
  connection: async () => ({
    status: 'unchecked',
    detail: 'a command template cannot be asked whether it connected; judged from the call log after the run',
  }),
  async run(ctx: ProbeContext, task: AgentTask) {
    const line = checkTemplate(ctx.template)
      .replaceAll('{prompt}', shellQuote(task.prompt))
      .replaceAll('{mcp_command}', _serverCommand(ctx).map(shellQuote).join(' '));
    const env = {
      ...ctx.ws.env,
      WITNESS_PROBE_MCP_COMMAND: JSON.stringify(_serverCommand(ctx)),
      WITNESS_PROBE_PROJECT: ctx.ws.project,
    };
    return runProcess(line, [], {
      cwd: ctx.ws.project,
      env,
      timeoutMs: ctx.timeoutMs,
      shell: true,
      signal: ctx.signal,
    });
  },
};
