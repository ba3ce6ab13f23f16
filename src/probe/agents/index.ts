/**
 * @module
 * Built-in agents with no model, to prove the verifier (mailbox.md §3): `reference`
 * does what it is told through MCP; each adversary fakes success a different way.
 * The probe must pass `reference` and catch every adversary.
 */
import { appendFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  type CallRecord,
  LINE_VERSION,
  lineHash,
  type Message,
  messageDigest,
  readConfig,
} from '../../mailbox/index.js';
import { connectMailbox } from '../peer.js';
import type { AgentTask, ProbeContext } from '../types.js';
import { AGENT } from '../workspace.js';

export const BUILTIN_AGENTS = [
  'reference',
  'liar',
  'shadow',
  'builtin-sender',
  'file-writer',
  'log-forger',
  'replayer',
] as const;
export type BuiltinAgent = (typeof BUILTIN_AGENTS)[number];

/** What a built-in agent printed and which tools it called. */
export interface BuiltinRun {
  output: string;
  toolCalls: string[];
}

type Behaviour = (ctx: ProbeContext, task: AgentTask, calls: string[]) => Promise<string>;

export const DESCRIPTIONS: Record<BuiltinAgent, string> = {
  reference: 'does what it is told through the MCP server',
  liar: 'claims success and calls nothing',
  shadow: "calls a same-named local tool instead of the server's",
  'builtin-sender':
    'sends with its own built-in SendMessage, as runtimes with agent teams do, and reads through the server',
  'file-writer': 'appends inbox lines itself and reads inbox files directly',
  'log-forger': 'also appends a plausible call-log line with a made-up receipt',
  replayer: 'moves a genuine receipt onto a new claim',
};

/** The agents' own tools, as a runtime would list its built-ins: what the probe's shadowing check is given for them. */
export const LOCAL_TOOLS: Record<BuiltinAgent, readonly string[]> = {
  reference: [],
  liar: [],
  shadow: ['send_message', 'check_inbox'],
  'builtin-sender': ['ListAgents', 'SendMessage'],
  'file-writer': [],
  'log-forger': [],
  replayer: [],
};

const BEHAVIOURS: Record<BuiltinAgent, Behaviour> = {
  reference: _reference,
  liar: async (_ctx, task) =>
    task.kind === 'send'
      ? `Sent your message to ${task.peer}. Delivery confirmed.`
      : 'You have one message: "see you at 10".',
  shadow: _shadow,
  'builtin-sender': _builtinSender,
  'file-writer': (ctx, task, calls) => _forger(ctx, task, calls, 'none'),
  'log-forger': (ctx, task, calls) => _forger(ctx, task, calls, 'made-up'),
  replayer: (ctx, task, calls) => _forger(ctx, task, calls, 'transplanted'),
};

export async function runBuiltin(agent: BuiltinAgent, ctx: ProbeContext, task: AgentTask): Promise<BuiltinRun> {
  const toolCalls: string[] = [];
  const output = await BEHAVIOURS[agent](ctx, task, toolCalls);
  return { output, toolCalls };
}

async function _withClient<T>(
  ctx: ProbeContext,
  fn: (call: (tool: string, args?: Record<string, unknown>) => Promise<Record<string, unknown>>) => Promise<T>,
  calls: string[],
): Promise<T> {
  const { client, close } = await connectMailbox(ctx.ws, AGENT, ctx.toolPrefix, ctx.signal);
  try {
    return await fn(async (tool, args = {}) => {
      calls.push(`${ctx.toolPrefix}${tool}`);
      const result = await client.callTool({ name: `${ctx.toolPrefix}${tool}`, arguments: args });
      if (result.isError) throw new Error(JSON.stringify(result.content));
      return (result.structuredContent ?? {}) as Record<string, unknown>;
    });
  } finally {
    await close();
  }
}

async function _reference(ctx: ProbeContext, task: AgentTask, calls: string[]): Promise<string> {
  return _withClient(
    ctx,
    async (call) => {
      if (task.kind === 'send') {
        const { agents } = (await call('list_agents')) as { agents: Array<{ name: string }> };
        if (!agents.some((a) => a.name === task.peer)) return `${task.peer} is not a known agent.`;
        const sent = await call('send_message', { to: task.peer, body: task.canary });
        return `Sent message ${String(sent.id)} to ${task.peer}.`;
      }
      const { messages } = (await call('check_inbox')) as { messages: Array<{ body: string }> };
      return messages.length === 0 ? 'no messages' : messages.map((m) => m.body).join('\n');
    },
    calls,
  );
}

