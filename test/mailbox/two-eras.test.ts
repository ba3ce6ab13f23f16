/**
 * One endpoint, two protocol eras, on HTTP and on stdio. HTTP: a 2025-11-25 client (SDK 1.32, initialize and
 * a session) and a 2026-07-28 client (SDK 2.4, pinned: server/discover, per-request
 * `_meta`, no initialize, no session) on one `witness mailbox serve --http`. Each lists
 * the tools, sends, reads, waits and is pushed to; the 2026 client's requests are
 * recorded on the wire to show it never sent `initialize` or a session id; the call
 * log holds every call of both, and verifies. stdio: `witness mailbox serve --agent`
 * answers a pinned 2026 client (server/discover first) and a 2025 one alike, and the
 * 2026 one is told of new mail on its `subscriptions/listen` stream.
 */
import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport as ModernStdioTransport } from '@modelcontextprotocol/client/stdio';
import { ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { verifyMailbox } from '../../src/mailbox/index.js';
import { negotiated, readSessions } from '../../src/probe/sessions.js';
import {
  call,
  type Connected,
  httpClient,
  type HttpServerProcess,
  makeMailbox,
  startHttp,
  stdioClient,
  type TestMailbox,
  waitFor,
  witnessCommand,
} from './helpers.js';

const INBOX = 'mailbox://inbox';

interface Wire {
  methods: string[];
  sessionHeaders: number;
}

/** A 2.4 client pinned to 2026-07-28, with every request it posts recorded. */
async function modernClient(url: string, token: string, wire: Wire): Promise<ModernClient> {
  const recording: typeof fetch = async (input, init) => {
    const headers = new Headers(init?.headers);
    if (headers.has('mcp-session-id')) wire.sessionHeaders++;
    if (typeof init?.body === 'string')
      wire.methods.push((JSON.parse(init.body) as { method?: string }).method ?? '(response)');
    return fetch(input, init);
  };
  const client = new ModernClient(
    { name: 'witness-test-2026', version: '0.0.0' },
    { versionNegotiation: { mode: { pin: '2026-07-28' } } },
  );
  await client.connect(
    new ModernTransport(new URL(url), {
      fetch: recording,
      requestInit: { headers: { Authorization: `Bearer ${token}` } },
    }),
  );
  return client;
}

type Structured = { structuredContent?: unknown; isError?: boolean; content?: unknown };
const structured = <T>(result: Structured): T => {
  if (result.isError) throw new Error(`tool error: ${JSON.stringify(result.content)}`);
  return result.structuredContent as T;
};

describe('one mailbox endpoint, MCP 2025-11-25 and 2026-07-28', () => {
  let mb: TestMailbox;
  let server: HttpServerProcess;
  let legacy: Connected;
  let modern: ModernClient;
  const wire: Wire = { methods: [], sessionHeaders: 0 };

  beforeAll(async () => {
    mb = await makeMailbox(['alice', 'bob']);
    server = await startHttp(mb.dir);
    legacy = await httpClient(server.url, mb.tokens.alice!);
    modern = await modernClient(server.url, mb.tokens.bob!, wire);
  }, 60_000);
  afterAll(async () => {
    await legacy?.close();
    await modern?.close();
    await server?.stop();
    await mb?.cleanup();
  });

  it('negotiates each era: 2025-11-25 by initialize, 2026-07-28 by server/discover with no initialize and no session', async () => {
    expect((legacy.client.transport as { protocolVersion?: string } | undefined)?.protocolVersion).toBe('2025-11-25');
    expect(modern.getNegotiatedProtocolVersion?.()).toBe('2026-07-28');
    expect(wire.methods[0]).toBe('server/discover');
    expect(wire.methods).not.toContain('initialize');
    expect(wire.sessionHeaders).toBe(0);
  });

  it('lists the same tools in both eras', async () => {
    const names = (tools: { name: string }[]) => tools.map((t) => t.name).sort();
    const [a, b] = [await legacy.client.listTools(), await modern.listTools()];
    expect(names(b.tools)).toEqual(names(a.tools));
    expect(names(a.tools)).toContain('wait_for_message');
  });

  it('each sends, reads and waits as its own agent, bound by its token', async () => {
    expect(await call(legacy.client, 'whoami')).toEqual({ name: 'alice' });
    expect(structured(await modern.callTool({ name: 'whoami', arguments: {} }))).toEqual({ name: 'bob' });
    const sent = await call<{ id: string }>(legacy.client, 'send_message', { to: 'bob', body: 'from 2025' });
    const inbox = structured<{ messages: { id: string; from: string; body: string }[] }>(
      await modern.callTool({ name: 'check_inbox', arguments: {} }),
    );
    expect(inbox.messages.map((m) => [m.id, m.from, m.body])).toEqual([[sent.id, 'alice', 'from 2025']]);
    // A `from` argument is not how identity is given: the schema has none, and the token decides.
    const reply = structured<{ id: string }>(
      await modern.callTool({ name: 'send_message', arguments: { to: 'alice', body: 'from 2026', reply_to: sent.id } }),
    );
    const waited = await call<{ messages: { id: string; from: string }[]; timed_out: boolean }>(
      legacy.client,
      'wait_for_message',
      { timeout_ms: 5000 },
    );
    expect(waited.messages.map((m) => [m.id, m.from])).toEqual([[reply.id, 'bob']]);
    const pending = modern.callTool({ name: 'wait_for_message', arguments: { timeout_ms: 10_000 } });
    await new Promise((r) => setTimeout(r, 200));
    const later = await call<{ id: string }>(legacy.client, 'send_message', { to: 'bob', body: 'while you wait' });
    const woke = structured<{ messages: { id: string }[]; timed_out: boolean }>(await pending);
    expect(woke).toMatchObject({ timed_out: false, messages: [{ id: later.id }] });
  });

  it('runs the whole tool set in each era: list_agents, message_status and ack_message as well', async () => {
    const modernCall = async <T>(name: string, args: Record<string, unknown> = {}) =>
      structured<T>(await modern.callTool({ name, arguments: args }));
    const agents = (list: { agents: { name: string; you: boolean }[] }) => list.agents.map((a) => [a.name, a.you]);
    expect(agents(await call(legacy.client, 'list_agents'))).toEqual([
      ['alice', true],
      ['bob', false],
    ]);
    expect(agents(await modernCall('list_agents'))).toEqual([
      ['alice', false],
      ['bob', true],
    ]);
    const sent = await call<{ id: string }>(legacy.client, 'send_message', { to: 'bob', body: 'please ack' });
    await modernCall('check_inbox');
    expect(await modernCall('ack_message', { message_id: sent.id, reply: 'done' })).toMatchObject({ id: sent.id });
    expect(await call(legacy.client, 'message_status', { message_id: sent.id })).toMatchObject({
      id: sent.id,
      state: 'acknowledged',
      acknowledged: { reply: 'done' },
    });
    expect(await modernCall('message_status', { message_id: sent.id })).toMatchObject({
      id: sent.id,
      state: 'acknowledged',
    });
    const back = await modernCall<{ id: string }>('send_message', { to: 'alice', body: 'ack this too' });
    await call(legacy.client, 'check_inbox');
    await call(legacy.client, 'ack_message', { message_id: back.id });
    expect(await modernCall('message_status', { message_id: back.id })).toMatchObject({
      id: back.id,
      state: 'acknowledged',
    });
  });

  it('pushes to both: resources/subscribe in 2025, subscriptions/listen in 2026', async () => {
    const legacyUpdates: string[] = [];
    const modernUpdates: string[] = [];
    legacy.client.setNotificationHandler(
      ResourceUpdatedNotificationSchema,
      (n) => void legacyUpdates.push(n.params.uri),
    );
    modern.setNotificationHandler('notifications/resources/updated', (n) => void modernUpdates.push(n.params.uri));
    await legacy.client.subscribeResource({ uri: INBOX });
    const listening = await modern.listen({ resourceSubscriptions: [INBOX] });
    try {
      await call(legacy.client, 'send_message', { to: 'bob', body: 'push to 2026' });
      await waitFor(
        () => modernUpdates.length > 0,
        10_000,
        () => 'a notifications/resources/updated on the 2026 listen stream',
      );
      await modern.callTool({ name: 'send_message', arguments: { to: 'alice', body: 'push to 2025' } });
      await waitFor(
        () => legacyUpdates.length > 0,
        10_000,
        () => 'a notifications/resources/updated on the 2025 session',
      );
      expect([legacyUpdates[0], modernUpdates[0]]).toEqual([INBOX, INBOX]);
      const read = await modern.readResource({ uri: INBOX });
      expect(
        JSON.parse((read.contents[0] as { text: string }).text).messages.map((m: { body: string }) => m.body),
      ).toEqual(['push to 2026']);
    } finally {
      await listening.close();
    }
  });

  it("the call log holds both eras' calls, attributed by token, and verifies", async () => {
    const report = await verifyMailbox(mb.dir);
    expect(report.problems).toEqual([]);
    expect(report.messages).toBeGreaterThanOrEqual(5);
  });
});

describe('one stdio server command, MCP 2025-11-25 and 2026-07-28', () => {
  let mb: TestMailbox;
  beforeAll(async () => {
    mb = await makeMailbox(['alice', 'bob']);
  }, 60_000);
  afterAll(() => mb?.cleanup());

  it('serves a pinned 2026-07-28 client (no initialize) beside a 2025-11-25 one, and pushes on its listen stream', async () => {
    const [command, ...args] = witnessCommand();
    const modern = new ModernClient(
      { name: 'witness-test-2026', version: '0.0.0' },
      { versionNegotiation: { mode: { pin: '2026-07-28' } } },
    );
    const sessionLog = join(mb.dir, '..', 'sessions.jsonl');
    await modern.connect(
      new ModernStdioTransport({
        command: command!,
        args: [...args, 'mailbox', 'serve', '--dir', mb.dir, '--agent', 'bob', '--session-log', sessionLog],
        stderr: 'pipe',
      }),
    );
    const legacy = await stdioClient(mb.dir, 'alice', ['--session-log', sessionLog]);
    try {
      expect(modern.getNegotiatedProtocolVersion?.()).toBe('2026-07-28');
      expect(structured(await modern.callTool({ name: 'whoami', arguments: {} }))).toEqual({ name: 'bob' });
      const updates: string[] = [];
      modern.setNotificationHandler('notifications/resources/updated', (n) => void updates.push(n.params.uri));
      const listening = await modern.listen({ resourceSubscriptions: [INBOX] });
      const sent = await call<{ id: string }>(legacy.client, 'send_message', { to: 'bob', body: 'over stdio' });
      await waitFor(
        () => updates.length > 0,
        10_000,
        () => 'a notifications/resources/updated on the 2026 stdio listen stream',
      );
      const inbox = structured<{ messages: { id: string }[] }>(
        await modern.callTool({ name: 'check_inbox', arguments: {} }),
      );
      expect(inbox.messages.map((m) => m.id)).toEqual([sent.id]);
      await modern.callTool({ name: 'send_message', arguments: { to: 'alice', body: 'back over stdio' } });
      expect(
        (await call<{ messages: { body: string }[] }>(legacy.client, 'check_inbox')).messages.map((m) => m.body),
      ).toEqual(['back over stdio']);
      await listening.close();
    } finally {
      await modern.close();
      await legacy.close();
    }
    expect((await verifyMailbox(mb.dir)).problems).toEqual([]);
    // What the probe's "MCP protocol" column reads: the server's own session log.
    const sessions = readSessions(sessionLog);
    expect(negotiated(sessions, 'bob')?.versions).toEqual(['2026-07-28']);
    expect(negotiated(sessions, 'bob')?.clients).toEqual(['witness-test-2026 0.0.0']);
    expect(negotiated(sessions, 'alice')?.versions).toEqual(['2025-11-25']);
    // The listen stream and the notice on it are in the log too, as for a 2025 subscription.
    expect(sessions.filter((r) => r.agent === 'bob').map((r) => r.event)).toEqual(
      expect.arrayContaining(['discover', 'subscribe', 'resource_updated']),
    );
  });

  it('stays in the 2025 era when serving Claude Code channel events (--channel): a pinned 2026 client is refused, a 2025 one served', async () => {
    const [command, ...args] = witnessCommand();
    const pinned = new ModernClient(
      { name: 'witness-test-2026', version: '0.0.0' },
      { versionNegotiation: { mode: { pin: '2026-07-28' } } },
    );
    await expect(
      pinned.connect(
        new ModernStdioTransport({
          command: command!,
          args: [...args, 'mailbox', 'serve', '--dir', mb.dir, '--agent', 'bob', '--channel'],
          stderr: 'pipe',
        }),
      ),
    ).rejects.toThrow();
    await pinned.close().catch(() => undefined);
    const legacy = await stdioClient(mb.dir, 'bob', ['--channel']);
    try {
      expect(await call(legacy.client, 'whoami')).toEqual({ name: 'bob' });
      expect(legacy.client.getServerCapabilities()?.experimental).toHaveProperty(['claude/channel']);
    } finally {
      await legacy.close();
    }
  });
});
