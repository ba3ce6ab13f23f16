/**
 * @module
 * Qwen Code (`qwen`): `~/.qwen/settings.json` ("mcpServers", user scope inside the
 * probe's own HOME, so no `qwen mcp approve` is needed), `qwen mcp list` connects
 * and pings, `qwen -p` runs the agent. Qwen Code registers its own `send_message`
 * and `list_agents` and shows MCP tools as `mcp__<server>__<tool>`: with bare
 * names the model can call the built-in instead (the incident in mailbox.md).
 * Its tools are listed by its own `--output-format stream-json` init event, which
 * it prints before asking the model (pointed at an endpoint that refuses).
 */
import { WitnessError } from '../../core/errors.js';
import { runProcess } from '../process.js';
import type { AgentTask, ProbeContext, RuntimeAdapter, ToolListing } from '../types.js';
import { detectCli, findBin, installFor, readMcpList } from './common.js';
import { withNoModel } from './no-model.js';

function _env(ctx: ProbeContext): NodeJS.ProcessEnv {
  return { ...ctx.ws.env, QWEN_CODE_SUPPRESS_YOLO_WARNING: '1' };
}

export const qwen: RuntimeAdapter = {
  name: 'qwen',
  title: 'Qwen Code',
  detect: (ctx) => detectCli('qwen', 'Qwen Code', ctx, 'npm i -g @qwen-code/qwen-code'),
  install: (ctx) => installFor('qwen', ctx, 'user'),
  async connection(ctx) {
    const out = await runProcess(findBin('qwen', ctx)!, ['mcp', 'list'], {
      cwd: ctx.ws.project,
      env: _env(ctx),
      timeoutMs: ctx.timeoutMs,
      signal: ctx.signal,
    });
    if (out.timedOut)
      return { status: 'failed', detail: `qwen mcp list did not finish within ${Math.round(ctx.timeoutMs / 1000)} s` };
    return readMcpList(`${out.stdout}\n${out.stderr}`, ctx.serverName, /✓.*- Connected/);
  },
  async run(ctx, task: AgentTask) {
    const model = ctx.modelEndpoint
      ? [
          '--auth-type',
          'openai',
          '--openai-base-url',
          ctx.modelEndpoint,
          '--openai-api-key',
          process.env.OPENAI_API_KEY ?? 'witness-probe',
          '-m',
          ctx.model ?? 'default',
        ]
      : ctx.model
        ? ['-m', ctx.model]
        : [];
    return runProcess(findBin('qwen', ctx)!, [...model, '--approval-mode', 'yolo', '-p', task.prompt], {
      cwd: ctx.ws.project,
      env: _env(ctx),
      timeoutMs: ctx.timeoutMs,
      signal: ctx.signal,
    });
  },
  listTools: (ctx) => withNoModel((url) => _listTools(ctx, url)),
};

/** The init event's whole line: a chunk may end inside it, so the newline must be there too. */
const INIT = /^(\{"type":"system","subtype":"init".*\})\r?\n/m;

/** Starts a headless session as the probe's runs do and stops it at its init event, which lists every tool the model would be given. */
async function _listTools(ctx: ProbeContext, url: string): Promise<ToolListing> {
  const args = [
    '--auth-type',
    'openai',
    '--openai-base-url',
    url,
    '--openai-api-key',
    'witness-probe',
    '-m',
    'witness-probe-inventory',
    '--approval-mode',
    'yolo',
    '--output-format',
    'stream-json',
    '-p',
    '[witness-probe inventory] nothing to do',
  ];
  const out = await runProcess(findBin('qwen', ctx)!, args, {
    cwd: ctx.ws.project,
    env: _env(ctx),
    timeoutMs: Math.min(ctx.timeoutMs, 90_000),
    stopWhen: (stdout) => INIT.test(stdout),
    signal: ctx.signal,
  });
  const line = INIT.exec(out.stdout)?.[1];
  if (!line)
    throw new WitnessError(
      'IO',
      `qwen printed no stream-json init event${out.timedOut ? ' before the time limit' : ` (exit ${out.exitCode})`}: ${(out.stderr.trim() || out.stdout.trim()).slice(0, 200) || '(no output)'}`,
    );
  const init = JSON.parse(line) as { tools?: unknown; qwen_code_version?: string };
  if (!Array.isArray(init.tools) || !init.tools.every((t) => typeof t === 'string'))
    throw new WitnessError('IO', 'qwen\'s stream-json init event has no "tools" list of names');
  const tools = init.tools as string[];
  const ours = `mcp__${ctx.serverName}__`;
  return {
    builtins: tools.filter((t) => !t.startsWith('mcp__')),
    mailbox: tools.filter((t) => t.startsWith(ours)),
    how: `qwen --output-format stream-json init event (Qwen Code ${init.qwen_code_version ?? '?'}; the model endpoint refused every request)`,
  };
}
