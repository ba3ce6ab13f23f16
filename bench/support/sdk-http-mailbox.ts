/**
 * A mailbox served over Streamable HTTP through the MCP SDK's own
 * `StreamableHTTPServerTransport` (stateful, JSON responses, its GET event stream),
 * for bench/http-transport.ts to compare with `witness mailbox serve --http`, whose
 * sessions use the hand-written transport (src/mailbox/http-session.ts). Same
 * runtime, same store, same tools; one agent's token; no Host/Origin checks.
 *
 *   node --import tsx bench/support/sdk-http-mailbox.ts DIR   (prints "listening on URL")
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage } from 'node:http';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { createMailboxServer, createRuntime, readAgents } from '../../src/mailbox/index.js';
import { tokenHash } from '../../src/mailbox/config.js';

const dir = process.argv[2];
if (!dir) throw new Error('usage: sdk-http-mailbox.ts DIR');
const runtime = await createRuntime({ dir, limits: { sendsPerMinute: 0, maxUnreadMessages: 0, maxUnreadBytes: 0 } });
const byHash = new Map(readAgents(dir).map((a) => [a.token_sha256, a.name]));
const sessions = new Map<string, StreamableHTTPServerTransport>();

async function body(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return chunks.length === 0 ? undefined : JSON.parse(Buffer.concat(chunks).toString('utf8'));
}

const server = createServer(async (req, res) => {
  const agent = byHash.get(tokenHash((req.headers.authorization ?? '').replace(/^Bearer\s+/i, '')));
  if (!agent) return void res.writeHead(401).end();
  const parsed = req.method === 'POST' ? await body(req) : undefined;
  const id = req.headers['mcp-session-id'];
  let transport = typeof id === 'string' ? sessions.get(id) : undefined;
  if (!transport) {
    transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      enableJsonResponse: true,
      onsessioninitialized: (sid) => void sessions.set(sid, transport!),
    });
    await createMailboxServer(runtime, agent).connect(transport);
  }
  await transport.handleRequest(req, res, parsed);
});
server.listen(0, '127.0.0.1', () => {
  const address = server.address() as { port: number };
  process.stderr.write(`listening on http://127.0.0.1:${address.port}/mcp\n`);
});
