/**
 * @module
 * Gemini CLI (`gemini`), as 0.61.0 behaves: the server goes into
 * `~/.gemini/settings.json` of the probe's own HOME ("mcpServers", through
 * `witness mailbox install gemini --scope user`), next to the settings a headless
 * run needs — `security.auth.selectedType: "gemini-api-key"` (without it `gemini -p`
 * stops to ask how to log in) and no update check or usage statistics. `gemini mcp
 * list` connects to each server ("✓ … - Connected"); `gemini -p --output-format
 * stream-json --yolo` runs the agent (headless runs ask no approval, so the mailbox
 * tools must be allowed: yolo). A model endpoint becomes GOOGLE_GEMINI_BASE_URL
 * (Gemini CLI speaks the Gemini API and appends `/v1beta/models/…` itself, so it
 * wants the origin). Its stream-json init event names no tools: the tool list is
 * the `functionDeclarations` of its first request, sent to an endpoint that refuses
 * it — the mailbox's as `mcp_<server>_<tool>`.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeFileAtomic } from '../../core/atomic-write.js';
import { WitnessError } from '../../core/errors.js';
import { makeFolders } from '../../core/make-folders.js';
import { runProcess } from '../process.js';
import type { AgentRun, AgentTask, ProbeContext, RuntimeAdapter, ToolListing } from '../types.js';
import { anthropicBaseUrl } from './claude.js';
import { detectCli, findBin, installFor, readMcpList } from './common.js';
import { withNoModel } from './no-model.js';

function _env(ctx: ProbeContext, endpoint = ctx.modelEndpoint): NodeJS.ProcessEnv {
  const model = endpoint ? { GOOGLE_GEMINI_BASE_URL: anthropicBaseUrl(endpoint) } : {};
  // The probe's workspace is its own temp folder: trusting it is what makes Gemini CLI read the project's files at all.
  return {
    ...ctx.ws.env,
    GEMINI_API_KEY: process.env.GEMINI_API_KEY ?? 'witness-probe',
    GEMINI_CLI_TRUST_WORKSPACE: 'true',
    ...model,
  };
}

/** What `gemini -p` needs to run without asking: an auth type chosen, nothing fetched besides the model. Merged under what is there. */
function _headlessSettings(ctx: ProbeContext): void {
  const file = join(ctx.ws.home, '.gemini', 'settings.json');
  const current = existsSync(file)
    ? (JSON.parse(readFileSync(file, 'utf8')) as Record<string, Record<string, unknown>>)
    : {};
  const settings = {
    ...current,
    security: { ...current.security, auth: { selectedType: 'gemini-api-key' } },
    general: { ...current.general, disableAutoUpdate: true, disableUpdateNag: true },
    privacy: { ...current.privacy, usageStatisticsEnabled: false },
  };
  makeFolders(join(ctx.ws.home, '.gemini'));
  writeFileAtomic(file, `${JSON.stringify(settings, null, 2)}\n`);
}

export const gemini: RuntimeAdapter = {
  name: 'gemini',
  title: 'Gemini CLI',
  detect: (ctx) => detectCli('gemini', 'Gemini CLI', ctx, 'npm i -g @google/gemini-cli'),
  install(ctx) {
    _headlessSettings(ctx);
    return installFor('gemini', ctx, 'user');
  },
  async connection(ctx) {
    const out = await runProcess(findBin('gemini', ctx)!, ['mcp', 'list'], {
      cwd: ctx.ws.project,
      env: _env(ctx),
      timeoutMs: ctx.timeoutMs,
      signal: ctx.signal,
    });
    if (out.timedOut)
      return {
        status: 'failed',
        detail: `gemini mcp list did not finish within ${Math.round(ctx.timeoutMs / 1000)} s`,
      };
    return readMcpList(`${out.stdout}\n${out.stderr}`, ctx.serverName, /✓.*- Connected/);
  },
  async run(ctx, task: AgentTask) {
    const model = ctx.model ? ['-m', ctx.model] : [];
    const args = [...model, '--yolo', '--output-format', 'stream-json', '-p', task.prompt];
    return readGeminiStream(
      await runProcess(findBin('gemini', ctx)!, args, {
        cwd: ctx.ws.project,
        env: _env(ctx),
        timeoutMs: ctx.timeoutMs,
        signal: ctx.signal,
      }),
    );
  },
  listTools: (ctx) => withNoModel((url, refused) => _listTools(ctx, url, refused)),
};

type StreamEvent = { type?: string; role?: string; content?: unknown; tool_name?: string };

/** What the agent said (its assistant message events, streamed in pieces) and which tools it called; tool results are left out of the output, as for Claude Code. */
export function readGeminiStream(run: AgentRun): AgentRun {
  let said = '';
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
    if (event.type === 'message' && event.role === 'assistant' && typeof event.content === 'string')
      said += event.content;
    if (event.type === 'tool_use' && event.tool_name) calls.push(event.tool_name);
  }
  if (events === 0) return run;
  return { ...run, stdout: said, toolCalls: calls };
}

type Declarations = { tools?: Array<{ functionDeclarations?: Array<{ name?: unknown }> }> };

/** One headless run against an endpoint that refuses: its first request declares every tool the model would be given. */
async function _listTools(ctx: ProbeContext, url: string, refused: unknown[]): Promise<ToolListing> {
  const args = [
    '-m',
    'witness-probe-inventory',
    '--yolo',
    '--output-format',
    'stream-json',
    '-p',
    '[witness-probe inventory] nothing to do',
  ];
  const out = await runProcess(findBin('gemini', ctx)!, args, {
    cwd: ctx.ws.project,
    env: _env(ctx, url),
    timeoutMs: Math.min(ctx.timeoutMs, 90_000),
    stopWhen: () => refused.length > 0,
    signal: ctx.signal,
  });
  const request = refused.find((r): r is Declarations => Array.isArray((r as Declarations).tools));
  if (!request)
    throw new WitnessError(
      'IO',
      `gemini sent no model request with tools${out.timedOut ? ' before the time limit' : ` (exit ${out.exitCode})`}: ${(out.stderr.trim() || out.stdout.trim()).slice(0, 200) || '(no output)'}`,
    );
  const tools = (request.tools ?? [])
    .flatMap((t) => t.functionDeclarations ?? [])
    .map((d) => d.name)
    .filter((n): n is string => typeof n === 'string');
  const ours = `mcp_${ctx.serverName}_`;
  return {
    builtins: tools.filter((t) => !t.startsWith('mcp_')),
    mailbox: tools.filter((t) => t.startsWith(ours)),
    how: 'the functionDeclarations of the first request gemini -p sent (Gemini CLI prints no tool list; the model endpoint refused every request)',
  };
}
