// `witness a2a tool` speaks Streamable HTTP as the mailbox does: a GET is refused at
// once (405, Allow) instead of holding a stream that never ends, and every refusal is
// JSON — a parse error, a body that is not JSON-RPC, a body over the limit.
import { request } from 'node:http';
import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectEvidenceTool, evidenceFor, serveEvidenceTool, type ToolServer } from '../../src/a2a/tool-server.js';

let tool: ToolServer;
beforeAll(async () => {
  tool = await serveEvidenceTool();
});
afterAll(() => tool?.close());

const MCP = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' };
const INIT = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } },
};

/** One raw request; resolves when the whole answer has arrived (a held-open stream never resolves). */
function raw(
  url: string,
  method: string,
  headers: Record<string, string>,
  body = '',
): Promise<{ status: number; headers: Record<string, unknown>; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') }),
      );
    });
    req.on('error', reject);
    req.end(body);
  });
}

describe('the MCP tool server', () => {
  it('answers GET /mcp (Accept: text/event-stream) with 405 and Allow: POST, and ends the answer', async () => {
    const reply = await raw(tool.url, 'GET', { Accept: 'text/event-stream' });
    expect([reply.status, reply.headers.allow, reply.headers['content-type']]).toEqual([
      405,
      'POST',
      'application/json',
    ]);
    expect(JSON.parse(reply.text)).toMatchObject({ jsonrpc: '2.0', error: { code: -32000 } });
  });

  it('answers a body that is not JSON with 400 and -32700 as JSON', async () => {
    const reply = await raw(tool.url, 'POST', MCP, '{"jsonrpc": "2.0", "id": 1, ');
    expect([reply.status, reply.headers['content-type']]).toEqual([400, 'application/json']);
    expect(JSON.parse(reply.text)).toMatchObject({ id: null, error: { code: -32700 } });
  });

  it('answers JSON that is not JSON-RPC with 400 and -32600 (Invalid Request)', async () => {
    const reply = await raw(tool.url, 'POST', MCP, '{"hello":"world"}');
    expect([reply.status, JSON.parse(reply.text).error.code]).toEqual([400, -32600]);
  });

  it('refuses a body over --max-request-bytes with a JSON 413 naming the limit', async () => {
    const small = await serveEvidenceTool({ maxRequestBytes: 1000 });
    try {
      const reply = await raw(small.url, 'POST', MCP, JSON.stringify({ ...INIT, pad: 'x'.repeat(1000) }));
      expect([reply.status, reply.headers['content-type']]).toEqual([413, 'application/json']);
      expect(JSON.parse(reply.text).error.message).toMatch(/the limit is 1000 bytes.*--max-request-bytes/);
    } finally {
      await small.close();
    }
  });

  it('answers an unknown tool and a tools/call without params with -32602, as MCP 2025-11-25 lists them', async () => {
    const unknown = await raw(
      tool.url,
      'POST',
      MCP,
      JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'rm', arguments: {} } }),
    );
    expect(JSON.parse(unknown.text)).toMatchObject({
      id: 2,
      error: { code: -32602, message: expect.stringMatching(/^Unknown tool "rm"/) },
    });
    const bare = await raw(tool.url, 'POST', MCP, JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'tools/call' }));
    expect(JSON.parse(bare.text)).toMatchObject({
      id: 3,
      error: { code: -32602, message: expect.stringMatching(/^Invalid params/) },
    });
  });

  it('answers arguments that fail the schema with a one-line tool error', async () => {
    const reply = await raw(
      tool.url,
      'POST',
      MCP,
      JSON.stringify({
        jsonrpc: '2.0',
        id: 4,
        method: 'tools/call',
        params: { name: 'get_evidence', arguments: { task: 7 } },
      }),
    );
    expect(JSON.parse(reply.text).result).toEqual({
      content: [
        {
          type: 'text',
          text: expect.stringMatching(/^Invalid arguments for get_evidence: task: expected a string, got a number\./),
        },
      ],
      isError: true,
    });
  });

  it('gives the SDK client evidence for a 200 KB task', async () => {
    const client = await connectEvidenceTool(tool.url);
    try {
      const task = 'Inspect this lot. '.repeat(11_500);
      expect(await client.getEvidence(task)).toEqual(evidenceFor(task));
    } finally {
      await client.close();
    }
  });

  it('answers an MCP 2026-07-28 client (SDK 2.4, no initialize) on the same endpoint, with the same evidence and the same refusals', async () => {
    const client = new ModernClient(
      { name: 'witness-test-2026', version: '0.0.0' },
      { versionNegotiation: { mode: { pin: '2026-07-28' } } },
    );
    await client.connect(new ModernTransport(new URL(tool.url)));
    try {
      expect(client.getNegotiatedProtocolVersion?.()).toBe('2026-07-28');
      expect((await client.listTools()).tools.map((t) => t.name)).toEqual(['get_evidence']);
      const result = await client.callTool({ name: 'get_evidence', arguments: { task: 'inspect lot 7' } });
      expect(result.structuredContent).toEqual(evidenceFor('inspect lot 7'));
      const bad = await client.callTool({ name: 'get_evidence', arguments: { task: 7 } });
      expect(bad).toMatchObject({
        isError: true,
        content: [
          {
            text: expect.stringMatching(/^Invalid arguments for get_evidence: task: expected a string, got a number\./),
          },
        ],
      });
      await expect(client.callTool({ name: 'no_such_tool', arguments: {} })).rejects.toMatchObject({ code: -32602 });
    } finally {
      await client.close();
    }
  });
});
