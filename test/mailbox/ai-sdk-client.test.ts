/**
 * A third MCP client nobody here wrote: the Vercel AI SDK's `@ai-sdk/mcp` (its own
 * JSON-RPC and Streamable HTTP code, protocol 2025-11-25) runs the mailbox's whole tool
 * set against a real `witness mailbox serve --http`, as an AI SDK application would hand
 * the tools to a model: identity from the bearer token, every call in the signed log.
 */
import { createMCPClient, type MCPClient } from '@ai-sdk/mcp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyMailbox } from '../../src/mailbox/index.js';
import { type HttpServerProcess, makeMailbox, startHttp, type TestMailbox } from './helpers.js';

type Executable = { execute?: (args: unknown, options: { toolCallId: string; messages: [] }) => Promise<unknown> };
type ToolResult = { isError?: boolean; structuredContent?: unknown; content?: unknown };

describe('the AI SDK MCP client (@ai-sdk/mcp) on the mailbox', () => {
  let mb: TestMailbox;
  let server: HttpServerProcess;
  let alice: MCPClient;
  let bob: MCPClient;

  const connect = (token: string) =>
    createMCPClient({
      clientName: 'witness-test-ai-sdk',
      transport: { type: 'http', url: server.url, headers: { Authorization: `Bearer ${token}` } },
    });

  /** Calls `name` through the tool object the AI SDK would hand to a model; its structured result. */
  async function run<T>(client: MCPClient, name: string, args: Record<string, unknown> = {}): Promise<T> {
    const tools = (await client.tools()) as unknown as Record<string, Executable>;
    const tool = tools[name];
    if (!tool?.execute) throw new Error(`the AI SDK lists no executable tool ${name}`);
    const result = (await tool.execute(args, { toolCallId: `call-${name}`, messages: [] })) as ToolResult;
    if (result.isError) throw new Error(`${name} failed: ${JSON.stringify(result.content)}`);
    return result.structuredContent as T;
  }

  beforeAll(async () => {
    mb = await makeMailbox(['alice', 'bob']);
    server = await startHttp(mb.dir);
    alice = await connect(mb.tokens.alice!);
    bob = await connect(mb.tokens.bob!);
  }, 60_000);
  afterAll(async () => {
    await alice?.close();
    await bob?.close();
    await server?.stop();
    await mb?.cleanup();
  });

  it('lists every mailbox tool, each with its input schema', async () => {
    const listed = await alice.listTools();
    expect(listed.tools.map((t) => t.name).sort()).toEqual([
      'ack_message',
      'check_inbox',
      'list_agents',
      'message_status',
      'send_message',
      'wait_for_message',
      'whoami',
    ]);
    for (const t of listed.tools) expect(t.inputSchema.type).toBe('object');
  });

  it('runs the whole tool set as two agents, each bound by its token, and the log verifies', async () => {
    expect(await run(alice, 'whoami')).toEqual({ name: 'alice' });
    expect(await run(bob, 'whoami')).toEqual({ name: 'bob' });
    const agents = await run<{ agents: { name: string }[] }>(alice, 'list_agents');
    expect(agents.agents.map((a) => a.name).sort()).toEqual(['alice', 'bob']);

    const sent = await run<{ id: string }>(alice, 'send_message', { to: 'bob', body: 'through the AI SDK' });
    const inbox = await run<{ messages: { id: string; from: string; body: string }[] }>(bob, 'check_inbox');
    expect(inbox.messages.map((m) => [m.id, m.from, m.body])).toEqual([[sent.id, 'alice', 'through the AI SDK']]);

    const waiting = run<{ messages: { id: string }[]; timed_out: boolean }>(alice, 'wait_for_message', {
      timeout_ms: 10_000,
    });
    const reply = await run<{ id: string }>(bob, 'send_message', { to: 'alice', body: 'back', reply_to: sent.id });
    const waited = await waiting;
    expect([waited.timed_out, waited.messages.map((m) => m.id)]).toEqual([false, [reply.id]]);

    await run(bob, 'ack_message', { message_id: sent.id, note: 'done' });
    const status = await run<{ state: string }>(alice, 'message_status', { message_id: sent.id });
    expect(status.state).toBe('acknowledged');

    const report = await verifyMailbox(mb.dir);
    expect(report.problems).toEqual([]);
    expect(report.messages).toBe(2);
  });
});
