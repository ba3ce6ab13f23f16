/**
 * @module
 * The MCP tool the child agent calls (the paper's `get_evidence`), over Streamable
 * HTTP, stateless: each POST gets a fresh server and transport, so any number of
 * children can call it without sessions. Bound to 127.0.0.1 by default; Host and Origin
 * are checked as on every Witness server (access.ts). The evidence is a deterministic
 * function of the task text, so E12 outputs are reproducible.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import express from 'express';
import { z } from 'zod';
import { WitnessError } from '../core/errors.js';
import { sha256Hex } from '../core/hash.js';
import { accessGuard, guardMiddleware, type ServerAccessOptions } from './access.js';

export const EVIDENCE_TOOL = 'get_evidence';

export interface Evidence {
  task_sha256: string;
  items: string[];
}

/** The evidence for a task: three findings derived from the task's SHA-256. */
export function evidenceFor(task: string): Evidence {
  const digest = sha256Hex(Buffer.from(task, 'utf8'));
  const items = [0, 1, 2].map((i) => `finding ${i + 1}: measurement ${digest.slice(i * 8, i * 8 + 8)} is ${Number.parseInt(digest.slice(i * 8, i * 8 + 2), 16) % 2 === 0 ? 'within' : 'outside'} tolerance`);
  return { task_sha256: digest, items };
}

function _server(): McpServer {
  const server = new McpServer({ name: 'witness-evidence', version: '0.1.0' }, { capabilities: { tools: {} } });
  server.registerTool(
    EVIDENCE_TOOL,
    {
      title: 'Get evidence',
      description: 'Evidence findings for a task (deterministic from the task text).',
      inputSchema: { task: z.string().min(1).max(10_000) },
      outputSchema: { task_sha256: z.string(), items: z.array(z.string()) },
      annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
    },
    ({ task }) => {
      const evidence = evidenceFor(task);
      return { content: [{ type: 'text', text: JSON.stringify(evidence) }], structuredContent: { ...evidence } };
    },
  );
  return server;
}

type Req = IncomingMessage & { body?: unknown };
export interface ToolServer {
  /** The MCP endpoint, e.g. http://127.0.0.1:4200/mcp */
  url: string;
  close(): Promise<void>;
}

export async function serveEvidenceTool(options: ServerAccessOptions = {}): Promise<ToolServer> {
  const host = options.host ?? '127.0.0.1';
  const guard = accessGuard(options, 'the MCP tool server');
  // Express as the SDK's createMcpExpressApp builds it, with our Host/Origin check in
  // place of its Host-only one, before the body parser.
  const app = express();
  app.use(guardMiddleware(guard));
  app.use(express.json());
  app.all('/mcp', (req, res) => {
    _handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) {
        res.writeHead(500, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32603, message: `Internal error: ${(error as Error).message}` } }));
      }
    });
  });
  const server = await new Promise<Server>((resolve, reject) => {
    const s = app.listen(options.port ?? 0, host, (error) => (error ? reject(error) : resolve(s)));
  });
  const address = server.address() as AddressInfo;
  return {
    url: `http://${address.family === 'IPv6' ? `[${address.address}]` : address.address}:${address.port}/mcp`,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

async function _handle(req: Req, res: ServerResponse): Promise<void> {
  const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  const server = _server();
  await server.connect(transport);
  const headers = new Headers();
  for (const [key, value] of Object.entries(req.headers)) if (value !== undefined) headers.set(key, Array.isArray(value) ? value.join(', ') : value);
  const response = await transport.handleRequest(new Request(`http://${req.headers.host ?? 'localhost'}${req.url ?? '/mcp'}`, { method: req.method ?? 'GET', headers }), { parsedBody: req.body });
  const out: Record<string, string> = {};
  response.headers.forEach((value, key) => {
    out[key] = value;
  });
  res.writeHead(response.status, out);
  res.end(Buffer.from(await response.arrayBuffer()));
  await server.close();
}

/** A connected MCP client for the evidence tool; reuse it across tasks. */
export interface EvidenceClient {
  getEvidence(task: string): Promise<Evidence>;
  close(): Promise<void>;
}

export async function connectEvidenceTool(url: string): Promise<EvidenceClient> {
  const client = new Client({ name: 'witness-child', version: '0.1.0' });
  try {
    await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  } catch (cause) {
    throw new WitnessError('IO', `Cannot reach the MCP tool server at ${url}: ${(cause as Error).message}. Start it with: witness a2a tool`, { cause });
  }
  return {
    async getEvidence(task) {
      const result = await client.callTool({ name: EVIDENCE_TOOL, arguments: { task } });
      const parsed = z.object({ task_sha256: z.string(), items: z.array(z.string()) }).safeParse(result.structuredContent);
      if (result.isError || !parsed.success) throw new WitnessError('IO', `The ${EVIDENCE_TOOL} tool failed: ${JSON.stringify(result.content).slice(0, 300)}`);
      return parsed.data;
    },
    close: () => client.close(),
  };
}
