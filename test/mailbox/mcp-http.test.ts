/**
 * The mailbox over Streamable HTTP, driven by the real MCP SDK client against a real
 * server process: bearer tokens bind identity, Host and Origin are checked, sessions
 * cannot be borrowed by another agent, malformed bodies get JSON-RPC errors.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyMailbox } from '../../src/mailbox/index.js';
import { call, callError, type HttpServerProcess, httpClient, makeMailbox, startHttp, type TestMailbox } from './helpers.js';

const INIT = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '0' } } };
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
      const { messages } = await call<{ messages: Array<{ id: string; from: string; body: string }> }>(bob.client, 'check_inbox');
      expect(messages).toEqual([expect.objectContaining({ id: sent.id, from: 'alice', body: 'over http' })]);
      expect(await callError(alice.client, 'send_message', { to: 'nobody', body: 'x' })).toMatch(/Unknown recipient "nobody"/);
    } finally {
      await Promise.all([alice.close(), bob.close()]);
    }
    expect(verifyMailbox(mb.dir).problems).toEqual([]);
  });

  it('refuses a request without a bearer token with 401', async () => {
    const res = await fetch(server.url, { method: 'POST', headers: MCP_HEADERS, body: JSON.stringify(INIT) });
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toMatch(/Bearer/);
  });

  it('refuses an unknown token with 401', async () => {
    const res = await fetch(server.url, { method: 'POST', headers: { ...MCP_HEADERS, Authorization: 'Bearer wmb_not-a-token' }, body: JSON.stringify(INIT) });
    expect(res.status).toBe(401);
  });

  it('refuses a foreign Origin with 403', async () => {
    const res = await fetch(server.url, { method: 'POST', headers: { ...MCP_HEADERS, Authorization: `Bearer ${mb.tokens.alice}`, Origin: 'https://evil.example' }, body: JSON.stringify(INIT) });
    expect(res.status).toBe(403);
    expect(await res.text()).toMatch(/Origin https:\/\/evil\.example is not allowed/);
  });

  it('accepts a loopback Origin', async () => {
    const res = await fetch(server.url, { method: 'POST', headers: { ...MCP_HEADERS, Authorization: `Bearer ${mb.tokens.alice}`, Origin: 'http://localhost:3000' }, body: JSON.stringify(INIT) });
    expect(res.status).toBe(200);
  });

  it('refuses a non-loopback Host header (DNS rebinding) with 403', async () => {
    const { request } = await import('node:http');
    const url = new URL(server.url);
    const status = await new Promise<number>((resolve, reject) => {
      const req = request({ host: url.hostname, port: url.port, path: url.pathname, method: 'POST', headers: { ...MCP_HEADERS, Host: 'evil.example', Authorization: `Bearer ${mb.tokens.alice}` } }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', reject);
      req.end(JSON.stringify(INIT));
    });
    expect(status).toBe(403);
  });

  it('a session started by alice cannot be used with bob\'s token', async () => {
    const init = await fetch(server.url, { method: 'POST', headers: { ...MCP_HEADERS, Authorization: `Bearer ${mb.tokens.alice}` }, body: JSON.stringify(INIT) });
    const session = init.headers.get('mcp-session-id');
    expect(session).toBeTruthy();
    await init.text();
    const hijack = await fetch(server.url, {
      method: 'POST',
      headers: { ...MCP_HEADERS, Authorization: `Bearer ${mb.tokens.bob}`, 'mcp-session-id': session!, 'mcp-protocol-version': '2025-06-18' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'whoami', arguments: {} } }),
    });
    expect(hijack.status).toBe(403);
  });

  it('answers a body that is not JSON with a JSON-RPC parse error', async () => {
    const res = await fetch(server.url, { method: 'POST', headers: { ...MCP_HEADERS, Authorization: `Bearer ${mb.tokens.alice}` }, body: '{"jsonrpc": "2.0", "id": 1, "method": ' });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ jsonrpc: '2.0', error: { code: -32700 } });
  });
});
