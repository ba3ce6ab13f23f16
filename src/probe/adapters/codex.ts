/**
 * @module
 * Codex CLI (`codex`), as 0.169.0 behaves: the server goes into `~/.codex/config.toml`
 * of the probe's own HOME (`[mcp_servers.NAME]`, through `witness mailbox install`),
 * `codex exec --json` runs the agent. A model endpoint becomes a provider
 * `witness-probe` speaking the Responses API. Codex does not wait for MCP servers
 * unless they are `required`, so every run passes `-c mcp_servers.NAME.required=true`
 * (a server that fails then stops the run instead of going missing). `codex mcp
 * list` does not connect: the connection and the tool list both come from one run
 * against an endpoint that refuses every request — its request names every tool
 * Codex would give the model, the mailbox's as the namespace `mcp__<server>` (with
 * `-` written `_`).
 */
import { join } from 'node:path';
import { WitnessError } from '../../core/errors.js';
import { runProcess } from '../process.js';
import type { AgentRun, AgentTask, ProbeContext, RuntimeAdapter, ToolListing } from '../types.js';
import { detectCli, findBin, installFor } from './common.js';
import { withNoModel } from './no-model.js';

const PROVIDER = 'witness-probe';
const KEY_ENV = 'WITNESS_PROBE_MODEL_KEY';

function _env(ctx: ProbeContext): NodeJS.ProcessEnv {
  return { ...ctx.ws.env, [KEY_ENV]: process.env.OPENAI_API_KEY ?? 'witness-probe' };
}

/** `-c` overrides: our server is required (so Codex waits for it); with an endpoint, the provider that reaches it. */
function _overrides(ctx: ProbeContext, endpoint?: string, model?: string): string[] {
  const provider = endpoint
    ? [
        '-c',
        `model_provider="${PROVIDER}"`,
        '-c',
        `model_providers.${PROVIDER}.name="Witness probe endpoint"`,
        '-c',
        `model_providers.${PROVIDER}.base_url=${JSON.stringify(endpoint)}`,
        '-c',
        `model_providers.${PROVIDER}.wire_api="responses"`,
        '-c',
        `model_providers.${PROVIDER}.env_key="${KEY_ENV}"`,
      ]
    : [];
  return ['-c', `mcp_servers.${ctx.serverName}.required=true`, ...provider, ...(model ? ['-m', model] : [])];
}

/** The listing run per probe: the connection check makes it, the inventory reuses it. */
const _listings = new WeakMap<ProbeContext, Promise<{ listing?: ToolListing; error?: string }>>();

export const codex: RuntimeAdapter = {
  name: 'codex',
  title: 'Codex',
  detect: (ctx) => detectCli('codex', 'Codex', ctx, 'npm i -g @openai/codex'),
  install(ctx) {
    const config = installFor('codex', ctx, 'user');
    return { file: config.file, has_server: config.has_server };
  },
  async connection(ctx) {
    const { listing, error } = await _listing(ctx);
    if (error) return { status: 'failed', detail: error };
    if (listing?.mailbox && listing.mailbox.length > 0)
      return {
        status: 'connected',
        detail: `codex exec offered the model ${listing.mailbox.length} tools of ${ctx.serverName}: ${listing.mailbox.join(', ')}`,
      };
    return {
      status: 'not-listed',
      detail: `codex exec offered the model no tool of ${ctx.serverName}: it did not pick up ${join(ctx.ws.home, '.codex', 'config.toml')}`,
    };
  },
  async run(ctx, task: AgentTask) {
    const args = [
      'exec',
      '--skip-git-repo-check',
      '--json',
      ..._overrides(ctx, ctx.modelEndpoint, ctx.modelEndpoint ? (ctx.model ?? 'default') : ctx.model),
      task.prompt,
    ];
    return readExecJson(
      await runProcess(findBin('codex', ctx)!, args, {
        cwd: ctx.ws.project,
        env: _env(ctx),
        timeoutMs: ctx.timeoutMs,
        signal: ctx.signal,
      }),
    );
  },
  async listTools(ctx) {
    const { listing, error } = await _listing(ctx);
    if (!listing) throw new WitnessError('IO', error ?? 'codex sent no model request');
    return listing;
  },
};

function _listing(ctx: ProbeContext): Promise<{ listing?: ToolListing; error?: string }> {
  let found = _listings.get(ctx);
  if (!found) {
    found = withNoModel((url, refused) => _listTools(ctx, url, refused)).then(
      (listing) => ({ listing }),
      (error: Error) => ({ error: error.message }),
    );
    _listings.set(ctx, found);
  }
  return found;
}

type Tool = { type?: string; name?: string; tools?: Tool[] };

async function _listTools(ctx: ProbeContext, url: string, refused: unknown[]): Promise<ToolListing> {
  const args = [
    'exec',
    '--skip-git-repo-check',
    ..._overrides(ctx, url, 'witness-probe-inventory'),
    '[witness-probe inventory] nothing to do',
  ];
  const out = await runProcess(findBin('codex', ctx)!, args, {
    cwd: ctx.ws.project,
    env: _env(ctx),
    timeoutMs: Math.min(ctx.timeoutMs, 90_000),
    signal: ctx.signal,
  });
  const request = refused.find((r): r is { tools: Tool[] } => Array.isArray((r as { tools?: unknown }).tools));
  const said = (out.stderr.trim() || out.stdout.trim())
    .split('\n')
    .filter((l) => /mcp|error/i.test(l) && !/bubblewrap/.test(l))
    .join(' | ')
    .slice(0, 400);
  if (!request)
    throw new WitnessError(
      'IO',
      `codex sent no model request${out.timedOut ? ' before the time limit' : ` (exit ${out.exitCode})`}: ${said || '(no output)'}`,
    );
  const names = request.tools.flatMap((t) =>
    t.type === 'namespace' ? (t.tools ?? []).map((c) => `${t.name}.${c.name}`) : [t.name ?? t.type ?? '?'],
  );
  const ours = `mcp__${ctx.serverName.replace(/-/g, '_')}.`;
  return {
    builtins: names.filter((n) => !n.startsWith('mcp__')),
    mailbox: names.filter((n) => n.startsWith(ours)),
    how: 'the tools codex exec sent with its first model request (Codex lists them nowhere else; the model endpoint refused every request)',
  };
}

type ExecEvent = {
  type?: string;
  item?: { type?: string; text?: string; server?: string; tool?: string; command?: string };
};

/** What the agent said (its agent_message items) and which tools it called, from `codex exec --json`; tool results are left out of the output, as for Claude Code. */
export function readExecJson(run: AgentRun): AgentRun {
  const said: string[] = [];
  const calls: string[] = [];
  let events = 0;
  for (const line of run.stdout.split('\n')) {
    let event: ExecEvent;
    try {
      event = JSON.parse(line) as ExecEvent;
    } catch {
      continue;
    }
    events++;
    const item = event.item;
    if (event.type !== 'item.completed' || !item) continue;
    if (item.type === 'agent_message' && item.text) said.push(item.text);
    else if (item.type === 'mcp_tool_call') calls.push(`${item.server}.${item.tool}`);
    else if (item.type && !['reasoning', 'error', 'todo_list'].includes(item.type)) calls.push(item.type);
  }
  if (events === 0) return run;
  return { ...run, stdout: said.join('\n'), toolCalls: calls };
}
