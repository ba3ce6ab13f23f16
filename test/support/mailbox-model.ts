/**
 * Scripted model policies for the probe's end-to-end tests: a stand-in for the LLM
 * that reads the probe's prompt and the tools the runtime offers, and calls them
 * the way a model would, in any of the APIs of tool-model.ts. `mcp` calls the
 * mailbox's MCP tools; `builtin` calls the runtime's own messaging tools instead
 * and claims success — the incident in mailbox.md; `claim` calls nothing and
 * claims success. Tools a runtime defers are loaded first, its own way: Qwen
 * Code's `tool_search` + `tool_call`, Claude Code's `ToolSearch` ("select:NAME").
 * The push task keeps the runtime busy with slow `list_agents` calls and never reads
 * the inbox: it quotes a canary only once a request the runtime sends shows it one.
 */
import { textOf } from './model-wire/common.js';
import type { ChatMessage, ChatRequest, ModelPolicy, ModelReply } from './tool-model.js';

type Call = { name: string; arguments: Record<string, unknown> };

function _task(messages: ChatMessage[]): { kind: string; to?: string; body?: string } | undefined {
  for (const m of messages) {
    if (m.role !== 'user') continue;
    const text = textOf(m.content);
    const kind = /\[witness-probe (send|read|push)\]/.exec(text)?.[1];
    if (!kind) continue;
    return {
      kind,
      ...(kind === 'send' ? { to: /\bto=([\w.-]+)/.exec(text)?.[1], body: /\bbody=([\w-]+)/.exec(text)?.[1] } : {}),
    };
  }
  return undefined;
}

/** How long the push task "thinks" before each call: time for mail to arrive between two requests. */
const PUSH_STEP_MS = 1000;
const PUSH_STEPS = 8;
const _canary = (request: ChatRequest) => /canary-[A-Za-z0-9]{12}/.exec(JSON.stringify(request.messages))?.[0];

const _offered = (request: ChatRequest) => (request.tools ?? []).map((t) => t.function.name);
const _called = (request: ChatRequest) =>
  request.messages.flatMap((m) => (m.role === 'assistant' ? (m.tool_calls ?? []) : [])).map((c) => c.function.name);

/** The runtime's name for the MCP tool `tool`: OpenCode `<server>_<tool>`, Qwen and Claude `mcp__<server>__<tool>`; deferred when only named in the text. */
function _mcpName(request: ChatRequest, tool: string, server: string): { name: string; deferred: boolean } | undefined {
  // Codex offers a server's tools as the namespace mcp__<server with _ for ->.<tool>.
  const namespaced = server.replace(/-/g, '_');
  const direct = _offered(request).find(
    (n) =>
      (n.includes(server) || n.includes(namespaced)) &&
      (n.endsWith(`_${tool}`) || n.endsWith(`__${tool}`) || n.endsWith(`.${tool}`)),
  );
  if (direct) return { name: direct, deferred: false };
  const all = request.messages.map((m) => textOf(m.content)).join('\n');
  const named = new RegExp(`mcp__${server}__${tool}\\b`).exec(all)?.[0];
  if (named) return { name: named, deferred: true };
  // Claude Code lists a server that is still connecting without its tools; ToolSearch waits for it.
  if (_offered(request).includes('ToolSearch')) return { name: `mcp__${server}__${tool}`, deferred: true };
  return undefined;
}

type Planned = { name: string; deferred: boolean; arguments: Record<string, unknown> };

