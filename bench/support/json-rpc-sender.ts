/**
 * An agent that speaks MCP over HTTP by hand, for benches: a 2025-06-18 session
 * (initialize, then one POST per send), each send a `send_message` to `sink`. What a
 * server sustains when its clients cost little.
 */
import { Agent, request } from 'node:http';

/** node:http with keep-alive (Node 20's global fetch costs several ms of CPU per request here). */
export const keepAlive = new Agent({ keepAlive: true, maxSockets: 64 });

/**
 * Opens a session for `token`; the function it returns sends `n` messages, one in flight,
 * giving `timed` each send's milliseconds from request to answer.
 */
export async function jsonRpcSender(
  url: string,
  token: string,
  body: string,
  timed?: (ms: number) => void,
): Promise<(n: number) => Promise<void>> {
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    authorization: `Bearer ${token}`,
  };
  const init = await postJson(url, headers, {
    jsonrpc: '2.0',
    id: 0,
    method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'bench', version: '0' } },
  });
  headers['mcp-session-id'] = String(init.headers['mcp-session-id']);
  headers['mcp-protocol-version'] = '2025-06-18';
  await postJson(url, headers, { jsonrpc: '2.0', method: 'notifications/initialized' });
  let id = 1;
  return async (n) => {
    for (let i = 0; i < n; i++) {
      const sent = performance.now();
      const reply = await postJson(url, headers, {
        jsonrpc: '2.0',
        id: id++,
        method: 'tools/call',
        params: { name: 'send_message', arguments: { to: 'sink', body } },
      });
      if (reply.status !== 200 || !reply.text.includes('"structuredContent"'))
        throw new Error(`send failed: ${reply.status} ${reply.text}`);
      timed?.(performance.now() - sent);
    }
  };
}

export function postJson(
  url: string,
  headers: Record<string, string>,
  body: unknown,
): Promise<{ status: number; headers: Record<string, unknown>; text: string }> {
  return new Promise((resolvePost, reject) => {
    const req = request(url, { method: 'POST', headers, agent: keepAlive }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        text += chunk;
      });
      res.on('end', () => resolvePost({ status: res.statusCode ?? 0, headers: res.headers, text }));
    });
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

/**
 * The same agent speaking MCP 2026-07-28: no initialize and no session; each POST
 * carries its protocol version and client capabilities in `_meta`, and the
 * `MCP-Protocol-Version`, `Mcp-Method` and `Mcp-Name` headers the revision requires.
 */
export function modernJsonRpcSender(url: string, token: string, body: string): (n: number) => Promise<void> {
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    authorization: `Bearer ${token}`,
    'mcp-protocol-version': '2026-07-28',
    'mcp-method': 'tools/call',
    'mcp-name': 'send_message',
  };
  const _meta = {
    'io.modelcontextprotocol/protocolVersion': '2026-07-28',
    'io.modelcontextprotocol/clientCapabilities': {},
    'io.modelcontextprotocol/clientInfo': { name: 'bench', version: '0' },
  };
  let id = 1;
  return async (n) => {
    for (let i = 0; i < n; i++) {
      const reply = await postJson(url, headers, {
        jsonrpc: '2.0',
        id: id++,
        method: 'tools/call',
        params: { name: 'send_message', arguments: { to: 'sink', body }, _meta },
      });
      if (reply.status !== 200 || !reply.text.includes('"structuredContent"'))
        throw new Error(`send failed: ${reply.status} ${reply.text}`);
    }
  };
}
