/**
 * The mailbox over Streamable HTTP, driven by the real MCP SDK client against a real
 * server process: bearer tokens bind identity, Host and Origin are checked, sessions
 * cannot be borrowed by another agent, malformed bodies get JSON-RPC errors.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyMailbox } from '../../src/mailbox/index.js';
import {
  call,
  callError,
  type HttpServerProcess,
  httpClient,
  makeMailbox,
  startHttp,
  type TestMailbox,
} from './helpers.js';

const INIT = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '0' } },
};
const MCP_HEADERS = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' };

describe('mailbox over Streamable HTTP', () => {
  let mb: TestMailbox;
  let server: HttpServerProcess;

  beforeAll(async () => {
    mb = await makeMailbox(['alice', 'bob']);
    server = await startHttp(mb.dir);
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('binds to loopback by default', () => {
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
  });

  it('each token acts as its own agent: alice sends, bob reads, and ping works', async () => {
    const alice = await httpClient(server.url, mb.tokens.alice!);
    const bob = await httpClient(server.url, mb.tokens.bob!);
    try {
      await alice.client.ping();
      expect(await call(bob.client, 'whoami')).toEqual({ name: 'bob' });
      const sent = await call<{ id: string }>(alice.client, 'send_message', { to: 'bob', body: 'over http' });
      const { messages } = await call<{ messages: Array<{ id: string; from: string; body: string }> }>(
        bob.client,
        'check_inbox',
      );
      expect(messages).toEqual([expect.objectContaining({ id: sent.id, from: 'alice', body: 'over http' })]);
      expect(await callError(alice.client, 'send_message', { to: 'nobody', body: 'x' })).toMatch(
        /Unknown recipient "nobody"/,
      );
    } finally {
      await Promise.all([alice.close(), bob.close()]);
    }
    expect((await verifyMailbox(mb.dir)).problems).toEqual([]);
  });

  it('refuses a request without a bearer token with 401', async () => {
    const res = await fetch(server.url, { method: 'POST', headers: MCP_HEADERS, body: JSON.stringify(INIT) });
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toMatch(/Bearer/);
  });

  it('refuses an unknown token with 401', async () => {
    const res = await fetch(server.url, {
      method: 'POST',
      headers: { ...MCP_HEADERS, Authorization: 'Bearer wmb_not-a-token' },
      body: JSON.stringify(INIT),
    });
    expect(res.status).toBe(401);
  });

  it('refuses a foreign Origin with 403', async () => {
    const res = await fetch(server.url, {
      method: 'POST',
      headers: { ...MCP_HEADERS, Authorization: `Bearer ${mb.tokens.alice}`, Origin: 'https://evil.example' },
      body: JSON.stringify(INIT),
    });
    expect(res.status).toBe(403);
    expect(await res.text()).toMatch(/Origin https:\/\/evil\.example is not allowed/);
  });

  it('accepts a loopback Origin', async () => {
    const res = await fetch(server.url, {
      method: 'POST',
      headers: { ...MCP_HEADERS, Authorization: `Bearer ${mb.tokens.alice}`, Origin: 'http://localhost:3000' },
      body: JSON.stringify(INIT),
    });
    expect(res.status).toBe(200);
  });

  it('refuses a non-loopback Host header (DNS rebinding) with 403', async () => {
    const { request } = await import('node:http');
    const url = new URL(server.url);
    const status = await new Promise<number>((resolve, reject) => {
      const req = request(
        {
          host: url.hostname,
          port: url.port,
          path: url.pathname,
          method: 'POST',
          headers: { ...MCP_HEADERS, Host: 'evil.example', Authorization: `Bearer ${mb.tokens.alice}` },
        },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        },
      );
      req.on('error', reject);
      req.end(JSON.stringify(INIT));
    });
    expect(status).toBe(403);
  });

  it("a session started by alice cannot be used with bob's token", async () => {
    const init = await fetch(server.url, {
      method: 'POST',
      headers: { ...MCP_HEADERS, Authorization: `Bearer ${mb.tokens.alice}` },
      body: JSON.stringify(INIT),
    });
    const session = init.headers.get('mcp-session-id');
    expect(session).toBeTruthy();
    await init.text();
    const hijack = await fetch(server.url, {
      method: 'POST',
      headers: {
        ...MCP_HEADERS,
        Authorization: `Bearer ${mb.tokens.bob}`,
        'mcp-session-id': session!,
        'mcp-protocol-version': '2025-06-18',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'whoami', arguments: {} } }),
    });
    expect(hijack.status).toBe(403);
  });

  it('answers a body that is not JSON with a JSON-RPC parse error', async () => {
    const res = await fetch(server.url, {
      method: 'POST',
      headers: { ...MCP_HEADERS, Authorization: `Bearer ${mb.tokens.alice}` },
      body: '{"jsonrpc": "2.0", "id": 1, "method": ',
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ jsonrpc: '2.0', error: { code: -32700 } });
  });

  describe('Streamable HTTP rules (JSON-response mode)', () => {
    const auth = () => ({ ...MCP_HEADERS, Authorization: `Bearer ${mb.tokens.alice}` });
    async function session(): Promise<Record<string, string>> {
      const init = await fetch(server.url, { method: 'POST', headers: auth(), body: JSON.stringify(INIT) });
      expect(init.status).toBe(200);
      await init.json();
      return { ...auth(), 'mcp-session-id': init.headers.get('mcp-session-id')!, 'mcp-protocol-version': '2025-06-18' };
    }
    const post = (headers: Record<string, string>, body: unknown) =>
      fetch(server.url, { method: 'POST', headers, body: typeof body === 'string' ? body : JSON.stringify(body) });
    const whoami = (id: number) => ({
      jsonrpc: '2.0',
      id,
      method: 'tools/call',
      params: { name: 'whoami', arguments: {} },
    });

    it('answers a notification-only POST with 202 and no body', async () => {
      const res = await post(await session(), { jsonrpc: '2.0', method: 'notifications/initialized' });
      expect(res.status).toBe(202);
      expect(await res.text()).toBe('');
    });

    it('answers a batch with an array of replies in request order', async () => {
      const res = await post(await session(), [whoami(7), { jsonrpc: '2.0', id: 8, method: 'ping' }]);
      expect(res.status).toBe(200);
      const replies = (await res.json()) as Array<{ id: number; result: { structuredContent?: unknown } }>;
      expect(replies.map((r) => r.id)).toEqual([7, 8]);
      expect(replies[0]!.result.structuredContent).toEqual({ name: 'alice' });
    });

    it("GET opens the session's one event stream (SSE); a second is refused with 409, a GET without text/event-stream with 406, PUT with 405", async () => {
      const headers = new Headers(await session());
      const accepting = (accept: string) => {
        const h = new Headers(headers);
        h.set('accept', accept);
        return h;
      };
      const controller = new AbortController();
      const first = await fetch(server.url, { headers: accepting('text/event-stream'), signal: controller.signal });
      expect(first.status).toBe(200);
      expect(first.headers.get('content-type')).toBe('text/event-stream');
      expect((await fetch(server.url, { headers: accepting('text/event-stream') })).status).toBe(409);
      expect((await fetch(server.url, { headers: accepting('application/json') })).status).toBe(406);
      const put = await fetch(server.url, { method: 'PUT', headers });
      expect(put.status).toBe(405);
      expect(put.headers.get('allow')).toBe('GET, POST, DELETE');
      controller.abort();
    });

    it('DELETE ends the session; later requests in it get 404', async () => {
      const headers = await session();
      expect((await fetch(server.url, { method: 'DELETE', headers })).status).toBe(200);
      const res = await post(headers, whoami(2));
      expect(res.status).toBe(404);
      expect(await res.json()).toMatchObject({ error: { code: -32001 } });
    });

    it('checks Accept, Content-Type, the protocol version and the message shape', async () => {
      const headers = await session();
      expect((await post({ ...headers, Accept: 'application/json' }, whoami(3))).status).toBe(406);
      expect((await post({ ...headers, 'Content-Type': 'text/plain' }, whoami(3))).status).toBe(415);
      const version = await post({ ...headers, 'mcp-protocol-version': '1999-01-01' }, whoami(3));
      expect(version.status).toBe(400);
      expect(await version.text()).toMatch(/unsupported protocol version 1999-01-01/);
      const shape = await post(headers, { hello: 'world' });
      expect(shape.status).toBe(400);
      expect(await shape.json()).toMatchObject({ error: { code: -32600 } }); // valid JSON, not JSON-RPC: Invalid Request, as on stdio
      expect((await post(headers, [INIT, whoami(4)])).status).toBe(400); // initialize must come alone
    });

    it('refuses initialize inside an existing session with 400, as the SDK transport does', async () => {
      const headers = await session();
      const res = await post(headers, INIT);
      expect(res.status).toBe(400);
      expect(await res.json()).toMatchObject({
        id: null,
        error: { code: -32600, message: expect.stringMatching(/already initialized/) },
      });
    });

    it('refuses a body over 1 MiB with 413 and stores nothing', async () => {
      const before = (await verifyMailbox(mb.dir)).calls;
      const big = {
        jsonrpc: '2.0',
        id: 5,
        method: 'tools/call',
        params: { name: 'send_message', arguments: { to: 'bob', body: 'x'.repeat(1_100_000) } },
      };
      const res = await post(await session(), big);
      expect(res.status).toBe(413);
      expect(await res.text()).toMatch(/Request body too large/);
      expect((await verifyMailbox(mb.dir)).calls).toBe(before);
    });

    it('answers a request whose id is still in flight in the session with an error, not a mixed-up reply', async () => {
      const headers = await session();
      const waiting = post(headers, {
        jsonrpc: '2.0',
        id: 9,
        method: 'tools/call',
        params: { name: 'wait_for_message', arguments: { timeout_ms: 1500 } },
      });
      await new Promise((resolve) => setTimeout(resolve, 300));
      const duplicate = await post(headers, whoami(9));
      expect(await duplicate.json()).toMatchObject({
        id: 9,
        error: { code: -32600, message: expect.stringMatching(/already in flight/) },
      });
      expect(await (await waiting).json()).toMatchObject({ id: 9, result: { structuredContent: { timed_out: true } } });
    });

    it("checks the token before reading a body: a stranger's big POST gets 401, not 413", async () => {
      const res = await post(MCP_HEADERS, 'x'.repeat(2_000_000));
      expect(res.status).toBe(401);
    });

    it("a cancelled request's POST is answered at once, and its id is free again", async () => {
      const headers = await session();
      const waiting = post(headers, {
        jsonrpc: '2.0',
        id: 7,
        method: 'tools/call',
        params: { name: 'wait_for_message', arguments: { timeout_ms: 20_000 } },
      });
      await new Promise((resolve) => setTimeout(resolve, 300));
      const cancel = await post(headers, {
        jsonrpc: '2.0',
        method: 'notifications/cancelled',
        params: { requestId: 7, reason: 'test' },
      });
      expect(cancel.status).toBe(202);
      expect(await (await waiting).json()).toMatchObject({ id: 7, error: { code: -32800 } });
      expect(await (await post(headers, whoami(7))).json()).toMatchObject({
        id: 7,
        result: { structuredContent: { name: 'alice' } },
      });
    });

    it('a client that closes its connection mid-request frees the request id', async () => {
      const headers = await session();
      const abort = new AbortController();
      const gone = fetch(server.url, {
        method: 'POST',
        headers,
        signal: abort.signal,
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 8,
          method: 'tools/call',
          params: { name: 'wait_for_message', arguments: { timeout_ms: 20_000 } },
        }),
      });
      await new Promise((resolve) => setTimeout(resolve, 300));
      abort.abort();
      await expect(gone).rejects.toThrow();
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(await (await post(headers, whoami(8))).json()).toMatchObject({
        id: 8,
        result: { structuredContent: { name: 'alice' } },
      });
    });

    it('one agent cannot fill the session table: its least recently used session is closed past 32', async () => {
      const first = await session();
      for (let i = 0; i < 32; i++) await session();
      expect((await post(first, whoami(1))).status).toBe(404);
      const bob = await fetch(server.url, {
        method: 'POST',
        headers: { ...MCP_HEADERS, Authorization: `Bearer ${mb.tokens.bob}` },
        body: JSON.stringify(INIT),
      });
      expect(bob.status).toBe(200);
    });

    it('a tools/call without params, an unknown tool and a mistyped argument each get a clear error and a receipt', async () => {
      const headers = await session();
      const calls = () =>
        readFileSync(join(mb.dir, 'calls.jsonl'), 'utf8')
          .trim()
          .split('\n')
          .map((l) => JSON.parse(l) as { agent: string; tool: string; ok: boolean });
      const before = calls().length;
      const noParams = (await (await post(headers, { jsonrpc: '2.0', id: 11, method: 'tools/call' })).json()) as {
        error: { code: number; message: string };
      };
      expect(noParams.error).toEqual({
        code: -32602,
        message: 'Invalid params: tools/call needs params {name: string, arguments?: object}.',
      });
      const unknown = (await (
        await post(headers, { jsonrpc: '2.0', id: 12, method: 'tools/call', params: { name: 'rm', arguments: {} } })
      ).json()) as { error: { code: number; message: string } };
      expect(unknown.error).toMatchObject({ code: -32602, message: expect.stringMatching(/^Unknown tool "rm"/) });
      const typed = (await (
        await post(headers, {
          jsonrpc: '2.0',
          id: 13,
          method: 'tools/call',
          params: { name: 'send_message', arguments: { to: 'bob', body: 123 } },
        })
      ).json()) as { result: { isError: boolean; content: Array<{ text: string }> } };
      expect(typed.result).toMatchObject({
        isError: true,
        content: [
          {
            text: expect.stringMatching(/^Invalid arguments for send_message: body: expected a string, got a number\./),
          },
        ],
      });
      expect(
        calls()
          .slice(before)
          .map((c) => `${c.agent} ${c.tool} ${c.ok}`),
      ).toEqual(['alice unknown_tool false', 'alice unknown_tool false', 'alice send_message false']);
      expect((await verifyMailbox(mb.dir)).problems).toEqual([]);
    });

    it('answers 404 off the /mcp path', async () => {
      const res = await fetch(server.url.replace(/\/mcp$/, '/other'), {
        method: 'POST',
        headers: auth(),
        body: JSON.stringify(INIT),
      });
      expect(res.status).toBe(404);
    });
  });

  it('takes its body limit from --max-request-bytes and names it in a JSON 413', async () => {
    const small = await startHttp(mb.dir, ['--max-request-bytes', '2000']);
    try {
      const headers = { ...MCP_HEADERS, Authorization: `Bearer ${mb.tokens.alice}` };
      expect((await fetch(small.url, { method: 'POST', headers, body: JSON.stringify(INIT) })).status).toBe(200);
      const res = await fetch(small.url, {
        method: 'POST',
        headers,
        body: JSON.stringify({ ...INIT, pad: 'x'.repeat(2000) }),
      });
      expect(res.status).toBe(413);
      expect(res.headers.get('content-type')).toBe('application/json');
      expect(await res.json()).toMatchObject({
        jsonrpc: '2.0',
        id: null,
        error: { message: expect.stringMatching(/the limit is 2000 bytes.*--max-request-bytes/) },
      });
    } finally {
      await small.stop();
    }
  });
});