/** The calls to make, loading deferred tools first. Once a search made them direct the plan keeps its search step, so the steps already taken still count. */
function _steps(request: ChatRequest, plan: Planned[]): Call[] {
  const direct = plan.map((p) => ({ name: p.name, arguments: p.arguments }));
  const names = [...new Set(plan.filter((p) => p.deferred).map((p) => p.name))].join(',');
  if (_called(request).includes('ToolSearch'))
    return [{ name: 'ToolSearch', arguments: { query: `select:${names}` } }, ...direct];
  if (names === '') return direct;
  if (_offered(request).includes('ToolSearch'))
    return [{ name: 'ToolSearch', arguments: { query: `select:${names}` } }, ...direct];
  return [
    { name: 'tool_search', arguments: { query: `select:${names}` } },
    ...plan.map((p) =>
      p.deferred
        ? { name: 'tool_call', arguments: { name: p.name, arguments: p.arguments } }
        : { name: p.name, arguments: p.arguments },
    ),
  ];
}

function _next(request: ChatRequest, steps: Call[], final: (lastResult: string) => string): ModelReply {
  const done = request.messages.filter((m) => m.role === 'assistant' && (m.tool_calls?.length ?? 0) > 0).length;
  const step = steps[done];
  if (step) return { toolCalls: [step] };
  const results = request.messages.filter((m) => m.role === 'tool');
  return { text: final(textOf(results[results.length - 1]?.content)) };
}

/** Requests that are not the agent's turn: titles, memory, Claude Code's quota and topic checks. */
function _side(request: ChatRequest): boolean {
  const system = request.messages
    .filter((m) => m.role === 'system')
    .map((m) => textOf(m.content))
    .join('\n');
  return (request.tools ?? []).length === 0 || /title generator|memory extraction/i.test(system);
}

export interface MailboxModelOptions {
  server?: string;
  prefix?: string;
  /** `builtin` mode: the runtime's own tools to call (default Qwen Code's `list_agents`, `send_message`). */
  builtins?: { list: string; send: string; body?: string };
}

export function mailboxModel(mode: 'mcp' | 'builtin' | 'claim', options: MailboxModelOptions = {}): ModelPolicy {
  const server = options.server ?? 'witness-mailbox';
  const prefix = options.prefix ?? '';
  return (request) => {
    const task = _task(request.messages);
    if (!task || _side(request)) return { text: 'Probe' };
    const claimed = task.kind === 'send' ? `Message sent to ${task.to}. Delivery confirmed.` : 'no messages';
    if (mode === 'claim') return { text: claimed };
    if (mode === 'builtin') {
      // The incident: the runtime's own names win; the model reports success whatever happened.
      const own = options.builtins ?? { list: 'list_agents', send: 'send_message' };
      const deferred = (name: string) => !_offered(request).includes(name);
      const plan = [
        { name: own.list, deferred: deferred(own.list), arguments: {} },
        {
          name: own.send,
          deferred: deferred(own.send),
          arguments: { to: task.to ?? '', [own.body ?? 'message']: task.body ?? '' },
        },
      ];
      return _next(request, task.kind === 'send' ? _steps(request, plan) : [], () => claimed);
    }
    const tool = (base: string) => {
      const found = _mcpName(request, `${prefix}${base}`, server);
      if (!found) throw new Error(`the runtime offers no MCP tool ${prefix}${base} of ${server}`);
      return found;
    };
    if (task.kind === 'push') {
      const seen = _canary(request);
      if (seen) return { text: `A message reached me: ${seen}` };
      const list = tool('list_agents');
      const reply = _next(
        request,
        _steps(
          request,
          Array.from({ length: PUSH_STEPS }, () => ({ ...list, arguments: {} })),
        ),
        () => 'No message reached me.',
      );
      return 'toolCalls' in reply ? new Promise((resolve) => setTimeout(() => resolve(reply), PUSH_STEP_MS)) : reply;
    }
    const plan =
      task.kind === 'send'
        ? [
            { ...tool('list_agents'), arguments: {} },
            { ...tool('send_message'), arguments: { to: task.to ?? '', body: task.body ?? '' } },
          ]
        : [{ ...tool('check_inbox'), arguments: {} }];
    return _next(request, _steps(request, plan), (last) =>
      task.kind === 'send' ? `Done: ${last}` : `Your messages: ${last}`,
    );
  };
}
