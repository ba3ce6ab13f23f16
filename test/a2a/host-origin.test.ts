// The A2A agent, the co-signer and the MCP tool check Host and Origin as the mailbox
// does (DNS rebinding; a web page on another site), before reading any body.
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CARD_PATH, JSONRPC_PATH } from '../../src/a2a/card.js';
import { serveCosigner } from '../../src/a2a/cosigner.js';
import { serveEvidenceTool } from '../../src/a2a/tool-server.js';
import { startWorld, type World } from './helpers.js';

let world: World;
beforeAll(async () => {
  world = await startWorld();
});
afterAll(() => world.close());

/** One raw HTTP request, so the Host header can be anything. */
function send(
  url: string,
  method: string,
  headers: Record<string, string>,
  body = '',
): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method,
        headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', ...headers },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

const initialize = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
});
const servers = () => [
  { name: 'a2a serve (card)', url: `${world.agent.url}${CARD_PATH}`, method: 'GET', body: '' },
  {
    name: 'a2a serve (JSON-RPC)',
    url: `${world.agent.url}${JSONRPC_PATH}`,
    method: 'POST',
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'GetTask', params: { id: 'x' } }),
  },
  { name: 'a2a cosigner', url: `${world.cosigner.url}/cosign`, method: 'POST', body: '{}' },
  { name: 'a2a tool', url: world.tool.url, method: 'POST', body: initialize },
];

describe('Host and Origin on every A2A server', () => {
  it('refuses Host: evil.example with 403 on each', async () => {
    for (const s of servers()) {
      const r = await send(s.url, s.method, { Host: 'evil.example' }, s.body);
      expect([r.status, r.text], s.name).toEqual([403, expect.stringMatching(/Host evil\.example is not allowed/)]);
    }
  });

  it('refuses Origin: http://evil.example with 403 on each', async () => {
    for (const s of servers()) {
      const r = await send(s.url, s.method, { Origin: 'http://evil.example' }, s.body);
      expect([r.status, r.text], s.name).toEqual([
        403,
        expect.stringMatching(/Origin http:\/\/evil\.example is not allowed/),
      ]);
    }
  });

  it('lets a loopback Host and Origin through to the handler', async () => {
    for (const s of servers()) {
      const r = await send(s.url, s.method, { Origin: 'http://localhost:3000' }, s.body);
      expect(r.status, `${s.name}: ${r.text}`).not.toBe(403);
    }
  });

  it('refuses to bind beyond loopback unless the host names clients use are given', async () => {
    await expect(serveCosigner(world.service, { host: '0.0.0.0' })).rejects.toThrow(/--allowed-host/);
    await expect(serveEvidenceTool({ host: '0.0.0.0' })).rejects.toThrow(/--allowed-host/);
  });

  it('accepts a name given with allowedHosts, and only that name', async () => {
    const server = await serveCosigner(world.service, { host: '0.0.0.0', allowedHosts: ['cosigner.internal'] });
    try {
      const port = new URL(server.url).port;
      const url = `http://127.0.0.1:${port}/cosign`;
      expect((await send(url, 'POST', { Host: `cosigner.internal:${port}` }, '{}')).status).not.toBe(403);
      expect((await send(url, 'POST', { Host: `127.0.0.1:${port}` }, '{}')).status).toBe(403);
    } finally {
      await server.close();
    }
  });
});
