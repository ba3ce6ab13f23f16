/**
 * @module
 * Claude Code (`claude`), as 2.1.328 behaves: the server goes into `~/.claude.json`
 * of the probe's own HOME (user scope: a project `.mcp.json` stays "pending
 * approval" under `claude -p`, which never asks), `claude mcp list` connects to
 * each server ("✔ Connected"), `claude -p --output-format stream-json` runs the
 * agent. A model endpoint becomes ANTHROPIC_BASE_URL (Claude Code speaks the
 * Anthropic Messages API). MCP tools are `mcp__<server>__<tool>`, loaded through its
 * ToolSearch; its own SendMessage and ListAgents message other Claude sessions —
 * the built-ins that shadow the mailbox's. Its tools are listed by its stream-json
 * init event, printed before the model is asked.
 */
import { WitnessError } from '../../core/errors.js';
import { runProcess } from '../process.js';
import type { AgentRun, AgentTask, ProbeContext, RuntimeAdapter, ToolListing } from '../types.js';
import { detectCli, findBin, installFor, readMcpList } from './common.js';
import { withNoModel } from './no-model.js';

/** Claude Code appends /v1/messages itself: it wants the origin, not the `…/v1` an OpenAI-style URL ends in. */
export function anthropicBaseUrl(endpoint: string): string {
  return endpoint.replace(/\/v1\/?$/, '').replace(/\/$/, '');
}

function _env(ctx: ProbeContext, endpoint = ctx.modelEndpoint): NodeJS.ProcessEnv {
  const model = endpoint
    ? {
        ANTHROPIC_BASE_URL: anthropicBaseUrl(endpoint),
        ANTHROPIC_API_KEY: process.env.ANTHROPIC_API_KEY ?? 'witness-probe',
      }
    : {};
  return { ...ctx.ws.env, CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1', DISABLE_AUTOUPDATER: '1', ...model };
}

export const claude: RuntimeAdapter = {
  name: 'claude',
  title: 'Claude Code',
  detect: (ctx) => detectCli('claude', 'Claude Code', ctx, 'npm i -g @anthropic-ai/claude-code'),
  install: (ctx) => installFor('claude', ctx, 'user'),
  installChannel: (ctx) => installFor('claude', ctx, 'user', true),
  async connection(ctx) {
    const out = await runProcess(findBin('claude', ctx)!, ['mcp', 'list'], {
      cwd: ctx.ws.project,
      env: _env(ctx),
      timeoutMs: ctx.timeoutMs,
      signal: ctx.signal,
    });
    if (out.timedOut)
      return {
        status: 'failed',
        detail: `claude mcp list did not finish within ${Math.round(ctx.timeoutMs / 1000)} s`,
      };
    return readMcpList(`${out.stdout}\n${out.stderr}`, ctx.serverName, /[✓✔] Connected/);
  },
  async run(ctx, task: AgentTask) {
    const model = ctx.model ? ['--model', ctx.model] : [];
    // --dangerously-skip-permissions is refused as root; allowing the mailbox server's tools is all the checks need.
    // The launch flag `witness mailbox install claude --channel` prints: a server not on Anthropic's list loads only with it.
    const channel =
      task.kind === 'push' && task.path === 'channel'
        ? ['--dangerously-load-development-channels', `server:${ctx.serverName}`]
        : [];
    const args = [
      '-p',
      task.prompt,
      ...model,
      ...channel,
      '--output-format',
      'stream-json',
      '--verbose',
      '--allowedTools',
      `mcp__${ctx.serverName}`,
    ];
    return readStreamJson(
      await runProcess(findBin('claude', ctx)!, args, {
        cwd: ctx.ws.project,
        env: _env(ctx),
        timeoutMs: ctx.timeoutMs,
        signal: ctx.signal,
      }),
    );
  },
  listTools: (ctx) => withNoModel((url) => _listTools(ctx, url)),
};

type StreamEvent = {
  type?: string;
  subtype?: string;
  result?: unknown;
  message?: { content?: Array<{ type: string; text?: string; name?: string }> };
};

/**
 * What the agent said and which tools it called, from the stream-json events. The
 * output judged is the model's own text: the events also carry every tool result
 * verbatim, which would put a canary "in the output" that the model never printed.
 */
export function readStreamJson(run: AgentRun): AgentRun {
  const said: string[] = [];
  const calls: string[] = [];
  let events = 0;
  for (const line of run.stdout.split('\n')) {
    let event: StreamEvent;
    try {
      event = JSON.parse(line) as StreamEvent;
    } catch {
      continue;
    }
    events++;
    if (event.type === 'assistant') {
      for (const block of event.message?.content ?? []) {
        if (block.type === 'text' && block.text) said.push(block.text);
        if (block.type === 'tool_use' && block.name) calls.push(block.name);
      }
    }
    if (event.type === 'result' && said.length === 0 && typeof event.result === 'string') said.push(event.result);
  }
  if (events === 0) return run;
  return { ...run, stdout: said.join('\n'), toolCalls: calls };
}

/** The init event's whole line: a chunk may end inside it, so the newline must be there too. */
const INIT = /^(\{"type":"system","subtype":"init".*\})\r?\n/m;

/** Starts a headless session and stops it at its init event, which lists every tool the model would be given. */
async function _listTools(ctx: ProbeContext, url: string): Promise<ToolListing> {
  const args = ['-p', '[witness-probe inventory] nothing to do', '--output-format', 'stream-json', '--verbose'];
  const out = await runProcess(findBin('claude', ctx)!, args, {
    cwd: ctx.ws.project,
    env: _env(ctx, url),
    timeoutMs: Math.min(ctx.timeoutMs, 90_000),
    stopWhen: (stdout) => INIT.test(stdout),
    signal: ctx.signal,
  });
  const line = INIT.exec(out.stdout)?.[1];
  if (!line)
    throw new WitnessError(
      'IO',
      `claude printed no stream-json init event${out.timedOut ? ' before the time limit' : ` (exit ${out.exitCode})`}: ${(out.stderr.trim() || out.stdout.trim()).slice(0, 200) || '(no output)'}`,
    );
  const init = JSON.parse(line) as { tools?: unknown; claude_code_version?: string };
  if (!Array.isArray(init.tools) || !init.tools.every((t) => typeof t === 'string'))
    throw new WitnessError('IO', 'claude\'s stream-json init event has no "tools" list of names');
  const tools = init.tools as string[];
  const ours = tools.filter((t) => t.startsWith(`mcp__${ctx.serverName}__`));
  return {
    builtins: tools.filter((t) => !t.startsWith('mcp__')),
    // Servers still connecting at init are listed without their tools.
    ...(ours.length > 0 ? { mailbox: ours } : {}),
    how: `claude --output-format stream-json init event (Claude Code ${init.claude_code_version ?? '?'}; the model endpoint refused every request)`,
  };
}
