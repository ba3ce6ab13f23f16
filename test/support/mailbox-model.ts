/**
 * Scripted model policies for the probe's end-to-end tests: a stand-in for the LLM
 * that reads the probe's prompt and the tools the runtime offers, and calls them
 * the way a model would. `mcp` calls the mailbox's MCP tools (directly, or through
 * Qwen Code's deferred `tool_search` / `tool_call`); `builtin` calls the runtime's
 * own same-named tools instead and claims success — the incident in mailbox.md.
 */
import type { ChatMessage, ChatRequest, ModelPolicy, ModelReply } from './tool-model.js';

type Call = { name: string; arguments: Record<string, unknown> };

function _text(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((p) => (typeof p === 'object' && p && 'text' in p ? String((p as { text: unknown }).text) : '')).join('\n');
  return '';
}

function _task(messages: ChatMessage[]): { kind: string; to?: string; body?: string } | undefined {
  for (const m of messages) {
    if (m.role !== 'user') continue;
    const text = _text(m.content);
    const kind = /\[witness-probe (send|read)\]/.exec(text)?.[1];
    if (!kind) continue;
    return { kind, ...(kind === 'send' ? { to: /\bto=([\w.-]+)/.exec(text)?.[1], body: /\bbody=([\w-]+)/.exec(text)?.[1] } : {}) };
  }
  return undefined;
}

/** The runtime's name for the MCP tool `tool`: OpenCode `<server>_<tool>`, Qwen `mcp__<server>__<tool>`. */
function _mcpName(request: ChatRequest, tool: string, server: string): { name: string; deferred: boolean } | undefined {
  const direct = (request.tools ?? []).map((t) => t.function.name).find((n) => n.includes(server) && (n.endsWith(`_${tool}`) || n.endsWith(`__${tool}`)));
  if (direct) return { name: direct, deferred: false };
  const all = request.messages.map((m) => _text(m.content)).join('\n');
  const deferred = new RegExp(`mcp__${server}__${tool}\\b`).exec(all)?.[0];
  return deferred ? { name: deferred, deferred: true } : undefined;
}

function _steps(plan: Array<{ name: string; deferred: boolean; arguments: Record<string, unknown> }>): Call[] {
  const deferred = plan.filter((p) => p.deferred).map((p) => p.name);
  const steps: Call[] = deferred.length > 0 ? [{ name: 'tool_search', arguments: { query: `select:${[...new Set(deferred)].join(',')}` } }] : [];
  for (const p of plan) steps.push(p.deferred ? { name: 'tool_call', arguments: { name: p.name, arguments: p.arguments } } : { name: p.name, arguments: p.arguments });
  return steps;
}

function _next(request: ChatRequest, steps: Call[], final: (lastResult: string) => string): ModelReply {
  const done = request.messages.filter((m) => m.role === 'assistant' && (m.tool_calls?.length ?? 0) > 0).length;
  const step = steps[done];
  if (step) return { toolCalls: [step] };
  const results = request.messages.filter((m) => m.role === 'tool');
  return { text: final(_text(results[results.length - 1]?.content)) };
}

function _side(request: ChatRequest): boolean {
  const system = request.messages.filter((m) => m.role === 'system').map((m) => _text(m.content)).join('\n');
  return (request.tools ?? []).length === 0 || /title generator|memory extraction/i.test(system);
}

export function mailboxModel(mode: 'mcp' | 'builtin', options: { server?: string; prefix?: string } = {}): ModelPolicy {
  const server = options.server ?? 'witness-mailbox';
  const prefix = options.prefix ?? '';
  return (request) => {
    const task = _task(request.messages);
    if (!task || _side(request)) return { text: 'Probe' };
    if (mode === 'builtin') {
      // The incident: the bare built-in names win; the model reports success whatever happened.
      const plan = [
        { name: 'list_agents', deferred: !(request.tools ?? []).some((t) => t.function.name === 'list_agents'), arguments: {} },
        { name: 'send_message', deferred: !(request.tools ?? []).some((t) => t.function.name === 'send_message'), arguments: { to: task.to ?? '', message: task.body ?? '' } },
      ];
      return _next(request, _steps(task.kind === 'send' ? plan : []), () => (task.kind === 'send' ? `Message sent to ${task.to}. Delivery confirmed.` : 'no messages'));
    }
    const tool = (base: string) => {
      const found = _mcpName(request, `${prefix}${base}`, server);
      if (!found) throw new Error(`the runtime offers no MCP tool ${prefix}${base} of ${server}`);
      return found;
    };
    const plan =
      task.kind === 'send'
        ? [
            { ...tool('list_agents'), arguments: {} },
            { ...tool('send_message'), arguments: { to: task.to ?? '', body: task.body ?? '' } },
          ]
        : [{ ...tool('check_inbox'), arguments: {} }];
    return _next(request, _steps(plan), (last) => (task.kind === 'send' ? `Done: ${last}` : `Your messages: ${last}`));
  };
}
