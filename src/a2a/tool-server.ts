/**
 * @module
 * The MCP tool the child agent calls (the paper's `get_evidence`), over Streamable
 * HTTP, stateless: each POST gets a fresh server, so any number of children can call
 * it without sessions. MCP 2026-07-28 clients are answered on the same endpoint by the
 * 2.x SDK's handler (the era picked as on the mailbox, mailbox/modern-http.ts). The HTTP front is the mailbox's (plain node:http, the checks
 * and status codes of the SDK's transport, JSON-response mode): a GET is answered 405
 * at once — there is no server-to-client stream to hold open, and a GET the SDK
 * client sends after `initialize` must not wait for one. Bound to 127.0.0.1 by
 * default; Host and Origin are checked as on every Witness server; bodies are limited
 * (`maxRequestBytes`) and every refusal is JSON (core/http-server.ts). The evidence is
 * a deterministic function of the task text, so E12 outputs are reproducible.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { createMcpHandler, type McpHttpHandler, McpServer as ModernMcpServer } from '@modelcontextprotocol/server';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { WitnessError } from '../core/errors.js';
import { sha256Hex } from '../core/hash.js';
import { type FrontRequest, JSON_RPC_ERRORS, serveFront } from '../core/http-front.js';
import { requestLimit, sendJsonRpcError } from '../core/http-server.js';
import { VERSION } from '../core/version.js';
import { answerPost, checkPost, checkProtocolVersion, closedEarly, HttpSession } from '../mailbox/http-session.js';
import { answerModern, isLegacy, pooled } from '../mailbox/modern-http.js';
import type { ToolServer as McpToolServer } from '../mailbox/tools/index.js';
import { routeToolCalls, type ToolRoute } from '../mailbox/tools/route.js';
import { routeModernToolCalls } from '../mailbox/tools/route-modern.js';
import type { ServerAccessOptions } from './access.js';

export const EVIDENCE_TOOL = 'get_evidence' as const;

export interface Evidence {
  task_sha256: string;
  items: string[];
}

/** The evidence for a task: three findings derived from the task's SHA-256. */
export function evidenceFor(task: string): Evidence {
  const digest = sha256Hex(Buffer.from(task, 'utf8'));
  const items = [0, 1, 2].map(
    (i) =>
      `finding ${i + 1}: measurement ${digest.slice(i * 8, i * 8 + 8)} is ${Number.parseInt(digest.slice(i * 8, i * 8 + 2), 16) % 2 === 0 ? 'within' : 'outside'} tolerance`,
  );
  return { task_sha256: digest, items };
}

/** A request body larger than this gets a JSON 413 unless configured: room for a 200 KB task and more. */
export const DEFAULT_TOOL_MAX_REQUEST_BYTES = 1024 * 1024;

/**
 * The tool on a fresh `McpServer` of SDK 1.x (MCP 2025-11-25). Calls go through the
 * mailbox's router (route.ts), so an unknown tool or a call without params is a -32602
 * error as MCP lists it, and bad arguments a one-line tool error; this server keeps no
 * log to write.
 */
function _server(maxTaskChars: number): McpServer {
  const server = new McpServer({ name: 'witness-evidence', version: VERSION }, { capabilities: { tools: {} } });
  routeToolCalls(server, _registerEvidence(server, maxTaskChars), async () => {});
  return server;
}

/** The same tool on SDK 2.x (MCP 2026-07-28). */
function _modernServer(maxTaskChars: number): ModernMcpServer {
  const server = new ModernMcpServer({ name: 'witness-evidence', version: VERSION }, { capabilities: { tools: {} } });
  routeModernToolCalls(server, _registerEvidence(server, maxTaskChars), async () => {});
  return server;
}