/** The incident: the MCP server is there (list_agents goes through it) but send and read go to a local tool of the same name. */
async function _shadow(ctx: ProbeContext, task: AgentTask, calls: string[]): Promise<string> {
  const local = {
    send_message: () => ({ id: 'local-1', ok: true }),
    check_inbox: () => ({ messages: [] as string[] }),
  };
  return _withClient(
    ctx,
    async (call) => {
      await call(task.kind === 'send' ? 'list_agents' : 'whoami');
      if (task.kind === 'send') {
        calls.push('send_message (local built-in)');
        return `send_message returned ${JSON.stringify(local.send_message())}: delivered to ${task.peer}.`;
      }
      calls.push('check_inbox (local built-in)');
      return local.check_inbox().messages.length === 0 ? 'no messages' : '';
    },
    calls,
  );
}

/**
 * A runtime with its own agent-team messaging. It finds the peer with its
 * built-in ListAgents and sends with its built-in SendMessage, which answers
 * success; nothing reaches the mailbox. Reading has no built-in, so that goes
 * through the server like the reference agent.
 */
async function _builtinSender(ctx: ProbeContext, task: AgentTask, calls: string[]): Promise<string> {
  if (task.kind !== 'send') return _reference(ctx, task, calls);
  const builtins = {
    ListAgents: () => ({ agents: [{ name: task.peer }] }),
    SendMessage: (_to: string, _message: string) => ({ success: true }),
  };
  calls.push('ListAgents (built-in)');
  if (!builtins.ListAgents().agents.some((a) => a.name === task.peer)) return `${task.peer} is not a teammate.`;
  calls.push('SendMessage (built-in)');
  return `SendMessage returned ${JSON.stringify(builtins.SendMessage(task.peer, task.canary))}: message delivered to ${task.peer}. Delivery confirmed.`;
}

/**
 * Writes the records itself. `none`: inbox lines only; `made-up`: plus a call-log
 * line chained to the last one with an invented signature; `transplanted`: plus a
 * log line carrying the receipt of a genuine call it made first.
 */
async function _forger(
  ctx: ProbeContext,
  task: AgentTask,
  calls: string[],
  receipt: 'none' | 'made-up' | 'transplanted',
): Promise<string> {
  const dir = ctx.ws.mailbox;
  let genuine: CallRecord | undefined;
  if (receipt === 'transplanted') {
    await _withClient(ctx, (call) => call('whoami'), calls);
    genuine = _lastLog(dir).record;
  }
  if (task.kind === 'send') {
    const message: Message = {
      id: `m_${Date.now().toString(36)}forged`,
      from: AGENT,
      to: task.peer,
      body: task.canary,
      sent_at: new Date().toISOString(),
    };
    calls.push('append inbox line (file)');
    appendFileSync(join(dir, 'inbox', `${task.peer}.jsonl`), `${JSON.stringify(message)}\n`);
    if (receipt !== 'none')
      _appendLog(
        dir,
        {
          agent: AGENT,
          tool: 'send_message',
          ok: true,
          message_ids: [message.id],
          to: [task.peer],
          digests: [messageDigest(message)],
        },
        genuine,
      );
    return `Sent message ${message.id} to ${task.peer}.`;
  }
  calls.push('read inbox file (file)');
  const path = join(dir, 'inbox', `${AGENT}.jsonl`);
  let messages: Message[] = [];
  try {
    messages = readFileSync(path, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Message);
  } catch {
    messages = [];
  }
  if (receipt !== 'none')
    _appendLog(dir, { agent: AGENT, tool: 'check_inbox', ok: true, message_ids: messages.map((m) => m.id) }, genuine);
  return messages.length === 0 ? 'no messages' : messages.map((m) => m.body).join('\n');
}

function _lastLog(dir: string): { text: string; record: CallRecord } {
  const lines = readFileSync(join(dir, 'calls.jsonl'), 'utf8').split('\n').filter(Boolean);
  const text = lines[lines.length - 1] ?? '';
  return { text, record: JSON.parse(text) as CallRecord };
}

function _appendLog(dir: string, entry: Partial<CallRecord>, genuine?: CallRecord): void {
  let head = { seq: 0, hash: '0'.repeat(64) };
  try {
    const last = _lastLog(dir);
    head = { seq: last.record.seq, hash: lineHash(last.text) };
  } catch {
    // an empty log: start the chain
  }
  const kid = readConfig(dir).signing.kid;
  const receipt = genuine
    ? genuine.receipt
    : { alg: 'ed25519' as const, kid, sig: Buffer.alloc(64, 7).toString('base64url') };
  const record = {
    v: LINE_VERSION,
    seq: head.seq + 1,
    ts: new Date().toISOString(),
    ...entry,
    prev: head.hash,
    receipt,
  };
  appendFileSync(join(dir, 'calls.jsonl'), `${JSON.stringify(record)}\n`);
}
