/**
 * @module
 * The built-in agents as runtimes: no binary, no config file; witness itself
 * checks that the agent's server starts and lists its tools (the role `mcp list`
 * plays for a real runtime).
 */
import { type BuiltinAgent, DESCRIPTIONS, LOCAL_TOOLS, runBuiltin } from '../agents/index.js';
import { connectMailbox } from '../peer.js';
import type { AgentTask, ProbeContext, RuntimeAdapter } from '../types.js';
import { AGENT } from '../workspace.js';

export function builtinAdapter(agent: BuiltinAgent): RuntimeAdapter {
  // What the agent's server listed at the connection check: its mailbox tools in the inventory.
  let served: string[] | undefined;
  return {
    name: agent,
    title: `built-in agent "${agent}" (${DESCRIPTIONS[agent]})`,
    detect: async () => ({ found: true, version: 'built-in' }),
    install: () => undefined,
    async connection(ctx: ProbeContext) {
      try {
        const { client, close } = await connectMailbox(ctx.ws, AGENT, ctx.toolPrefix, ctx.signal);
        const { tools } = await client.listTools().finally(close);
        served = tools.map((t) => t.name);
        return {
          status: 'connected',
          detail: `witness connected to the agent's server: ${tools.map((t) => t.name).join(', ')}`,
        };
      } catch (error) {
        return { status: 'failed', detail: `the agent's server did not start: ${(error as Error).message}` };
      }
    },
    async run(ctx: ProbeContext, task: AgentTask) {
      const started = Date.now();
      try {
        const { output, toolCalls } = await runBuiltin(agent, ctx, task);
        return { stdout: output, stderr: '', exitCode: 0, timedOut: false, ms: Date.now() - started, toolCalls };
      } catch (error) {
        return { stdout: '', stderr: (error as Error).message, exitCode: 1, timedOut: false, ms: Date.now() - started };
      }
    },
    listTools: async () => ({
      builtins: [...LOCAL_TOOLS[agent]],
      ...(served ? { mailbox: served } : {}),
      how: "the built-in agent's own tools, and the tools its mailbox server listed",
    }),
  };
}