/** Registers the evidence tool (for tools/list) and returns its route (for tools/call). */
function _registerEvidence(server: McpToolServer, maxTaskChars: number): Map<string, ToolRoute<typeof EVIDENCE_TOOL>> {
  const inputSchema = { task: z.string().min(1).max(maxTaskChars) };
  const run = async ({ task }: { task: string }) => {
    const evidence = evidenceFor(task);
    return { content: [{ type: 'text' as const, text: JSON.stringify(evidence) }], structuredContent: { ...evidence } };
  };
  server.registerTool(
    EVIDENCE_TOOL,
    {
      title: 'Get evidence',
      description: 'Evidence findings for a task (deterministic from the task text).',
      inputSchema,
      outputSchema: { task_sha256: z.string(), items: z.array(z.string()) },
      annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
    },
    run,
  );
  const route: ToolRoute<typeof EVIDENCE_TOOL> = {
    tool: EVIDENCE_TOOL,
    input: z.object(inputSchema),
    run: (args) => run(args as { task: string }),
  };
  return new Map([[EVIDENCE_TOOL, route]]);
}

export interface ToolServer {
  /** The MCP endpoint, e.g. http://127.0.0.1:4200/mcp */
  url: string;
  close(): Promise<void>;
}

export async function serveEvidenceTool(options: ServerAccessOptions = {}): Promise<ToolServer> {
  const limit = requestLimit(options.maxRequestBytes, DEFAULT_TOOL_MAX_REQUEST_BYTES);
  const modern = createMcpHandler(
    pooled(() => _modernServer(limit)),
    { legacy: 'reject', maxRequestBodySize: limit },
  );
  const http = await serveFront(
    { what: 'the MCP tool server', ...options, limit, errors: JSON_RPC_ERRORS },
    (req, res, request) => _route(limit, modern, req, res, request),
  );
  return {
    url: `${http.url}/mcp`,
    close: async () => {
      await modern.close();
      await http.close();
    },
  };
}

/** Path, method, body, then the Streamable HTTP checks (after the front's Host/Origin guard): in the order that reveals least. */
async function _route(
  limit: number,
  modern: McpHttpHandler,
  req: IncomingMessage,
  res: ServerResponse,
  request: FrontRequest,
): Promise<void> {
  if ((req.url ?? '/').split('?')[0] !== '/mcp')
    return request.refuse(404, 'NOT_FOUND', 'Not found: the MCP endpoint is /mcp.');
  if (req.method !== 'POST') {
    // Stateless and JSON-only: no SSE stream to open (GET) and no session to end (DELETE); the spec allows 405.
    return request.refuse(
      405,
      'METHOD_NOT_ALLOWED',
      `Method not allowed: ${req.method}. This stateless server answers POSTs with JSON and offers no SSE stream.`,
      { Allow: 'POST' },
    );
  }
  const read = await request.json();
  if (!read) return;
  const { bytes, value: body } = read;
  // MCP 2026-07-28 (stateless by design) goes to the 2.x SDK's handler, by its own classifier.
  if (!isLegacy(req.headers, body)) return answerModern(modern, req, res, bytes, body);
  const post = checkPost(req.headers, body);
  if ('status' in post) return sendJsonRpcError(res, post.status, post.code, post.message);
  const version = post.initialize ? undefined : checkProtocolVersion(req.headers);
  if (version) return sendJsonRpcError(res, version.status, version.code, version.message);
  const transport = new HttpSession();
  const mcp = _server(limit);
  await mcp.connect(transport);
  try {
    answerPost(res, post, await transport.receive(post, req.headers, closedEarly(res)));
  } finally {
    await mcp.close();
  }
}

/** A connected MCP client for the evidence tool; reuse it across tasks. */
export interface EvidenceClient {
  getEvidence(task: string): Promise<Evidence>;
  close(): Promise<void>;
}

export async function connectEvidenceTool(url: string): Promise<EvidenceClient> {
  const client = new Client({ name: 'witness-child', version: VERSION });
  try {
    await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  } catch (cause) {
    throw new WitnessError(
      'IO',
      `Cannot reach the MCP tool server at ${url}: ${(cause as Error).message}. Start it with: witness a2a tool`,
      { cause },
    );
  }
  return {
    async getEvidence(task) {
      const result = await client.callTool({ name: EVIDENCE_TOOL, arguments: { task } });
      const parsed = z
        .object({ task_sha256: z.string(), items: z.array(z.string()) })
        .safeParse(result.structuredContent);
      if (result.isError || !parsed.success)
        throw new WitnessError(
          'IO',
          `The ${EVIDENCE_TOOL} tool failed: ${JSON.stringify(result.content).slice(0, 300)}`,
        );
      return parsed.data;
    },
    close: () => client.close(),
  };
}
